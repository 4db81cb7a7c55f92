"""FSDP2 helpers for :mod:`apollo_restore.scale.train_fsdp`: process group, device mesh,
sharding, sharded (DCP) checkpoints, and consolidation into one safetensors model folder.

    apollo-restore consolidate runs/large/checkpoints/latest runs/large/model --dtype bfloat16

Sharding follows torchtune: every decoder layer (``model._no_split_modules``) is its own
``fully_shard`` unit, then the root; with ``shard_size < world_size`` the mesh is 2-D
(``replicate × shard``) and the same call gives HSDP. Mixed precision keeps fp32 master
weights and computes in bf16 (``MixedPrecisionPolicy``), as the paper did.

Checkpoints are ``torch.distributed.checkpoint`` folders ``checkpoints/step-0000500/``: each rank
writes its own shards of the model and optimiser; rank 0 adds ``trainer.json`` (step, data
position, config) and the model's ``config.json`` and tokenizer files, then points
``checkpoints/latest`` at it. A run killed while writing resumes from the previous one.

**Trust.** A DCP checkpoint's ``.metadata`` file is a Python pickle, and
``torch.distributed.checkpoint`` unpickles it on every load (:func:`load_sharded`,
:func:`consolidate`): loading a checkpoint runs whatever code its author put there. Load only
checkpoints your own runs wrote, on storage only you can write to; never one downloaded or
received. To share a model, share the consolidated folder (safetensors + JSON: no code runs
when it is loaded).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

from apollo_restore.fim.layout import SPM_V1
from apollo_restore.train.writer import write_model_folder

log = logging.getLogger(__name__)

CHECKPOINTS_DIR = "checkpoints"
LATEST_FILE = "latest"
TRAINER_FILE = "trainer.json"
MODEL_KEY = "model"
OPTIM_KEY = "optim"


@dataclass(frozen=True)
class DistEnv:
    """This process's place in the job (from torchrun's environment variables)."""

    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def init_distributed() -> DistEnv:
    """Join the process group torchrun set up: NCCL with one GPU per process when CUDA is
    available, else gloo on CPU. Works with a single process too (``torchrun --nproc_per_node 1``)."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device, backend = torch.device("cuda", local_rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    return DistEnv(dist.get_rank(), dist.get_world_size(), local_rank, device)


