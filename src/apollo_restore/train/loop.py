"""Single-device FIM training (CPU or one GPU).

    apollo-restore train --config configs/default_cpu.yaml
    apollo-restore train --config configs/gpu_medium.yaml          # one CUDA GPU

Features: the shared optimiser step (:mod:`apollo_restore.train.step`: AdamW (0.9, 0.95; fused
on CUDA), weight decay on matrices only, gradient clipping and accumulation, bf16 autocast on
CUDA, or CPU with AVX-512 BF16), linear warmup then cosine to ``min_lr`` (over ``steps`` or
``max_seconds``, whichever ends first), optional ``torch.compile``, rows built by DataLoader
workers, validation loss and bits per middle character on a fixed validation stream, and, when
a ``validate`` callback is given, restoration accuracy on a fixed gap set: the best model by
that accuracy (else by loss) is written atomically to ``best/``
(:mod:`apollo_restore.train.writer`). JSONL metrics (:mod:`apollo_restore.train.metrics`: tokens/s
and, on a GPU of known peak, model FLOPs utilisation),
atomic checkpoints every ``checkpoint_every`` seconds, resume after any kill, warm restart from
a model folder (``init_from``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from apollo_restore.data.prepare import load_documents
from apollo_restore.data.table import DOCUMENTS_FILE
from apollo_restore.errors import FileError
from apollo_restore.fim.dataset import Corpus, PackedFimStream
from apollo_restore.fim.examples import GAP_SAMPLER, FimConfig
from apollo_restore.fim.layout import FimLayout, layout_named
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import SIZES, build_model
from apollo_restore.model.checkpoint import load_model, load_optimizer_state, recover_checkpoint, save_checkpoint
from apollo_restore.schema.training import TrainConfig, refused
from apollo_restore.train.metrics import (
    METRICS_FILE,
    MetricsLog,
    logs_at,
    model_flops_per_token,
    peak_bf16_flops,
    train_row,
)
from apollo_restore.train.recipe import resolve_device
from apollo_restore.train.schedule import lr_at
from apollo_restore.train.step import Batch, Teacher, make_optimizer, train_step, validation_loss
from apollo_restore.train.writer import save_model_folder

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
BEST_DIR = "best"


def training_device(cfg: TrainConfig) -> torch.device:
    """The run's device (``cfg.device``), torch's threads set to ``cfg.threads`` (0: its default)
    and TF32 matrix products allowed on CUDA."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    return device


def training_stream(cfg: TrainConfig, corpus: Corpus, tok: CharTokenizer) -> PackedFimStream:
    """The run's training rows: ``corpus`` in ``cfg``'s layout, loss mode, block size and seed."""
    return PackedFimStream(
        corpus, tok, FimConfig(loss=cfg.loss), cfg.block_size, seed=cfg.seed, layout=layout_named(cfg.layout)
    )


def check_names(cfg: TrainConfig, where: str | None = None) -> None:
    """What only these layers know of a config (its values are bounded when it is made): a
    known model size and FIM layout.

    Raises:
        SettingError: ``E602``, naming the field (and ``where`` the values came from).
    """
    place = {"where": where} if where else {}
    if cfg.size not in SIZES:
        raise refused(cfg, "size", f"one of {', '.join(SIZES)}", **place)
    try:
        layout_named(cfg.layout)
    except ValueError:
        raise refused(cfg, "layout", "a known FIM layout (join, …; apollo_restore.fim.layout)", **place) from None


def check_run(cfg: TrainConfig) -> None:
    """What a run needs, checked before any data is read or anything is written: a known size
    and layout (:func:`check_names`; every other value was checked when ``cfg`` was made), and a
    prepared corpus at ``cfg.prepared``.

    Raises:
        SettingError: ``E602``, a size or layout not known.
        FileError: ``E610``, ``cfg.prepared`` holds no ``documents.parquet``.
    """
    check_names(cfg)
    prepared = Path(cfg.prepared)
    if not (prepared / DOCUMENTS_FILE).is_file():
        reason = f"it holds no {DOCUMENTS_FILE}" if prepared.is_dir() else "no such folder"
        raise FileError("E610", cfg.prepared, reason=reason, command=cfg.command)


def training_corpus(cfg: TrainConfig, split: str) -> Corpus:
    """The ``split`` documents of ``cfg.prepared``, sampled by the config's source weights."""
    table = load_documents(Path(cfg.prepared), split=split)
    return Corpus(table.column("text").to_pylist(), table.column("source").to_pylist(), cfg.weights)


