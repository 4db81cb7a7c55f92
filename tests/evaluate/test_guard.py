"""The regression guard (``benchmarks/guard.py``): its verdict, and (slow) the shipped restorer on
its fixed validation sample within one gap's worth of the figures recorded in ``benchmarks/guard.json``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[2] / "benchmarks" / "guard.py"


def _guard():
    spec = importlib.util.spec_from_file_location("guard", GUARD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDED = {"ddb": {"gaps": 60, "w_top1": 0.3, "w_top20": 0.4}, "literary": {"gaps": 40, "w_top1": 0.2, "w_top20": 0.3}}


def test_a_drop_of_one_gaps_worth_passes_and_more_fails():
    drops = _guard().drops
    one_gap = {"ddb": {"gaps": 60, "w_top1": 0.3 - 1 / 60}, "literary": {"gaps": 40, "w_top1": 0.2}}
    assert drops(RECORDED, one_gap) == []
    two_gaps = {"ddb": {"gaps": 60, "w_top1": 0.3 - 2 / 60}, "literary": {"gaps": 40, "w_top1": 0.25}}
    assert [line.split(":")[0] for line in drops(RECORDED, two_gaps)] == ["ddb"]
    assert drops(RECORDED, {"ddb": RECORDED["ddb"]}) == ["literary: not measured (recorded W.Top-1 0.200)"]


def test_the_record_covers_every_source_of_the_sample():
    guard = _guard()
    sources = {json.loads(line)["source"] for line in guard.GAPS.read_text(encoding="utf-8").splitlines()}
    record = json.loads(guard.RECORD.read_text(encoding="utf-8"))
    assert set(record["sources"]) == sources == {"ddb", "inscription", "literary"}


@pytest.mark.slow
def test_the_shipped_restorer_holds_its_recorded_accuracy():
    guard = _guard()
    recorded = json.loads(guard.RECORD.read_text(encoding="utf-8"))["sources"]
    assert guard.drops(recorded, guard.measure()) == []
