"""The metrics log: rows past the step a run starts from are dropped, so no step repeats."""

from __future__ import annotations

import json

import pytest
import torch

from apollo_restore.train.metrics import MetricsLog, logs_at, train_row
from apollo_restore.train.step import StepResult


def _steps(path) -> list[int]:
    return [json.loads(line)["step"] for line in path.read_text().splitlines()]


def test_metrics_log_resumed_run_drops_rows_past_its_checkpoint(tmp_path):
    path = tmp_path / "metrics.jsonl"
    log = MetricsLog(path, 0)
    for step in range(1, 8):
        log.write({"step": step, "loss": 1.0})
    log.write({"step": 7, "val_loss": 2.0})
    resumed = MetricsLog(path, 5)  # the checkpoint was at step 5; steps 6 and 7 run again
    assert _steps(path) == [1, 2, 3, 4, 5]
    for step in (6, 7):
        resumed.write({"step": step, "loss": 0.5})
    assert _steps(path) == [1, 2, 3, 4, 5, 6, 7]
    MetricsLog(path, 0)  # a fresh run in the same folder starts a fresh log
    assert path.read_text() == ""


@pytest.mark.parametrize(
    ("step", "last", "logged"), [(1, False, True), (10, False, True), (11, False, False), (11, True, True)]
)
def test_metrics_first_every_nth_and_last_step_are_logged(step, last, logged):
    assert logs_at(step, 10, last) is logged


def test_metrics_train_row_counts_tokens_of_all_ranks():
    result = StepResult(torch.tensor(1.23456), torch.tensor(0.5), tokens=100, rows=2)
    row = train_row({"step": 3, "tokens": 600, "seconds": 1.234}, result, 1.23456, 1e-3, 0.5, world_size=2)
    assert row == {
        "step": 3,
        "loss": 1.2346,
        "lr": 1e-3,
        "grad_norm": 0.5,
        "tokens": 600,
        "tokens_per_s": 400.0,
        "seconds": 1.23,
    }
