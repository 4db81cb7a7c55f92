"""Single-device FIM training (CPU or one GPU).

    apollo-restore train --prepared data/prepared --out runs/default --size small --steps 20000

Features: AdamW (0.9, 0.95), weight decay 0.1 on matrices only, linear warmup then cosine to
``min_lr``, gradient clipping, bf16 autocast (on CPU where the hardware has AVX-512 BF16),
validation loss and bits per middle character on a fixed validation stream, JSONL metrics,
atomic checkpoints every ``checkpoint_every`` seconds, resume after any kill, warm restart from a
model folder (``init_from``), and the best model by validation loss exported as a model folder.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from apollo_restore.config import from_mapping
from apollo_restore.data.prepare import load_documents
from apollo_restore.fim.dataset import Corpus, PackedFimStream
from apollo_restore.fim.examples import GAP_SAMPLER, IGNORE_INDEX, FimConfig
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import SIZES, build_model
from apollo_restore.model.checkpoint import (
    load_model,
    load_optimizer_state,
    recover_checkpoint,
    save_checkpoint,
    save_model,
)
from apollo_restore.train.schedule import lr_at

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
BEST_DIR = "best"
METRICS_FILE = "metrics.jsonl"


@dataclass
class TrainConfig:
    """Everything a training run needs; saved in every checkpoint.

    Attributes:
        prepared: folder written by ``apollo-restore prepare``.
        out: run folder (checkpoint/, best/, metrics.jsonl).
        size: named model size (:data:`~apollo_restore.model.builders.SIZES`).
        init_from: model folder to start from (warm restart); ignored when ``out`` holds a checkpoint.
        steps: optimiser steps in total (a resumed run continues to this number).
        batch_size, block_size: rows per step and tokens per row.
        lr, min_lr, warmup: peak and final learning rate, warmup steps.
        weights: source → sampling weight multiplier on letter counts.
        loss: "all" (FIM pretraining) or "middle" (middle + EOS only).
        bf16: autocast matmuls to bfloat16.
        threads: torch intra-op threads (0 = torch's default).
        eval_every: steps between validation passes; eval_rows: validation rows per pass.
        checkpoint_every: seconds between checkpoints.
    """

    prepared: str = "data/prepared"
    out: str = "runs/default"
    size: str = "small"
    init_from: str | None = None
    steps: int = 20000
    batch_size: int = 8
    block_size: int = 512
    lr: float = 2e-3
    min_lr: float = 2e-4
    warmup: int = 200
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    weights: dict[str, float] = field(default_factory=lambda: {"ddb": 3.0, "dclp": 3.0, "inscription": 1.0, "literary": 0.3})
    loss: str = "all"
    bf16: bool = True
    threads: int = 0
    seed: int = 1337
    eval_every: int = 200
    eval_rows: int = 64
    checkpoint_every: float = 300.0
    log_every: int = 10

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ValueError(f"unknown size {self.size!r}; choose one of {', '.join(SIZES)}")
        FimConfig(loss=self.loss)  # validates the loss mode
        if self.steps < 1 or self.batch_size < 1 or not 0 <= self.min_lr <= self.lr:
            raise ValueError("need steps ≥ 1, batch_size ≥ 1 and 0 ≤ min_lr ≤ lr")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """Build from a mapping; unknown keys raise ``ValueError`` naming them."""
        return from_mapping(cls, values, "training option")


def _corpus(cfg: TrainConfig, split: str) -> Corpus:
    table = load_documents(Path(cfg.prepared), split=split)
    return Corpus(table.column("text").to_pylist(), table.column("source").to_pylist(), cfg.weights)


def _optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)


def _loss(model: torch.nn.Module, ids: torch.Tensor, labels: torch.Tensor, bf16: bool) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over labelled positions, and their number.

    ``labels[b, t]`` is the target for the prediction at ``t`` (already shifted).
    """
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16 and ids.device.type == "cpu"):
        logits = model(input_ids=ids).logits  # (B, T, V)
    loss = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    return loss, int((labels != IGNORE_INDEX).sum())