def build_mesh(env: DistEnv, shard_size: int = 0):
    """A 1-D mesh (FSDP) or, when ``0 < shard_size < world_size``, a 2-D ``(replicate, shard)``
    mesh (HSDP: parameters sharded within groups of ``shard_size``, e.g. one node, and
    replicated across them).

    Raises:
        ValueError: ``world_size`` is not a multiple of ``shard_size``.
    """
    from torch.distributed.device_mesh import init_device_mesh

    if not shard_size or shard_size >= env.world_size:
        return init_device_mesh(env.device.type, (env.world_size,), mesh_dim_names=("shard",))
    if env.world_size % shard_size:
        raise ValueError(f"world size {env.world_size} is not a multiple of shard_size {shard_size}")
    return init_device_mesh(
        env.device.type, (env.world_size // shard_size, shard_size), mesh_dim_names=("replicate", "shard")
    )


def shard_model(model: torch.nn.Module, mesh, bf16: bool, reshard_after_forward: bool = True) -> torch.nn.Module:
    """Apply ``fully_shard`` to each decoder layer, then to the whole model (in place).

    Raises:
        ValueError: the model names no decoder-layer class in ``_no_split_modules``.
    """
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    names = set(getattr(model, "_no_split_modules", None) or [])
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:
        raise ValueError(
            f"{type(model).__name__} names no decoder layer class (_no_split_modules); cannot shard per layer"
        )
    mp = (
        MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else MixedPrecisionPolicy()
    )
    for layer in layers:
        fully_shard(layer, mesh=mesh, mp_policy=mp, reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=reshard_after_forward)
    return model


def latest_checkpoint(run: Path) -> Path | None:
    """The checkpoint ``run/checkpoints/latest`` points at, or ``None``."""
    pointer = Path(run) / CHECKPOINTS_DIR / LATEST_FILE
    if not pointer.exists():
        return None
    folder = pointer.parent / pointer.read_text().strip()
    return folder if (folder / TRAINER_FILE).exists() else None


def save_sharded(
    run: Path,
    step: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    trainer: dict[str, Any],
    env: DistEnv,
    model_config,
    tokenizer,
    keep: int = 2,
) -> Path:
    """Collective: write a DCP checkpoint of model + optimiser for ``step``; rank 0 then writes
    ``trainer.json``, ``config.json`` and the tokenizer, moves ``latest`` and keeps the last
    ``keep`` checkpoints."""
    from torch.distributed.checkpoint.state_dict import get_state_dict

    root = Path(run) / CHECKPOINTS_DIR
    folder = root / f"step-{step:07d}"
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({MODEL_KEY: model_sd, OPTIM_KEY: optim_sd}, checkpoint_id=str(folder))
    if env.is_main:
        model_config.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))
        (folder / TRAINER_FILE).write_text(json.dumps(trainer, indent=1, default=str))
        tmp = root / (LATEST_FILE + ".tmp")
        tmp.write_text(folder.name)
        os.replace(tmp, root / LATEST_FILE)
        for old in sorted(p for p in root.glob("step-*") if p.is_dir())[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    dist.barrier()
    return folder


def load_sharded(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Collective: restore model and optimiser shards from a DCP checkpoint (any world size);
    returns the trainer record.

    The checkpoint must be trusted: its metadata is unpickled (see the module docstring).
    """
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {MODEL_KEY: model_sd, OPTIM_KEY: optim_sd}
    dcp.load(state, checkpoint_id=str(folder))
    set_state_dict(model, optimizer, model_state_dict=state[MODEL_KEY], optim_state_dict=state[OPTIM_KEY])
    return json.loads((Path(folder) / TRAINER_FILE).read_text())


def consolidate(
    checkpoint: Path,
    out: Path,
    dtype: torch.dtype = torch.bfloat16,
    meta: dict[str, Any] | None = None,
    max_shard_bytes: int | None = None,
) -> Path:
    """Turn a sharded checkpoint into one Hugging Face model folder, in one process, no GPU.

    The checkpoint must be trusted: its metadata is unpickled (see the module docstring); the
    folder this writes is safe to share.

    Only the model's tensors are read (the optimiser state is skipped), straight into
    plain CPU tensors of the checkpoint's shapes: no model is built, so memory is the model's
    size in ``dtype``. Writes ``config.json``, ``model.safetensors`` (or, past
    ``max_shard_bytes``, ``model-0000i-of-0000n.safetensors`` + index), the tokenizer files and
    ``apollo_restore.json`` (layout :data:`~apollo_restore.fim.layout.SPM_V1`, that of every
    shard folder), atomically (:func:`~apollo_restore.train.writer.write_model_folder`).

    Args:
        checkpoint: a ``step-*`` folder, or a run's ``checkpoints`` folder / ``latest`` file.
        out: the model folder to write.
        dtype: dtype of the saved weights (the paper served bf16).
        meta: extra fields for ``apollo_restore.json``.

    Returns:
        ``out``.
    """
    from safetensors.torch import save_file
    from torch.distributed.checkpoint import FileSystemReader
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata
    from transformers import AutoConfig, AutoTokenizer

    checkpoint = Path(checkpoint)
    if checkpoint.name == LATEST_FILE or (checkpoint / LATEST_FILE).exists():
        pointer = checkpoint if checkpoint.name == LATEST_FILE else checkpoint / LATEST_FILE
        checkpoint = pointer.parent / pointer.read_text().strip()
    reader = FileSystemReader(str(checkpoint))
    prefix = MODEL_KEY + "."
    state = {
        key: torch.empty(md.size, dtype=md.properties.dtype)
        for key, md in reader.read_metadata().state_dict_metadata.items()
        if key.startswith(prefix) and isinstance(md, TensorStorageMetadata)
    }
    with warnings.catch_warnings():  # "assuming the intent is to load in a single process": it is
        warnings.simplefilter("ignore", UserWarning)
        dcp.load(state, storage_reader=reader, no_dist=True)
    config = AutoConfig.from_pretrained(str(checkpoint), local_files_only=True)
    tensors = {key[len(prefix) :]: value.to(dtype).contiguous() for key, value in state.items()}
    if getattr(config, "tie_word_embeddings", False):
        tensors.pop("lm_head.weight", None)  # as save_pretrained does: the embedding is the head
    config.dtype = dtype
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint), local_files_only=True)
    trainer = json.loads((checkpoint / TRAINER_FILE).read_text())

    def fill(tmp: Path) -> None:
        config.save_pretrained(str(tmp))
        _write_safetensors(tensors, tmp, max_shard_bytes, save_file)
        tokenizer.save_pretrained(str(tmp))

    record = {
        "consolidated_from": str(checkpoint),
        "training": {k: trainer.get(k) for k in ("step", "tokens", "config")},
        **(meta or {}),
    }
    return write_model_folder(Path(out), SPM_V1, record, fill)


def _write_safetensors(tensors: dict[str, torch.Tensor], folder: Path, max_shard_bytes: int | None, save_file) -> None:
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    if not max_shard_bytes or total <= max_shard_bytes:
        save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
        return
    groups: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key in sorted(tensors):
        nbytes = tensors[key].numel() * tensors[key].element_size()
        if groups[-1] and size + nbytes > max_shard_bytes:
            groups.append({})
            size = 0
        groups[-1][key] = tensors[key]
        size += nbytes
    weight_map = {}
    for i, group in enumerate(groups, 1):
        name = f"model-{i:05d}-of-{len(groups):05d}.safetensors"
        save_file(group, str(folder / name), metadata={"format": "pt"})
        weight_map.update({key: name for key in group})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=1))
