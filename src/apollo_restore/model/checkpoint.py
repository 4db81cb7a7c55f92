"""Model folders and training checkpoints: safetensors + JSON only, written atomically.

A *model folder* is a Hugging Face folder (``config.json``, ``model.safetensors``,
``tokenizer.json``) plus ``apollo_restore.json`` naming the normaliser and FIM layout it was
trained with, so ``transformers``/vLLM load it and this package refuses a mismatched one.
A *training checkpoint* is a model folder plus ``optimizer.safetensors`` and ``trainer.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from transformers.utils import logging as hf_logging

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.fim.examples import FIM_FORMAT
from apollo_restore.fim.tokenizer import CharTokenizer

hf_logging.disable_progress_bar()  # no per-file bars when saving or loading small models

META_FILE = "apollo_restore.json"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_FILE = "trainer.json"


def save_model(model: torch.nn.Module, tok: CharTokenizer, folder: Path, meta: dict[str, Any]) -> None:
    """Write a model folder (see module docstring) in place."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    tok.save(folder)
    record = {"normaliser": NORMALISER, "fim_format": FIM_FORMAT, **meta}
    (folder / META_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=1))


def load_model(folder: Path, dtype: torch.dtype = torch.float32):
    """Load a model folder.

    Returns:
        ``(model, tokenizer, meta)`` with the model in eval mode.

    Raises:
        FileNotFoundError: no model folder there.
        ValueError: it was trained with another normaliser or FIM layout.
    """
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"no model folder at {folder} (config.json missing)")
    meta = json.loads((folder / META_FILE).read_text()) if (folder / META_FILE).exists() else {}
    for key, expected in (("normaliser", NORMALISER), ("fim_format", FIM_FORMAT)):
        if meta.get(key, expected) != expected:
            raise ValueError(f"{folder} was trained with {key} {meta[key]!r}; this code uses {expected!r}")
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    model.eval()
    return model, CharTokenizer.load(folder), meta


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    state = optimizer.state_dict()
    tensors = {}
    for idx, entries in state["state"].items():
        for key, value in entries.items():
            tensors[f"{idx}.{key}"] = value if torch.is_tensor(value) else torch.tensor(value)
    return tensors, {"param_groups": state["param_groups"]}


def save_checkpoint(
    folder: Path, model: torch.nn.Module, tok: CharTokenizer, optimizer: torch.optim.Optimizer, trainer: dict[str, Any], meta: dict[str, Any]
) -> None:
    """Atomically replace ``folder`` by a new training checkpoint.

    Written into ``folder.tmp`` first, then renamed over ``folder``: a run killed at any
    moment leaves either the old or the new checkpoint, never a torn one.
    """
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(model, tok, tmp, meta)
    tensors, groups = _optimizer_tensors(optimizer)
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp / OPTIMIZER_FILE))
    (tmp / TRAINER_FILE).write_text(json.dumps({**trainer, **groups}, indent=1))
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def recover_checkpoint(folder: Path) -> Path | None:
    """The usable checkpoint at ``folder`` after a crash: ``folder`` itself, else the
    ``.old`` copy left by a rename interrupted between its two steps, else ``None``."""
    for candidate in (folder, folder.with_name(folder.name + ".old")):
        if (candidate / TRAINER_FILE).exists():
            return candidate
    return None


def load_optimizer_state(folder: Path, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore ``optimizer`` from a checkpoint and return the trainer record."""
    trainer = json.loads((folder / TRAINER_FILE).read_text())
    tensors = load_file(str(folder / OPTIMIZER_FILE))
    state: dict[int, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        idx, key = name.split(".", 1)
        state.setdefault(int(idx), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": trainer["param_groups"]})
    return trainer
