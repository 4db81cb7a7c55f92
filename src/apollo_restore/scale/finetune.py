"""Single-process FIM fine-tuning of any Hugging Face causal LM: full or LoRA (one GPU or CPU).

    apollo-restore finetune --model /models/Mistral-Small-24B-Base-2503 \\
        --shards data/shards/mistral --out runs/lora lora=true steps=2000 bf16=true

Options are :class:`FinetuneConfig` fields, given as ``key=value`` (or in ``--config FILE``).
Recipe: the shards' FIM rows (loss on middle + ``[EOS]``), AdamW (0.9, 0.95), ε 1e-8, weight
decay 0.1 on matrices, linear warmup then cosine (:func:`~apollo_restore.train.schedule.lr_at`),
global-norm clipping at 1.0, optional bf16 autocast and activation checkpointing. With
``lora=true`` the base weights are frozen (loaded in bf16 when ``bf16=true``) and ``peft``
adapters (fp32) train on every attention and MLP projection; when the tokenizer needed new FIM
control tokens (not Mistral's), the embeddings and head train too. At the end the adapter is
saved in ``out/adapter`` and merged into a full model folder ``out/model`` (``config.json``,
``model.safetensors``, tokenizer, ``apollo_restore.json``).

This path does not resume a killed run (it keeps no optimiser checkpoint); for long runs use
:mod:`apollo_restore.scale.train_fsdp`, which also runs as one process
(``torchrun --nproc_per_node 1``) and resumes from sharded checkpoints.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from apollo_restore.config import from_mapping
from apollo_restore.scale.hf_model import (
    enable_activation_checkpointing,
    fim_loss,
    load_causal_lm,
    param_groups,
    save_hf_folder,
    shard_tokenizer,
)
from apollo_restore.scale.shards import ShardLoader, ShardReader
from apollo_restore.train.schedule import lr_at

log = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


@dataclass
class FinetuneConfig:
    """Options of a single-process fine-tuning run.

    Attributes:
        model: local Hugging Face model folder.
        shards: shard folder from :func:`~apollo_restore.scale.shards.export_shards`.
        out: run folder (``metrics.jsonl``, ``adapter/``, ``model/``).
        lora: train LoRA adapters instead of every weight.
        lora_r, lora_alpha, lora_dropout, lora_targets: the adapters.
        steps, batch_size, grad_accum: optimiser steps, rows per micro-step, micro-steps per step.
        lr, min_lr, warmup: schedule.
        bf16: bf16 compute (autocast); with LoRA the frozen base is also stored in bf16.
        activation_checkpointing: recompute activations in backward (less memory, ~30% slower).
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        merge: merge LoRA adapters into the saved model folder.
    """

    model: str = ""
    shards: str = ""
    out: str = "runs/finetune"
    lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_targets: list[str] = field(default_factory=lambda: list(LORA_TARGETS))
    steps: int = 1000
    batch_size: int = 2
    grad_accum: int = 1
    lr: float = 1e-4
    min_lr: float = 1e-6
    warmup: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    bf16: bool = True
    activation_checkpointing: bool = False
    device: str = "auto"
    log_every: int = 10
    num_workers: int = 0
    seed: int = 0
    threads: int = 0
    merge: bool = True

    def __post_init__(self) -> None:
        if not self.model or not self.shards:
            raise ValueError("model and shards are required")
        if self.steps < 1 or self.batch_size < 1 or self.grad_accum < 1 or not 0 <= self.min_lr <= self.lr:
            raise ValueError("need steps, batch_size, grad_accum ≥ 1 and 0 ≤ min_lr ≤ lr")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FinetuneConfig:
        """Build from a mapping; unknown keys raise ``ValueError`` naming them."""
        return from_mapping(cls, values)


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _add_lora(model: torch.nn.Module, cfg: FinetuneConfig, train_embeddings: bool) -> torch.nn.Module:
    from peft import LoraConfig, get_peft_model

    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [t for t in cfg.lora_targets if t in present]
    if not targets:
        raise ValueError(f"none of the LoRA targets {cfg.lora_targets} is a module of {type(model).__name__}")
    extra = None
    if train_embeddings:
        names = {m: n for n, m in model.named_modules()}
        extra = [
            names[model.get_input_embeddings()].rsplit(".", 1)[-1],
            names[model.get_output_embeddings()].rsplit(".", 1)[-1],
        ]
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=targets,
        modules_to_save=extra,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


def finetune(cfg: FinetuneConfig, progress: bool = True) -> dict[str, Any]:
    """Run the recipe (module docstring).

    Returns:
        ``{"step", "tokens", "seconds", "losses", "trainable", "model_dir"}``; ``losses`` holds
        every step's training loss.
    """
    from tqdm.auto import tqdm

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    device = _device(cfg.device)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)

    tokenizer, fim, manifest = shard_tokenizer(Path(cfg.shards))
    base_dtype = torch.bfloat16 if (cfg.lora and cfg.bf16) else torch.float32
    model = load_causal_lm(cfg.model, tokenizer, base_dtype)
    model.config.use_cache = False
    if cfg.activation_checkpointing:
        enable_activation_checkpointing(model)
    if cfg.lora:
        model = _add_lora(model, cfg, train_embeddings=bool(manifest["tokenizer"].get("added")))
    model.to(device).train()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    log.info("trainable parameters: %.2fM of %.2fM", trainable / 1e6, sum(p.numel() for p in model.parameters()) / 1e6)
    optimizer = torch.optim.AdamW(param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)
    loader = ShardLoader(
        ShardReader(Path(cfg.shards), batch_size=cfg.batch_size, epochs=None), num_workers=cfg.num_workers
    )
    batches = iter(loader)

    trainer: dict[str, Any] = {"step": 0, "tokens": 0, "seconds": 0.0, "losses": [], "trainable": trainable}
    metrics = out / METRICS_FILE
    bar = tqdm(total=cfg.steps, desc="finetune", unit="step", disable=not progress)
    while trainer["step"] < cfg.steps:
        started = time.perf_counter()
        lr = lr_at(trainer["step"], cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        step_loss = 0.0
        for _ in range(cfg.grad_accum):
            ids, labels = next(batches)
            ids, labels = ids.to(device), labels.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
                loss, _ = fim_loss(model, ids, labels)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss is {loss.item()} at step {trainer['step']}")
            (loss / cfg.grad_accum).backward()
            step_loss += loss.item() / cfg.grad_accum
            trainer["tokens"] += int((ids != fim.pad_id).sum())
        grad_norm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        trainer["step"] += 1
        trainer["seconds"] += time.perf_counter() - started
        trainer["losses"].append(step_loss)
        bar.update(1)
        bar.set_postfix(loss=f"{step_loss:.3f}", lr=f"{lr:.1e}")
        if trainer["step"] % cfg.log_every == 0 or trainer["step"] == cfg.steps:
            with metrics.open("a") as fh:
                fh.write(
                    json.dumps(
                        {
                            "step": trainer["step"],
                            "loss": round(step_loss, 4),
                            "lr": lr,
                            "grad_norm": round(float(grad_norm), 4),
                            "tokens": trainer["tokens"],
                            "seconds": round(trainer["seconds"], 2),
                        }
                    )
                    + "\n"
                )
    bar.close()

    meta = {
        "training": {
            "recipe": "apollo_restore scale.finetune.v1",
            "step": trainer["step"],
            "tokens": trainer["tokens"],
            "config": asdict(cfg),
            "shards": {k: manifest[k] for k in ("seed", "gap_sampler", "tokenizer")},
        }
    }
    if cfg.lora:
        model.save_pretrained(str(out / "adapter"))
        if cfg.merge:
            model = model.merge_and_unload()
    if not cfg.lora or cfg.merge:
        model.config.use_cache = True
        save_hf_folder(model.to("cpu").eval(), tokenizer, out / "model", meta)
        trainer["model_dir"] = str(out / "model")
    return trainer
