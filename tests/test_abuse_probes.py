"""The quick reliability probes of ``benchmarks/abuse.py`` (issue 24) run in CI: model folders
verified on load, ``serve`` options bounded, ``/api/parallels`` checking pins as
``/api/restore`` does, admission by cost, the web hardening the audit found holding, the
durable ``predict`` job, the input layer and bounded options of the other commands. The slow
ones (a killed ``predict``, invisible characters, ``/dev/zero``, thousands of threads) run with
``python benchmarks/abuse.py``.

    python -m pytest -q tests/test_abuse_probes.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "abuse.py"
_spec = importlib.util.spec_from_file_location("abuse", SCRIPT)
abuse = importlib.util.module_from_spec(_spec)
sys.modules["abuse"] = abuse  # its dataclasses look their module up
_spec.loader.exec_module(abuse)
CI_PROBES = [p for p in abuse.PROBES if p.fast]


def test_every_probe_has_a_unique_name_and_says_what_it_expects():
    names = [p.name for p in abuse.PROBES]
    assert len(names) == len(set(names))
    assert all(p.tried and p.expected for p in abuse.PROBES)
    assert {p.part for p in CI_PROBES} == {"model", "serve", "web", "predict", "input", "options"}


@pytest.mark.parametrize("probe", CI_PROBES, ids=[p.name for p in CI_PROBES])
def test_probe(probe):
    passed, actual, _ = abuse.run_probe(probe)
    assert passed, f"{probe.tried}: expected {probe.expected}, got {actual}"


def test_a_probe_that_crashes_fails():
    def crash(workdir):
        raise RuntimeError("boom")

    probe = abuse.Probe("crash", "web", "nothing", "nothing", crash)
    assert abuse.run_probe(probe)[:2] == (False, "RuntimeError: boom")
