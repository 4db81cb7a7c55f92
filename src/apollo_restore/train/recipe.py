"""The options every training recipe shares: the optimiser step, its schedule and the run.

:class:`RecipeConfig` holds them once; the three recipes extend it
(:class:`~apollo_restore.train.loop.TrainConfig`,
:class:`~apollo_restore.scale.finetune.FinetuneConfig`,
:class:`~apollo_restore.scale.train_fsdp.FsdpConfig`), each adding its own fields and
re-stating only the defaults it changes. Its defaults are those of the single-device recipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Self

import torch

from apollo_restore.config import from_mapping

DEVICES = ("auto", "cpu", "cuda")


@dataclass
class RecipeConfig:
    """Options of any training run; checked on construction, saved with the run.

    Attributes:
        out: run folder (``metrics.jsonl``, checkpoints, model folders).
        steps: optimiser steps in all (a resumed run continues to this number).
        batch_size: rows per micro-step (per rank); grad_accum: micro-steps per optimiser step.
        lr, min_lr, warmup: peak and final learning rate, linear-warmup steps (then cosine;
            :func:`~apollo_restore.train.schedule.lr_at`).
        weight_decay: AdamW decay of the matrices (vectors never decay).
        grad_clip: the global gradient norm is clipped to this.
        bf16: bf16 autocast of the forward pass (over fp32 weights).
        log_every: steps between training rows of ``metrics.jsonl`` (the first and last step
            always get one).
        num_workers: DataLoader worker processes making batches (0: the training process).
        seed: seeds the model's initialisation and the data order.
        threads: torch intra-op threads (0 = torch's default).
    """

    #: what error messages call an option of this config
    option_name: ClassVar[str] = "training option"

    out: str = "runs/default"
    steps: int = 20000
    batch_size: int = 8
    grad_accum: int = 1
    lr: float = 2e-3
    min_lr: float = 2e-4
    warmup: int = 200
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    bf16: bool = True
    log_every: int = 10
    num_workers: int = 0
    seed: int = 1337
    threads: int = 0

    def __post_init__(self) -> None:
        if min(self.steps, self.batch_size, self.grad_accum, self.log_every) < 1:
            raise ValueError("need steps, batch_size, grad_accum and log_every ≥ 1")
        if not 0 <= self.min_lr <= self.lr:
            raise ValueError(f"need 0 ≤ min_lr ≤ lr, got min_lr={self.min_lr}, lr={self.lr}")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Self:
        """Build from a mapping, each value checked against its field's type.

        Raises:
            ValueError: an unknown key or a value of the wrong type, named.
        """
        return from_mapping(cls, values, cls.option_name)


def check_device(name: str) -> None:
    """Raises ``ValueError`` unless ``name`` is one of :data:`DEVICES`."""
    if name not in DEVICES:
        raise ValueError(f"device must be {', '.join(DEVICES)}, got {name!r}")


def resolve_device(name: str) -> torch.device:
    """The device a ``device`` option names: ``"auto"`` is CUDA when available, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
