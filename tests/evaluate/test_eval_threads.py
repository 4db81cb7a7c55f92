"""``evaluate`` chooses its torch threads as ``predict`` and ``restore`` do, before the model
loads: the cores idle now (at most 2) unless ``--threads`` says, 1 per process with ``--workers``.
Torch's own default (every core) spun on a busy machine: 40 gaps of the shipped model took
3–7× longer, which an earlier session took for the cost of ``calibration.json`` (BENCHMARKS.md,
"Calibration costs no time"). No model runs here: the load is stubbed to note the threads."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.restoration import load, threads

GAP = {"id": "g0", "source": "ddb", "doc": "d", "prefix": "ετους δευτερου και ", "suffix": " καισαρος", "target": "αβγ",
       "hint": 3, "kind": "synthetic"}  # fmt: skip


@pytest.fixture
def torch_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize(
    ("options", "before", "idle", "want"),
    [
        ([], 2, 1, 1),  # a busy machine: one thread, whatever torch had
        ([], 1, 2, 2),  # an idle one: both cores
        (["--threads", "1"], 2, 2, 1),  # asked: as asked
        (["--workers", "2"], 2, 2, 1),  # one thread in each worker
    ],
)
def test_evaluate_sets_threads_before_the_model_loads(
    tmp_path, monkeypatch, torch_threads, options, before, idle, want
) -> None:
    seen = []

    def stub(*args, **kwargs):
        seen.append(torch.get_num_threads())
        raise FileNotFoundError("stub: no model loaded")

    torch.set_num_threads(before)
    monkeypatch.setattr(threads, "idle_cores", lambda limit=threads.DEFAULT_LIMIT: idle)
    monkeypatch.setattr(load, "load_restorer", stub)
    gaps = tmp_path / "gaps.jsonl"
    gaps.write_text(json.dumps(GAP, ensure_ascii=False) + "\n")
    done = CliRunner().invoke(app, ["evaluate", "--gaps", str(gaps), "--out", str(tmp_path / "r"), *options])
    assert done.exit_code == 2 and "stub: no model loaded" in done.output, done.output
    assert seen == [want]
