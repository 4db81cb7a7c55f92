"""Single-device FIM training (CPU or one GPU).

    apollo-restore train --config configs/default_cpu.yaml
    apollo-restore train --config configs/gpu_medium.yaml          # one CUDA GPU

Features: AdamW (0.9, 0.95; fused on CUDA), weight decay 0.1 on matrices only, linear warmup
then cosine to ``min_lr`` (over ``steps`` or ``max_seconds``, whichever ends first), gradient
clipping, bf16 autocast (CUDA, or CPU with AVX-512 BF16), optional ``torch.compile``, rows built
by DataLoader workers, validation loss and bits per middle character on a fixed validation
stream, and, when a ``validate`` callback is given, restoration accuracy on a fixed gap set: the
best model by that accuracy (else by loss) is written atomically to ``best/``. JSONL metrics
(no duplicate rows after a resume), atomic checkpoints every ``checkpoint_every`` seconds,
resume after any kill, warm restart from a model folder (``init_from``).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from apollo_restore.config import from_mapping
from apollo_restore.data.prepare import load_documents
from apollo_restore.fim.dataset import Corpus, PackedFimStream
from apollo_restore.fim.examples import GAP_SAMPLER, FimConfig
from apollo_restore.fim.layout import IGNORE_INDEX, FimLayout, layout_named
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import SIZES, build_model
from apollo_restore.model.checkpoint import (
    load_model,
    load_optimizer_state,
    recover_checkpoint,
    save_checkpoint,
    save_model_atomic,
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
        layout: FIM layout, short or versioned name (:mod:`apollo_restore.fim.layout`).
        device: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
        compile: run the model through ``torch.compile``.
        workers: DataLoader worker processes building rows (0: in the training process).
        max_seconds: stop after this much training time; the LR schedule then runs on time.
        val_gaps: a gap-set JSONL scored by the ``validate`` callback (restoration accuracy).
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
    weights: dict[str, float] = field(
        default_factory=lambda: {"ddb": 3.0, "dclp": 3.0, "inscription": 1.0, "literary": 0.3}
    )
    loss: str = "all"
    bf16: bool = True
    threads: int = 0
    seed: int = 1337
    eval_every: int = 200
    eval_rows: int = 64
    checkpoint_every: float = 300.0
    log_every: int = 10
    layout: str = "join"
    device: str = "auto"
    compile: bool = False
    workers: int = 0
    max_seconds: float | None = None
    val_gaps: str | None = None

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ValueError(f"unknown size {self.size!r}; choose one of {', '.join(SIZES)}")
        FimConfig(loss=self.loss)  # validates the loss mode
        layout_named(self.layout)
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")
        if self.steps < 1 or self.batch_size < 1 or not 0 <= self.min_lr <= self.lr:
            raise ValueError("need steps ≥ 1, batch_size ≥ 1 and 0 ≤ min_lr ≤ lr")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        """Build from a mapping; unknown keys raise ``ValueError`` naming them."""
        return from_mapping(cls, values, "training option")


def _corpus(cfg: TrainConfig, split: str) -> Corpus:
    table = load_documents(Path(cfg.prepared), split=split)
    return Corpus(table.column("text").to_pylist(), table.column("source").to_pylist(), cfg.weights)


def _optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused = next(model.parameters()).device.type == "cuda"
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8, fused=fused)


def _device(cfg: TrainConfig) -> torch.device:
    if cfg.device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(cfg.device)


class _Rows(torch.utils.data.Dataset):
    """Row ``i`` of a packed stream as ``(ids, labels)`` int64 tensors of shape ``(T,)``."""

    def __init__(self, stream: PackedFimStream):
        self.stream = stream

    def __len__(self) -> int:
        return 2**62

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        ids, labels = self.stream.row(index)
        return torch.tensor(ids), torch.tensor(labels)


def _batches(stream: PackedFimStream, start_row: int, cfg: TrainConfig):
    """Batches ``(ids, labels)``, each ``(batch_size, T)``, from row ``start_row`` on."""
    if cfg.workers == 0:
        row = start_row
        while True:
            yield stream.batch(row, cfg.batch_size)
            row += cfg.batch_size
    sampler = iter(range(start_row, 2**62))
    loader = torch.utils.data.DataLoader(
        _Rows(stream),
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.workers,
        prefetch_factor=8,
        persistent_workers=True,
        pin_memory=torch.cuda.is_available(),
    )
    yield from loader


def _trim_metrics(path: Path, step: int) -> None:
    """Drop metric rows past ``step`` (written after the checkpoint a resumed run starts from)."""
    if not path.exists():
        return
    kept = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line).get("step", 0) <= step]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    tmp.replace(path)


def _loss(model: torch.nn.Module, ids: torch.Tensor, labels: torch.Tensor, bf16: bool) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over labelled positions, and their number.

    ``labels[b, t]`` is the target for the prediction at ``t`` (already shifted).
    """
    with torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=ids).logits  # (B, T, V)
    loss = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=IGNORE_INDEX
    )
    return loss, int((labels != IGNORE_INDEX).sum())