def run_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """The run's AdamW over ``model`` (fused when its parameters are on a GPU)."""
    fused = next(model.parameters()).device.type == "cuda"
    return make_optimizer(model, cfg.lr, cfg.weight_decay, fused=fused)


class RowDataset(torch.utils.data.Dataset):
    """Row ``i`` of a packed stream as ``(ids, labels)`` int64 tensors of shape ``(T,)``."""

    def __init__(self, stream: PackedFimStream):
        self.stream = stream

    def __len__(self) -> int:
        return 2**62

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        ids, labels = self.stream.row(index)
        # through numpy: torch.tensor of a list of 1,024 ints takes 7× as long (issue 34)
        return torch.from_numpy(np.array(ids, dtype=np.int64)), torch.from_numpy(np.array(labels, dtype=np.int64))


def compiled(model: torch.nn.Module, cfg: TrainConfig) -> Any:
    """What computes the logits: ``torch.compile(model)`` in ``cfg.compile_mode`` when
    ``cfg.compile``, else ``model`` itself."""
    return torch.compile(model, mode=cfg.compile_mode) if cfg.compile else model


def load_teacher(cfg: TrainConfig, tok: CharTokenizer, device: torch.device) -> Teacher | None:
    """The run's :class:`Teacher` (``cfg.teacher`` loaded on ``device``, in eval mode, compiled
    like the student), or ``None`` without one.

    Raises:
        ValueError: the teacher's vocabulary is not the student's.
    """
    if not cfg.teacher:
        return None
    model, teacher_tok, _ = load_model(Path(cfg.teacher))
    if teacher_tok.vocab != tok.vocab:
        raise ValueError(f"teacher {cfg.teacher} has another vocabulary than the model it teaches")
    model.to(device).eval().requires_grad_(False)
    return Teacher(compiled(model, cfg), cfg.distill_weight, cfg.distill_temperature)


def row_batches(stream: PackedFimStream, start_row: int, cfg: TrainConfig) -> Iterator[Batch]:
    """Batches ``(ids, labels)``, each ``(batch_size, T)``, from row ``start_row`` on."""
    if cfg.num_workers == 0:
        row = start_row
        while True:
            yield stream.batch(row, cfg.batch_size)
            row += cfg.batch_size
    sampler = iter(range(start_row, 2**62))
    loader = torch.utils.data.DataLoader(
        RowDataset(stream),
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.num_workers,
        prefetch_factor=8,
        persistent_workers=True,
        pin_memory=torch.cuda.is_available(),
    )
    yield from loader


