"""The one writer of model folders: every recipe's ``best/``, ``model/`` and consolidated output.

A *model folder* (:mod:`apollo_restore.model.checkpoint`) is a Hugging Face folder plus
``apollo_restore.json`` naming the normaliser and the FIM layout the weights were trained in.
It is written into ``folder.tmp`` and renamed over ``folder`` (the old one moved to
``folder.old`` for the moment between the two renames), so a run killed at any point leaves
the old folder or the new one, never a torn one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.fim.layout import FimLayout
from apollo_restore.model.checkpoint import quiet_transformers, swap_in
from apollo_restore.model.folder import META_FILE


def write_model_folder(folder: Path, layout: FimLayout, meta: dict[str, Any], fill: Callable[[Path], Any]) -> Path:
    """Atomically write the model folder ``folder``.

    Args:
        layout: the FIM layout the weights were trained in; recorded as ``fim_format``.
        meta: further fields of ``apollo_restore.json`` (training record, config, …).
        fill: writes ``config.json``, the weights and the tokenizer files into the (empty)
            temporary folder it is given.

    Returns:
        ``folder``.

    Raises:
        ValueError: ``meta`` names another FIM layout than ``layout``.
    """
    if meta.get("fim_format", layout.name) != layout.name:
        raise ValueError(f"meta names fim_format {meta['fim_format']!r}, the weights were trained in {layout.name!r}")
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    fill(tmp)
    record = {"normaliser": NORMALISER, "fim_format": layout.name, **meta}
    (tmp / META_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=1, default=str))
    swap_in(tmp, folder)
    return folder


def save_model_folder(
    model: torch.nn.Module,
    save_tokenizer: Callable[[Path], Any],
    folder: Path,
    layout: FimLayout,
    meta: dict[str, Any],
) -> Path:
    """Atomically write ``model`` (a ``transformers`` model: config + safetensors) as a model
    folder; ``save_tokenizer(tmp)`` writes the tokenizer files (``CharTokenizer.save`` or a
    Hugging Face tokenizer's ``save_pretrained``). See :func:`write_model_folder`."""

    def fill(tmp: Path) -> None:
        quiet_transformers()
        model.save_pretrained(str(tmp), safe_serialization=True)
        save_tokenizer(tmp)

    return write_model_folder(folder, layout, meta, fill)
