"""The metrics log of a training run: ``metrics.jsonl``, one JSON object a line, each with the
``"step"`` it was written at (training rows, validation rows), shared by the three recipes.

A run that starts at step ``s`` (a resumed one, or a fresh one at 0) first drops the rows past
``s``: they were written after the checkpoint it starts from and will be written again, so the
log never holds a step twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apollo_restore.train.step import StepResult

METRICS_FILE = "metrics.jsonl"


class MetricsLog:
    """Append-only JSONL rows in ``path``, cut back to ``start_step`` when opened."""

    def __init__(self, path: Path, start_step: int):
        self.path = Path(path)
        if self.path.exists():
            rows = [line for line in self.path.read_text().splitlines() if line.strip()]
            kept = [line for line in rows if json.loads(line).get("step", 0) <= start_step]
            if len(kept) < len(rows):
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(line + "\n" for line in kept))
                tmp.replace(self.path)

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line."""
        with self.path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


def logs_at(step: int, log_every: int, last: bool) -> bool:
    """Whether step ``step`` (1-based, counted after it ran) gets a training row: the first,
    every ``log_every``-th, and the ``last`` one of the run."""
    return step == 1 or step % log_every == 0 or last


def train_row(
    trainer: dict[str, Any], result: StepResult, loss: float, lr: float, seconds: float, world_size: int = 1
) -> dict[str, Any]:
    """The training row of the step that just ran.

    Args:
        trainer: the run's record after the step: ``step``, ``tokens`` (non-padding, all
            ranks, so far) and ``seconds`` (training time so far).
        result: what the step did on this rank.
        loss: its training loss (nats per labelled token; the mean over ranks under FSDP).
        lr: its learning rate.
        seconds: how long it took.
        world_size: ranks that each ran a step like it.

    Returns:
        ``{"step", "loss", "lr", "grad_norm" (before clipping), "tokens", "tokens_per_s" (this
        step's), "seconds"}``.
    """
    return {
        "step": trainer["step"],
        "loss": round(loss, 4),
        "lr": lr,
        "grad_norm": round(float(result.grad_norm), 4),
        "tokens": trainer["tokens"],
        "tokens_per_s": round(result.tokens * world_size / seconds, 1),
        "seconds": round(trainer["seconds"], 2),
    }
