"""Building blocks shared by the single-process and FSDP fine-tuning recipes for any Hugging
Face causal LM: their common options, and loading a model folder with the tokenizer of the
shards. The step, the loss and the model-folder writer are those of every recipe
(:mod:`apollo_restore.train.step`, :mod:`apollo_restore.train.writer`); the folders they write
load in ``transformers``, vLLM and :class:`~apollo_restore.restoration.members.neural.NeuralMember` (character
tokenizer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import torch

from apollo_restore.errors import Errors
from apollo_restore.fim.hf_format import HfFim
from apollo_restore.scale.shards import TOKENIZER_DIR, read_manifest
from apollo_restore.schema.training import BATCH, FLAG, PATH, SEED, RecipeConfig

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
#: The dtypes a config may name.
DTYPE_NAMES = tuple(DTYPES)


class HfRecipeConfig(RecipeConfig):
    """Options of a fine-tuning run of a Hugging Face causal LM on FIM shards: those of
    :class:`~apollo_restore.schema.training.RecipeConfig` (``batch_size`` 2, ``seed`` 0 here) and

    Attributes:
        model: local Hugging Face model folder to start from (weights, ``config.json``).
        shards: training shard folder (:func:`~apollo_restore.scale.shards.export_shards`);
            its tokenizer is the run's tokenizer.
        activation_checkpointing: recompute each layer's activations in backward (less memory,
            ~30% slower).
    """

    command: ClassVar[str] = "finetune"

    model: PATH
    shards: PATH
    batch_size: BATCH = 2
    seed: SEED = 0
    activation_checkpointing: FLAG = False


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
        raise FileNotFoundError(Errors.E514.format(folder=folder, file="config.json"))
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
