"""The metrics log: rows past the step a run starts from are dropped, so no step repeats; model
FLOPs utilisation from the device's peak (none on the CPU)."""

from __future__ import annotations

import json

import pytest
import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.train.metrics import (
    MetricsLog,
    flops_per_token,
    logs_at,
    mfu,
    model_flops_per_token,
    peak_bf16_flops,
    peak_for_name,
    train_row,
)
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


@pytest.mark.parametrize(
    ("name", "peak"),
    [
        ("NVIDIA H100 80GB HBM3", 989e12),
        ("NVIDIA H100 PCIe", 756e12),
        ("NVIDIA H200", 989e12),
        ("NVIDIA A100-SXM4-80GB", 312e12),
        ("NVIDIA A100 80GB PCIe", 312e12),
        ("NVIDIA H200 NVL", None),  # lower-clocked: not in the table rather than a wrong number
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA GeForce RTX 4090", None),
    ],
)
def test_metrics_peak_by_device_name_or_none(name, peak):
    assert peak_for_name(name) == peak


def test_metrics_no_peak_on_the_cpu():
    assert peak_bf16_flops("cpu") is None and peak_bf16_flops(torch.device("cpu")) is None


def test_metrics_flops_per_token_matches_the_issue_figures():
    # the issue's "~13 % of the H100's peak by 6·N·tokens" for medium at 2.1 M tokens/s
    six_n = 6 * 10_346_496
    assert mfu(2.1e6, six_n, 989e12) == pytest.approx(0.132, abs=0.001)
    # the attention term: 12 · layers · hidden · block per token, on top of 6·N
    assert flops_per_token(10_346_496, 6, 384, 1024) == six_n + 12 * 6 * 384 * 1024
    assert mfu(1.0, 1.0, None) is None


def test_metrics_model_flops_per_token_reads_the_model():
    tok = CharTokenizer()
    model = build_model("tiny", tok)
    n = sum(p.numel() for p in model.parameters())
    assert model_flops_per_token(model, 128) == 6 * n + 12 * 2 * 64 * 128  # tiny: 2 layers, width 64


def test_metrics_train_row_mfu_counts_every_position_and_only_with_a_peak():
    result = StepResult(torch.tensor(1.0), torch.tensor(0.5), tokens=1500, rows=2)  # padding in 548 positions
    trainer = {"step": 1, "tokens": 1500, "seconds": 0.5}
    row = train_row(trainer, result, 1.0, 1e-3, 0.5, utilisation=(1024, 1e9, 1e13))
    assert row["tokens_per_s"] == 3000.0 and row["mfu"] == pytest.approx(2 * 1024 / 0.5 * 1e9 / 1e13, abs=1e-4)
    assert "mfu" not in train_row(trainer, result, 1.0, 1e-3, 0.5, utilisation=(1024, 1e9, None))
    assert "mfu" not in train_row(trainer, result, 1.0, 1e-3, 0.5)


def test_metrics_training_rows_carry_mfu_only_with_a_peak(tiny_prepared, tmp_path, monkeypatch):
    import apollo_restore.train.loop as loop

    def rows(out) -> list[dict]:
        cfg = loop.TrainConfig(
            prepared=str(tiny_prepared), out=str(out), size="tiny", steps=2, batch_size=2, block_size=128,
            eval_every=100, eval_rows=2, log_every=1, threads=1, warmup=1, device="cpu", bf16=False,
        )  # fmt: skip
        loop.train(cfg, progress=False)
        return [r for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "loss" in r]

    assert all("mfu" not in r for r in rows(tmp_path / "cpu"))  # the CPU: no peak, no number
    monkeypatch.setattr(loop, "peak_bf16_flops", lambda device: 1e12)  # as if a GPU of 1 TFLOP/s
    logged = rows(tmp_path / "peak")
    assert len(logged) == 2 and all(0 < r["mfu"] < 1 for r in logged)
