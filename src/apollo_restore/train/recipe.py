"""The options every training recipe shares, and the device a run names.

:class:`~apollo_restore.schema.training.RecipeConfig` (declared in the schema, with its defaults
and bounds) holds them once; the three recipes extend it
(:class:`~apollo_restore.schema.training.TrainConfig`,
:class:`~apollo_restore.scale.finetune.FinetuneConfig`,
:class:`~apollo_restore.scale.train_fsdp.FsdpConfig`), each adding its own fields and
re-stating only the defaults it changes. Its defaults are those of the single-device recipe.
"""

from __future__ import annotations

import torch

from apollo_restore.schema.training import DEVICES, RecipeConfig


def resolve_device(name: str) -> torch.device:
    """The device a ``device`` option names: ``"auto"`` is CUDA when available, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


__all__ = ["DEVICES", "RecipeConfig", "resolve_device"]