def _validation_batches(stream: PackedFimStream, rows: int, batch_size: int) -> Iterator[Batch]:
    """The first ``rows`` rows of ``stream`` in batches of at most ``batch_size``."""
    for start in range(0, rows, batch_size):
        yield stream.batch(start, min(batch_size, rows - start))


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

    Raises:
        SettingError, FileError: ``E602``, ``E610`` (:func:`check_run`), before anything is read.
    """
    check_run(cfg)
    device = training_device(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tok = CharTokenizer()
    layout = layout_named(cfg.layout)
    train_stream = training_stream(cfg, training_corpus(cfg, "train"), tok)
    # validation always scores the middle and join only, so runs with either loss mode compare
    val_stream = PackedFimStream(
        training_corpus(cfg, "validation"),
        tok,
        FimConfig(loss="middle"),
        cfg.block_size,
        seed=cfg.seed + 1,
        layout=layout,
    )

    ckpt = recover_checkpoint(out / CHECKPOINT_DIR)
    trainer: dict[str, Any] = {"step": 0, "rows": 0, "tokens": 0, "seconds": 0.0, "best_val": math.inf, "history": []}
    if ckpt is not None:
        model, _, _ = load_model(ckpt)
        model.to(device).train()
        optimizer = run_optimizer(model, cfg)
        trainer.update({k: v for k, v in load_optimizer_state(ckpt, optimizer).items() if k != "param_groups"})
        log.info("resumed from %s at step %d", ckpt, trainer["step"])
    elif cfg.init_from:
        model, _, meta = load_model(Path(cfg.init_from))
        if meta.get("size", cfg.size) != cfg.size:
            raise ValueError(
                f"init_from {cfg.init_from} holds a {meta['size']!r} model, the config asks for {cfg.size!r}: "
                "continue a run of the same size, or start this size from scratch (no init_from)"
            )
        model.to(device).train()
        optimizer = run_optimizer(model, cfg)
        # each earlier run with what it was trained on (its data mix), so the history adds up
        earlier = meta.get("training", {}).get("history", []) + [{**meta.get("training", {}), "data": meta.get("data")}]
        trainer["history"] = earlier
        # continue the data stream where the earlier runs stopped, rather than re-reading it: the
        # last run's row count already includes its own starting offset
        batch = meta.get("config", {}).get("batch_size", cfg.batch_size)
        trainer["rows"] = earlier[-1].get("rows") or sum(run.get("step", 0) * batch for run in earlier)
        log.info("warm restart from %s at data row %d", cfg.init_from, trainer["rows"])
    else:
        model = build_model(cfg.size, tok, cfg.seed)
        model.to(device).train()
        optimizer = run_optimizer(model, cfg)
    forward = compiled(model, cfg)
    teacher = load_teacher(cfg, tok, device)
    # the rows' `mfu`: FLOPs per position of this model at this block size, the device's peak
    utilisation = (cfg.block_size, model_flops_per_token(model, cfg.block_size), peak_bf16_flops(device))

    metrics = MetricsLog(out / METRICS_FILE, trainer["step"])
    meta = {
        "size": cfg.size,
        "gap_sampler": GAP_SAMPLER,
        "fim_format": layout.name,
        "config": cfg.model_dump(),
        "data": train_stream.corpus.characters(),
    }
    last_ckpt = loop_started = time.monotonic()
    started_seconds = trainer["seconds"]
    # the last validation pass's wall time, kept in reserve before time_limit; carried in the
    # checkpoint, so a resumed process reserves it from its first step
    trainer.setdefault("eval_seconds", 0.0)
    bar = tqdm(total=cfg.steps, initial=trainer["step"], desc="train", unit="step", disable=not progress)
    batches = row_batches(train_stream, trainer["rows"], cfg)
    while trainer["step"] < cfg.steps:
        step_started = time.perf_counter()
        lr = lr_at(_schedule_step(trainer, cfg), cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        result = train_step(
            model,
            optimizer,
            batches,
            cfg,
            lr=lr,
            device=device,
            pad_id=tok.pad_id,
            step=trainer["step"],
            forward=forward,
            teacher=teacher,
        )
        trainer["step"] += 1
        trainer["rows"] += result.rows
        trainer["tokens"] += result.tokens
        elapsed = time.perf_counter() - step_started
        trainer["seconds"] += elapsed
        this_process = trainer["seconds"] - started_seconds
        out_of_time = (cfg.max_seconds is not None and this_process >= cfg.max_seconds) or (
            cfg.time_limit is not None and time.monotonic() - loop_started + trainer["eval_seconds"] >= cfg.time_limit
        )
        last = trainer["step"] == cfg.steps or out_of_time
        bar.update(1)
        if logs_at(trainer["step"], cfg.log_every, last):
            loss = result.loss.item()  # a device sync: only when it is logged
            bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.1e}")
            metrics.write(train_row(trainer, result, loss, lr, elapsed, utilisation=utilisation))
        if last:  # the training first: a time limit may kill the final validation pass
            save_checkpoint(
                out / CHECKPOINT_DIR, model, tok, optimizer, trainer, {**meta, "training": _summary(trainer)}
            )
        if trainer["step"] % cfg.eval_every == 0 or last:
            eval_started = time.monotonic()
            _evaluate(model, layout, tok, val_stream, cfg, trainer, metrics, out, meta, validate)
            trainer["eval_seconds"] = time.monotonic() - eval_started
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
    device = next(model.parameters()).device
    val = validation_loss(model, _validation_batches(val_stream, cfg.eval_rows, cfg.batch_size), device, cfg.bf16)
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
    metrics.write(record)
    log.info("validation %s", record)
    trainer["best_val"] = min(trainer["best_val"], val)
    if better:
        if validate is not None:
            trainer["best_score"] = record["score"]
        best = {**meta, "training": {**_summary(trainer), **record}}
        save_model_folder(model, tok.save, out / BEST_DIR, layout, best)


def _summary(trainer: dict[str, Any]) -> dict[str, Any]:
    return {
        k: trainer[k]
        for k in ("step", "rows", "tokens", "seconds", "best_val", "best_score", "history")
        if k in trainer
    }
