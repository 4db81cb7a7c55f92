"""Building blocks shared by the single-process and FSDP fine-tuning recipes for any Hugging
Face causal LM: load a model folder with the tokenizer of the shards, the FIM loss, AdamW
parameter groups, and writing a model folder that ``transformers``, vLLM and
:class:`~apollo_restore.restore.engine.Restorer` (character tokenizer) can load.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.fim.hf_format import HfFim
from apollo_restore.fim.layout import IGNORE_INDEX, SPM_V1
from apollo_restore.model.checkpoint import META_FILE
from apollo_restore.scale.shards import TOKENIZER_DIR, read_manifest

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def shard_tokenizer(shards: Path) -> tuple[Any, HfFim, dict[str, Any]]:
    """The tokenizer saved with a shard folder, its FIM encoder and the manifest.

    Raises:
        ValueError: the tokenizer's control-token ids differ from those the shards were
            written with.
    """
    from transformers import AutoTokenizer

    manifest = read_manifest(shards)
    tokenizer = AutoTokenizer.from_pretrained(
        str(Path(shards) / manifest["tokenizer"].get("dir", TOKENIZER_DIR)), local_files_only=True
    )
    fim = HfFim(tokenizer, add_missing=False)
    recorded = manifest["tokenizer"]
    for key in ("prefix_id", "suffix_id", "middle_id", "eos_id", "bos_id"):
        if getattr(fim, key) != recorded.get(key):
            raise ValueError(
                f"{shards}: tokenizer {key} is {getattr(fim, key)}, the shards were written with {recorded.get(key)}"
            )
    return tokenizer, fim, manifest


def load_causal_lm(folder: str | Path, tokenizer, dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    """A causal LM from a local folder (no download), its embeddings grown to the tokenizer
    when FIM control tokens were added to it.

    Raises:
        FileNotFoundError: the folder has no ``config.json``.
    """
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"no model folder at {folder} (config.json missing)")
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype, local_files_only=True)
    if model.get_input_embeddings().num_embeddings < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
    return model


def enable_activation_checkpointing(model: torch.nn.Module) -> None:
    """Non-reentrant activation checkpointing of every decoder layer (transformers ≥ 5 name,
    falling back to the older ``gradient_checkpointing_enable``)."""
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def fim_loss(model: torch.nn.Module, ids: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over labelled positions and their number.

    Args:
        ids: ``(B, T)`` token ids.
        labels: ``(B, T)``, already shifted: ``labels[b, t]`` is the target of the
            prediction at ``t``; :data:`IGNORE_INDEX` elsewhere. (So the labels are *not*
            passed to the model, which would shift them again.)
    """
    logits = model(input_ids=ids).logits  # (B, T, V)
    loss = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    return loss, int((labels != IGNORE_INDEX).sum())


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Trainable parameters in two AdamW groups: matrices decay, vectors (norms, biases) do not."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    """``apollo_restore.json`` naming the normaliser and FIM layout (read by ``load_model``)."""
    record = {"normaliser": NORMALISER, "fim_format": SPM_V1.name, **meta}
    (Path(folder) / META_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=1, default=str))


def save_hf_folder(model: torch.nn.Module, tokenizer, folder: Path, meta: dict[str, Any]) -> None:
    """Atomically write a model folder: ``config.json``, ``model.safetensors``, tokenizer
    files and ``apollo_restore.json`` (written to ``folder.tmp``, then renamed)."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tokenizer.save_pretrained(str(tmp))
    write_meta(tmp, meta)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