@torch.no_grad()
def evaluate_loss(model: torch.nn.Module, stream: PackedFimStream, rows: int, batch_size: int, bf16: bool) -> float:
    """Mean loss (nats per labelled token) over the first ``rows`` rows of ``stream``."""
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for start in range(0, rows, batch_size):
        ids, labels = stream.batch(start, min(batch_size, rows - start))
        loss, n = _loss(model, ids.to(device), labels.to(device), bf16)
        total += loss.item() * n
        count += n
    model.train()
    return total / max(count, 1)


def _write_metrics(path: Path, record: dict[str, Any]) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")


def train(
    cfg: TrainConfig,
    progress: bool = True,
    validate: Callable[[torch.nn.Module, FimLayout], dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Train (or resume) a model; returns the final trainer record.

    A run resumes from ``cfg.out/checkpoint`` when present: the model, optimiser, schedule
    position, data position and best validation score are restored, so killing the process at
    any point loses at most ``checkpoint_every`` seconds of work.

    Args:
        validate: called as ``validate(model, layout)`` at every evaluation; returns metrics
            whose ``"score"`` (higher is better, e.g. uniform-weighted Top-1 on a fixed gap set)
            chooses ``best/``. Without it ``best/`` is the lowest validation loss.
    """
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = _device(cfg)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tok = CharTokenizer()
    layout = layout_named(cfg.layout)
    fim = FimConfig(loss=cfg.loss)
    train_stream = PackedFimStream(_corpus(cfg, "train"), tok, fim, cfg.block_size, seed=cfg.seed, layout=layout)
    # validation always scores the middle and join only, so runs with either loss mode compare
    val_stream = PackedFimStream(
        _corpus(cfg, "validation"), tok, FimConfig(loss="middle"), cfg.block_size, seed=cfg.seed + 1, layout=layout
    )

    ckpt = recover_checkpoint(out / CHECKPOINT_DIR)
    trainer: dict[str, Any] = {"step": 0, "rows": 0, "tokens": 0, "seconds": 0.0, "best_val": math.inf, "history": []}
    if ckpt is not None:
        model, _, _ = load_model(ckpt)
        model.to(device).train()
        optimizer = _optimizer(model, cfg)
        trainer.update({k: v for k, v in load_optimizer_state(ckpt, optimizer).items() if k != "param_groups"})
        _trim_metrics(out / METRICS_FILE, trainer["step"])
        log.info("resumed from %s at step %d", ckpt, trainer["step"])
    elif cfg.init_from:
        model, _, meta = load_model(Path(cfg.init_from))
        model.to(device).train()
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
        model.to(device).train()
        optimizer = _optimizer(model, cfg)
    forward = torch.compile(model) if cfg.compile else model

    metrics = out / METRICS_FILE
    meta = {"size": cfg.size, "gap_sampler": GAP_SAMPLER, "fim_format": layout.name, "config": asdict(cfg)}
    last_ckpt = time.monotonic()
    started_seconds = trainer["seconds"]
    bar = tqdm(total=cfg.steps, initial=trainer["step"], desc="train", unit="step", disable=not progress)
    batches = _batches(train_stream, trainer["rows"], cfg)
    while trainer["step"] < cfg.steps:
        step_started = time.perf_counter()
        lr = lr_at(_schedule_step(trainer, cfg), cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        ids, labels = (t.to(device, non_blocking=True) for t in next(batches))
        loss, _ = _loss(forward, ids, labels, cfg.bf16)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"loss is {loss.item()} at step {trainer['step']}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        trainer["step"] += 1
        trainer["rows"] += cfg.batch_size
        trainer["tokens"] += int((ids != tok.pad_id).sum())
        log_now = trainer["step"] % cfg.log_every == 0
        if log_now:
            loss_value = loss.item()  # a device sync: only when it is logged
        elapsed = time.perf_counter() - step_started
        trainer["seconds"] += elapsed
        out_of_time = cfg.max_seconds is not None and trainer["seconds"] - started_seconds >= cfg.max_seconds
        last = trainer["step"] == cfg.steps or out_of_time
        bar.update(1)
        if log_now:
            bar.set_postfix(loss=f"{loss_value:.3f}", lr=f"{lr:.1e}")
            _write_metrics(
                metrics,
                {
                    "step": trainer["step"],
                    "loss": round(loss_value, 4),
                    "lr": lr,
                    "grad_norm": round(float(grad_norm), 3),
                    "tokens": trainer["tokens"],
                    "tokens_per_s": round(ids.numel() / elapsed, 1),
                    "seconds": round(trainer["seconds"], 1),
                },
            )
        if trainer["step"] % cfg.eval_every == 0 or last:
            _evaluate(model, layout, tok, val_stream, cfg, trainer, metrics, out, meta, validate)
        if time.monotonic() - last_ckpt > cfg.checkpoint_every or last:
            save_checkpoint(
                out / CHECKPOINT_DIR, model, tok, optimizer, trainer, {**meta, "training": _summary(trainer)}
            )
            last_ckpt = time.monotonic()
        if out_of_time:
            break
    bar.close()
    return trainer


def _schedule_step(trainer: dict[str, Any], cfg: TrainConfig) -> int:
    """The step the LR schedule is at: the real step, or the share of ``max_seconds`` spent."""
    if cfg.max_seconds is None:
        return trainer["step"]
    return max(trainer["step"], int(cfg.steps * trainer["seconds"] / cfg.max_seconds))


def _evaluate(model, layout, tok, val_stream, cfg, trainer, metrics, out, meta, validate) -> None:
    """Validation loss, restoration accuracy when ``validate`` is given; ``best/`` on improvement."""
    val = evaluate_loss(model, val_stream, cfg.eval_rows, cfg.batch_size, cfg.bf16)
    record: dict[str, Any] = {
        "step": trainer["step"],
        "val_loss": round(val, 4),
        "val_bpc": round(val / math.log(2), 4),
        "tokens": trainer["tokens"],
        "seconds": round(trainer["seconds"], 1),
    }
    if validate is not None:
        model.eval()
        record.update(validate(model, layout))
        model.train()
        better = record["score"] > trainer.get("best_score", -math.inf)
    else:
        better = val < trainer["best_val"]
    _write_metrics(metrics, record)
    log.info("validation %s", record)
    trainer["best_val"] = min(trainer["best_val"], val)
    if better:
        if validate is not None:
            trainer["best_score"] = record["score"]
        save_model_atomic(model, tok, out / BEST_DIR, {**meta, "training": {**_summary(trainer), **record}})


def _summary(trainer: dict[str, Any]) -> dict[str, Any]:
    return {
        k: trainer[k]
        for k in ("step", "rows", "tokens", "seconds", "best_val", "best_score", "history")
        if k in trainer
    }