@torch.no_grad()
def evaluate_loss(model: torch.nn.Module, stream: PackedFimStream, rows: int, batch_size: int, bf16: bool) -> float:
    """Mean loss (nats per labelled token) over the first ``rows`` rows of ``stream``."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, rows, batch_size):
        ids, labels = stream.batch(start, min(batch_size, rows - start))
        loss, n = _loss(model, ids, labels, bf16)
        total += loss.item() * n
        count += n
    model.train()
    return total / max(count, 1)


def _write_metrics(path: Path, record: dict[str, Any]) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")


def train(cfg: TrainConfig, progress: bool = True) -> dict[str, Any]:
    """Train (or resume) a model; returns the final trainer record.

    A run resumes from ``cfg.out/checkpoint`` when present: the model, optimiser, schedule
    position, data position and best validation loss are restored, so killing the process at
    any point loses at most ``checkpoint_every`` seconds of work.
    """
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tok = CharTokenizer()
    fim = FimConfig(loss=cfg.loss)
    train_stream = PackedFimStream(_corpus(cfg, "train"), tok, fim, cfg.block_size, seed=cfg.seed)
    # validation always scores the middle only, so runs with either loss mode compare
    val_stream = PackedFimStream(_corpus(cfg, "validation"), tok, FimConfig(loss="middle"), cfg.block_size, seed=cfg.seed + 1)

    ckpt = recover_checkpoint(out / CHECKPOINT_DIR)
    trainer: dict[str, Any] = {"step": 0, "rows": 0, "tokens": 0, "seconds": 0.0, "best_val": math.inf, "history": []}
    if ckpt is not None:
        model, _, _ = load_model(ckpt)
        model.train()
        optimizer = _optimizer(model, cfg)
        trainer.update({k: v for k, v in load_optimizer_state(ckpt, optimizer).items() if k != "param_groups"})
        log.info("resumed from %s at step %d", ckpt, trainer["step"])
    elif cfg.init_from:
        model, _, meta = load_model(Path(cfg.init_from))
        model.train()
        optimizer = _optimizer(model, cfg)
        earlier = meta.get("training", {}).get("history", []) + [meta.get("training", {})]
        trainer["history"] = earlier
        # continue the data stream where the earlier runs stopped, rather than re-reading it: the
        # last run's row count already includes its own starting offset
        batch = meta.get("config", {}).get("batch_size", cfg.batch_size)
        trainer["rows"] = earlier[-1].get("rows") or sum(run.get("step", 0) * batch for run in earlier)
        log.info("warm restart from %s at data row %d", cfg.init_from, trainer["rows"])
    else:
        model = build_model(cfg.size, tok, cfg.seed)
        model.train()
        optimizer = _optimizer(model, cfg)

    metrics = out / METRICS_FILE
    meta = {"size": cfg.size, "gap_sampler": GAP_SAMPLER, "config": asdict(cfg)}
    last_ckpt = time.monotonic()
    bar = tqdm(total=cfg.steps, initial=trainer["step"], desc="train", unit="step", disable=not progress)
    while trainer["step"] < cfg.steps:
        step_started = time.perf_counter()
        lr = lr_at(trainer["step"], cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        ids, labels = train_stream.batch(trainer["rows"], cfg.batch_size)
        loss, _ = _loss(model, ids, labels, cfg.bf16)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"loss is {loss.item()} at step {trainer['step']}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        elapsed = time.perf_counter() - step_started
        trainer["step"] += 1
        trainer["rows"] += cfg.batch_size
        trainer["tokens"] += int((ids != tok.pad_id).sum())
        trainer["seconds"] += elapsed
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{lr:.1e}")
        if trainer["step"] % cfg.log_every == 0:
            _write_metrics(metrics, {"step": trainer["step"], "loss": round(loss.item(), 4), "lr": lr,
                                     "grad_norm": round(float(grad_norm), 3), "tokens": trainer["tokens"],
                                     "tokens_per_s": round(ids.numel() / elapsed, 1), "seconds": round(trainer["seconds"], 1)})
        if trainer["step"] % cfg.eval_every == 0 or trainer["step"] == cfg.steps:
            val = evaluate_loss(model, val_stream, cfg.eval_rows, cfg.batch_size, cfg.bf16)
            record = {"step": trainer["step"], "val_loss": round(val, 4), "val_bpc": round(val / math.log(2), 4),
                      "tokens": trainer["tokens"], "seconds": round(trainer["seconds"], 1)}
            _write_metrics(metrics, record)
            log.info("validation %s", record)
            if val < trainer["best_val"]:
                trainer["best_val"] = val
                save_model(model, tok, out / BEST_DIR, {**meta, "training": {**_summary(trainer), **record}})
        if time.monotonic() - last_ckpt > cfg.checkpoint_every or trainer["step"] == cfg.steps:
            save_checkpoint(out / CHECKPOINT_DIR, model, tok, optimizer, trainer, {**meta, "training": _summary(trainer)})
            last_ckpt = time.monotonic()
    bar.close()
    return trainer


def _summary(trainer: dict[str, Any]) -> dict[str, Any]:
    return {k: trainer[k] for k in ("step", "rows", "tokens", "seconds", "best_val", "history")}
