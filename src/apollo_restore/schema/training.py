"""The settings a training run takes, declared with their bounds: what every run checks of its
config before any data is read (:func:`~apollo_restore.train.loop.check_run`, the ``train`` command
and :func:`~apollo_restore.train.loop.train`), and ``train --probe`` of each ``--setting`` too.

    from apollo_restore.schema.training import check_probe_setting
    check_probe_setting(config, "batch_size=100000000")   # SettingError: [E602] ... batch_size ...

Every key of :class:`~apollo_restore.train.loop.TrainConfig` (and of its base,
:class:`~apollo_restore.train.recipe.RecipeConfig`) is declared, each number bounded: the bounds
let a real GPU run through (micro-batches up to 4,096 rows, blocks up to 8,192 tokens, 64 data
workers) and refuse what could only exhaust memory or time before a row of the probe's table
is printed. The config's own checks (a known size, layout, device, compile mode, loss;
``min_lr`` ≤ ``lr``) stay the config's.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import Field

from apollo_restore.errors import Errors
from apollo_restore.schema.base import SchemaError, Settings, check, number, text, whole

#: Most rows of a micro-batch (per device).
MAX_BATCH_ROWS = 4096
#: Most tokens of a row.
MAX_BLOCK = 8192
#: Most steps, rows or seconds a run may count (about 30 years of seconds).
MAX_COUNT = 1_000_000_000
PATH = text(4096, "a path")
NAME = text(100, "a name")
SECONDS = number(0, MAX_COUNT, "seconds", above=True)
SOURCE = Annotated[str, Field(min_length=1, max_length=100)]


class TrainingSettings(Settings):
    """Every option of a training run (``TrainConfig``), bounded."""

    # RecipeConfig
    out: PATH
    steps: whole(1, MAX_COUNT, "optimiser steps in all")
    batch_size: whole(1, MAX_BATCH_ROWS, "rows a micro-step")
    grad_accum: whole(1, 1024, "micro-steps an optimiser step")
    lr: number(0, 1, "the peak learning rate", above=True)
    min_lr: number(0, 1, "the final learning rate")
    warmup: whole(0, MAX_COUNT, "linear warm-up steps")
    weight_decay: number(0, 10, "AdamW decay")
    grad_clip: number(0, 1e6, "the largest global gradient norm")
    bf16: bool
    log_every: whole(1, MAX_COUNT, "steps between metrics rows")
    num_workers: whole(0, 64, "DataLoader worker processes")
    seed: whole(0, 2**32 - 1, "the seed")
    threads: whole(0, 1024, "torch threads; 0: its default")
    # TrainConfig
    prepared: PATH
    size: NAME
    init_from: PATH | None
    block_size: whole(8, MAX_BLOCK, "tokens a row")
    weights: Annotated[dict[SOURCE, number(0, 1000, "a sampling weight")], Field(max_length=100)]
    loss: NAME
    eval_every: whole(1, MAX_COUNT, "steps between validation passes")
    eval_rows: whole(0, 65_536, "validation rows a pass")
    checkpoint_every: number(0, 1e10, "seconds between checkpoints")
    layout: NAME
    device: NAME
    compile: bool
    compile_mode: NAME
    max_seconds: SECONDS | None
    time_limit: SECONDS | None
    val_gaps: PATH | None
    teacher: PATH | None
    distill_weight: number(0, 1, "the distillation's share of the loss")
    distill_temperature: number(0, 100, "the distillation's temperature", above=True)


class SettingError(ValueError):
    """A training setting out of its declared bounds (``E602``), naming where it was given and
    the field.

    Attributes:
        code: ``"E602"``.
        problem: the schema's :class:`~apollo_restore.schema.base.Problem`.
    """

    def __init__(self, where: str, err: SchemaError) -> None:
        p = err.problem
        if p.unknown is not None:  # a key the config has and the schema does not declare
            field, value, expected = f"{p.unknown}", p.value, f"one of {p.known}"
        else:
            field, value, expected = p.field, p.value, p.expected
        super().__init__(Errors.E602.format(where=where, field=field, value=value, expected=expected))
        self.code, self.problem = "E602", p


def check_probe_setting(config: Any, setting: str | None = None) -> TrainingSettings:
    """``config`` (a ``TrainConfig``) as its declared settings, or a refusal naming ``setting``
    (the ``--setting`` it was built from; ``None``: the config itself).

    Raises:
        SettingError: ``E602``, the first field out of its bounds.
    """
    where = f"--setting {setting!r}" if setting is not None else "the config (--config and its key=value options)"
    try:
        return check(TrainingSettings, dataclasses.asdict(config))
    except SchemaError as err:
        raise SettingError(where, err) from None


__all__ = ["MAX_BATCH_ROWS", "MAX_BLOCK", "SettingError", "TrainingSettings", "check_probe_setting"]
