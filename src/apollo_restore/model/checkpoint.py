"""Model folders and training checkpoints: safetensors + JSON only, written atomically.

A *model folder* is a Hugging Face folder (``config.json``, ``model.safetensors``,
``tokenizer.json``) plus ``apollo_restore.json`` naming the normaliser and FIM layout it was
trained with (``fim_format``), so ``transformers``/vLLM load it, this package refuses a
mismatched one, and every user of the model asks :func:`~apollo_restore.model.folder.layout_of` how to lay out a gap.
A *training checkpoint* is a model folder plus ``optimizer.safetensors`` and ``trainer.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.fim.layout import DEFAULT_LAYOUT
from apollo_restore.fim.tokenizer import TOKENIZER_FILE, CharTokenizer
from apollo_restore.model.folder import META_FILE, read_meta
from apollo_restore.model.verify import (
    CONFIG_FILE,
    WEIGHTS_FILE,
    check_finite,
    check_vocabulary,
    check_weights,
    read_json,
)


def quiet_transformers() -> None:
    """No per-file progress bars when saving or loading small models. ``transformers`` is
    imported here, not at module level, so restoring (which reads safetensors directly) never
    imports it."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_FILE = "trainer.json"


def save_model(model: torch.nn.Module, tok: CharTokenizer, folder: Path, meta: dict[str, Any]) -> None:
    """Write a model folder (see module docstring) in place; ``meta["fim_format"]`` names its
    layout (default :data:`~apollo_restore.fim.layout.DEFAULT_LAYOUT`)."""
    folder.mkdir(parents=True, exist_ok=True)
    quiet_transformers()
    model.save_pretrained(str(folder), safe_serialization=True)
    tok.save(folder)
    record = {"normaliser": NORMALISER, "fim_format": DEFAULT_LAYOUT.name, **meta}
    (folder / META_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=1))


def swap_in(tmp: Path, folder: Path) -> None:
    """Rename the finished folder ``tmp`` over ``folder`` (the old one kept as ``folder.old``
    between the two renames): a kill at any moment leaves the old folder or the new one."""
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def load_model(folder: Path, dtype: torch.dtype = torch.float32):
    """Load a model folder.

    Returns:
        ``(model, tokenizer, meta)`` with the model in eval mode.

    Raises:
        FileNotFoundError: no model folder there.
        ModelFolderError: a broken file, or files that do not belong together (``E503``–``E512``),
            a weight that is NaN or infinite (``E518``).
        ValueError: it was trained with another normaliser or FIM layout.
    """
    from transformers import AutoModelForCausalLM

    quiet_transformers()

    folder = Path(folder)
    meta = read_meta(folder)
    config = read_json(folder / CONFIG_FILE)
    check_weights(folder, config, other_architectures=True)
    tok = CharTokenizer.load(folder)
    check_vocabulary(folder / TOKENIZER_FILE, len(tok), config)
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    check_finite(folder / WEIGHTS_FILE, dict(model.state_dict()))
    model.eval()
    return model, tok, meta


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    state = optimizer.state_dict()
    tensors = {}
    for idx, entries in state["state"].items():
        for key, value in entries.items():
            tensors[f"{idx}.{key}"] = value.detach().cpu() if torch.is_tensor(value) else torch.tensor(value)
    return tensors, {"param_groups": state["param_groups"]}


def save_checkpoint(
    folder: Path,
    model: torch.nn.Module,
    tok: CharTokenizer,
    optimizer: torch.optim.Optimizer,
    trainer: dict[str, Any],
    meta: dict[str, Any],
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
    swap_in(tmp, folder)


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
