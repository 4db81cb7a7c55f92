"""Single-process FIM fine-tuning of any Hugging Face causal LM: full or LoRA (one GPU or CPU).

    apollo-restore finetune --model /models/Mistral-Small-24B-Base-2503 \\
        --shards data/shards/mistral --out runs/lora lora=true steps=2000 bf16=true

Options are :class:`FinetuneConfig` fields, given as ``key=value`` (or in ``--config FILE``).
Recipe: the shards' FIM rows (loss on middle + ``[EOS]``), the shared optimiser step
(:func:`~apollo_restore.train.step.train_step`: AdamW (0.9, 0.95), ε 1e-8, weight decay 0.1 on
matrices, global-norm clipping at 1.0, gradient accumulation, optional bf16 autocast), linear
warmup then cosine (:func:`~apollo_restore.train.schedule.lr_at`), optional activation
checkpointing. With ``lora=true`` the base weights are frozen (loaded in bf16 when
``bf16=true``) and ``peft`` adapters (fp32) train on every attention and MLP projection; when
the tokenizer needed new FIM control tokens (not Mistral's), the embeddings and head train too.
At the end the adapter is saved in ``out/adapter`` and merged into a full model folder
``out/model`` (``config.json``, ``model.safetensors``, tokenizer, ``apollo_restore.json``:
:func:`~apollo_restore.train.writer.save_model_folder`).

This path does not resume a killed run (it keeps no optimiser checkpoint); for long runs use
:mod:`apollo_restore.scale.train_fsdp`, which also runs as one process
(``torchrun --nproc_per_node 1``) and resumes from sharded checkpoints.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import torch
from pydantic import Field
from tqdm.auto import tqdm

from apollo_restore.fim.layout import layout_named
from apollo_restore.scale.hf_model import (
    HfRecipeConfig,
    enable_activation_checkpointing,
    load_causal_lm,
    shard_tokenizer,
)
from apollo_restore.scale.shards import ShardLoader, ShardReader
from apollo_restore.schema.training import DEVICES, LR, MIN_LR, PATH, STEPS, WARMUP
from apollo_restore.train.metrics import METRICS_FILE, MetricsLog, logs_at, train_row
from apollo_restore.train.recipe import resolve_device
from apollo_restore.train.schedule import lr_at
from apollo_restore.train.step import make_optimizer, train_step
from apollo_restore.train.writer import save_model_folder

log = logging.getLogger(__name__)

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class FinetuneConfig(HfRecipeConfig):
    """Options of a single-process fine-tuning run: those of
    :class:`~apollo_restore.scale.hf_model.HfRecipeConfig` (``out``, ``steps``, ``lr``,
    ``min_lr`` and ``warmup`` defaults re-stated here) and

    Attributes:
        lora: train LoRA adapters instead of every weight (with ``bf16`` the frozen base is
            also stored in bf16).
        lora_r, lora_alpha, lora_dropout, lora_targets: the adapters.
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        merge: merge LoRA adapters into the saved model folder.
    """

    command: ClassVar[str] = "finetune"

    out: PATH = "runs/finetune"
    steps: STEPS = 1000
    lr: LR = 1e-4
    min_lr: MIN_LR = 1e-6
    warmup: WARMUP = 100
    lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_targets: list[str] = Field(default_factory=lambda: list(LORA_TARGETS))
    device: Literal[DEVICES] = Field("auto", description='"auto", "cpu" or "cuda"')
    merge: bool = True


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
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    device = resolve_device(cfg.device)
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
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    loader = ShardLoader(
        ShardReader(Path(cfg.shards), batch_size=cfg.batch_size, epochs=None), num_workers=cfg.num_workers
    )
    batches = iter(loader)

    trainer: dict[str, Any] = {"step": 0, "tokens": 0, "seconds": 0.0, "losses": [], "trainable": trainable}
    metrics = MetricsLog(out / METRICS_FILE, trainer["step"])
    bar = tqdm(total=cfg.steps, desc="finetune", unit="step", disable=not progress)
    while trainer["step"] < cfg.steps:
        started = time.perf_counter()
        lr = lr_at(trainer["step"], cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        result = train_step(
            model, optimizer, batches, cfg, lr=lr, device=device, pad_id=fim.pad_id, step=trainer["step"]
        )
        elapsed = time.perf_counter() - started
        loss = result.loss.item()
        trainer["step"] += 1
        trainer["tokens"] += result.tokens
        trainer["seconds"] += elapsed
        trainer["losses"].append(loss)
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.1e}")
        if logs_at(trainer["step"], cfg.log_every, trainer["step"] == cfg.steps):
            metrics.write(train_row(trainer, result, loss, lr, elapsed))
    bar.close()

    meta = {
        "training": {
            "recipe": "apollo_restore scale.finetune.v1",
            "step": trainer["step"],
            "tokens": trainer["tokens"],
            "config": cfg.model_dump(),
            "shards": {k: manifest[k] for k in ("seed", "gap_sampler", "tokenizer")},
        }
    }
    if cfg.lora:
        model.save_pretrained(str(out / "adapter"))
        if cfg.merge:
            model = model.merge_and_unload()
    if not cfg.lora or cfg.merge:
        model.config.use_cache = True
        layout = layout_named(manifest["fim_format"])
        save_model_folder(model.to("cpu").eval(), tokenizer.save_pretrained, out / "model", layout, meta)
        trainer["model_dir"] = str(out / "model")
    return trainer
