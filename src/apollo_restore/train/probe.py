"""The throughput probe: a few seconds of real training steps per candidate setting, so that a
minute on the GPU decides the settings of a run before it starts (issue 34).

    apollo-restore train --config configs/gpu_large.yaml --probe 12 \\
        --setting "batch_size=64 grad_accum=4" --setting "batch_size=256"

Each setting (``key=value`` overrides of the config, space-separated; the corpus and its source
weights stay the config's, read once) gets a fresh model of the setting's size (random weights:
speed does not depend on them), the run's optimiser, compilation, DataLoader workers and rows of
the training split, as :func:`~apollo_restore.train.loop.train` builds them. ``warmup_steps``
optimiser steps (``torch.compile``'s compilation included) are timed apart; then steps run for
``seconds`` and give tokens/s (non-padding, as the metrics rows count them), model FLOPs
utilisation (:func:`~apollo_restore.train.metrics.mfu`, every position), the share of the time
spent waiting for batches (the data feed's limit) and the peak GPU memory. A setting that fails
(out of GPU memory, a loss that is not finite, a compile mode that does not work here) gets a
row saying why, and the next one runs. Nothing is written: no checkpoint, no metrics file.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from apollo_restore.config import load_config
from apollo_restore.fim.dataset import Corpus
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.train.loop import (
    TrainConfig,
    check_names,
    compiled,
    load_teacher,
    row_batches,
    run_optimizer,
    training_corpus,
    training_device,
    training_stream,
)
from apollo_restore.train.metrics import mfu, model_flops_per_token, peak_bf16_flops
from apollo_restore.train.recipe import resolve_device
from apollo_restore.train.schedule import lr_at
from apollo_restore.train.step import Batch, train_step

#: micro-batches of 64, 128 and 256 rows, each 256 rows an optimiser step (262,144 tokens at block
#: 1,024), so that they differ in the micro-batch alone
DEFAULT_SETTINGS = ("batch_size=64 grad_accum=4", "batch_size=128 grad_accum=2", "batch_size=256 grad_accum=1")


@dataclass(frozen=True)
class ProbeResult:
    """What one setting did.

    Attributes:
        setting: its overrides as given (``""``: the config as it is).
        rows_per_step: rows an optimiser step (batch_size × grad_accum).
        steps: optimiser steps timed (after the warm-up).
        tokens_per_s: non-padding tokens a second over the timed steps.
        mfu: model FLOPs utilisation over them (a share; ``None`` without a known peak).
        data_wait: share of the timed seconds spent waiting for the next batch.
        warmup_s: seconds of the warm-up steps (compilation included).
        peak_gib: peak GPU memory allocated (GiB; ``None`` on the CPU).
        error: why the setting stopped (``"out of GPU memory"``, the exception's type and first
            line), else ``None``.
    """

    setting: str
    rows_per_step: int
    steps: int = 0
    tokens_per_s: float | None = None
    mfu: float | None = None
    data_wait: float | None = None
    warmup_s: float | None = None
    peak_gib: float | None = None
    error: str | None = None


class _Timed:
    """Batches from ``batches``, with the seconds spent waiting for them added up in ``waited``."""

    def __init__(self, batches: Iterator[Batch]):
        self.batches, self.waited = batches, 0.0

    def __iter__(self) -> _Timed:
        return self

    def __next__(self) -> Batch:
        started = time.perf_counter()
        batch = next(self.batches)
        self.waited += time.perf_counter() - started
        return batch


def setting_config(cfg: TrainConfig, setting: str) -> TrainConfig:
    """``cfg`` with the space-separated ``key=value`` overrides of ``setting``.

    Raises:
        ValueError: an override that is not ``key=value``.
        SettingError: ``E602`` an unknown key, a value of another type or out of its declared
            bounds (:class:`~apollo_restore.schema.training.TrainConfig`), named with ``setting``.
    """
    where = f"--setting {setting!r}"
    overrides = load_config(None, setting.split(), TrainConfig)
    config = TrainConfig.from_dict({**cfg.model_dump(), **overrides}, where=where)
    check_names(config, where)
    return config


def probe(
    cfg: TrainConfig,
    settings: list[str],
    seconds: float,
    warmup_steps: int = 3,
    on_result: Callable[[ProbeResult], None] | None = None,
) -> list[ProbeResult]:
    """Time ``seconds`` of training steps of each setting (module docstring), in order.

    Args:
        cfg: the run's config; each setting overrides it.
        settings: space-separated ``key=value`` overrides, one string a setting.
        seconds: timed training seconds a setting (at least two steps are timed).
        warmup_steps: untimed steps first (compilation, the workers' first batches).
        on_result: called with each result as soon as its setting is done (a probe cut short
            by a time limit still shows the settings it finished).

    Raises:
        ValueError: a setting that cannot be read, ``SettingError`` (``E602``) one that the
            schema refuses, or a size or layout of ``cfg`` not known (checked for all before any runs).
    """
    check_names(cfg)
    configs = [setting_config(cfg, setting) for setting in settings]
    corpus = training_corpus(cfg, "train")  # every setting reads the same training split
    results = []
    for config, setting in zip(configs, settings):
        device = training_device(config)
        results.append(_probe_one(config, setting, corpus, device, seconds, warmup_steps))
        if on_result is not None:
            on_result(results[-1])
        gc.collect()  # the setting's model and optimiser state, before the next one's
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return results


def _probe_one(
    cfg: TrainConfig, setting: str, corpus: Corpus, device: torch.device, seconds: float, warmup_steps: int
) -> ProbeResult:
    rows_per_step = cfg.batch_size * cfg.grad_accum
    torch._dynamo.reset()  # compile each setting afresh, for its own shapes (no dynamic-shape graph)
    tok = CharTokenizer()
    stream = training_stream(cfg, corpus, tok)
    model = build_model(cfg.size, tok, cfg.seed).to(device).train()
    optimizer = run_optimizer(model, cfg)
    forward = compiled(model, cfg)
    teacher = load_teacher(cfg, tok, device)  # a distillation run's steps run the teacher too
    per_token, peak = model_flops_per_token(model, cfg.block_size), peak_bf16_flops(device)
    batches = _Timed(row_batches(stream, 0, cfg))
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    def step(i: int) -> int:
        lr = lr_at(i, cfg.lr, cfg.min_lr, cfg.warmup, cfg.steps)
        return train_step(
            model, optimizer, batches, cfg, lr=lr, device=device, pad_id=tok.pad_id, forward=forward, teacher=teacher
        ).tokens

    try:
        started = time.perf_counter()
        for i in range(warmup_steps):
            step(i)
        _sync(device)
        warmup_s = time.perf_counter() - started
        batches.waited, steps, tokens = 0.0, 0, 0
        started = time.perf_counter()
        while steps < 2 or time.perf_counter() - started < seconds:
            tokens += step(warmup_steps + steps)
            steps += 1
        _sync(device)
        elapsed = time.perf_counter() - started
        peak_gib = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        positions = steps * rows_per_step * cfg.block_size / elapsed  # every position a second
        return ProbeResult(
            setting,
            rows_per_step,
            steps,
            tokens_per_s=tokens / elapsed,
            mfu=mfu(positions, per_token, peak),
            data_wait=batches.waited / elapsed,
            warmup_s=warmup_s,
            peak_gib=peak_gib,
        )
    except torch.cuda.OutOfMemoryError:
        return ProbeResult(setting, rows_per_step, error="out of GPU memory")
    except Exception as err:  # noqa: BLE001 - any failure of one setting (a compile mode, a kernel) is its row
        first_line = (str(err).splitlines() or [""])[0][:120]
        return ProbeResult(setting, rows_per_step, error=f"{type(err).__name__}: {first_line}")
    finally:
        batches.batches.close()  # the DataLoader's workers stop


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def probe_heading(cfg: TrainConfig, seconds: float) -> str:
    """The Markdown heading of the probe's table: the model, its attention, the device and its
    peak, then the table's header (two lines)."""
    device = resolve_device(cfg.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    peak = peak_bf16_flops(device)
    model = build_model(cfg.size, CharTokenizer())
    params = sum(p.numel() for p in model.parameters())
    return (
        f"## Throughput probe: `{cfg.size}` ({params / 1e6:.2f} M parameters, attention "
        f"{model.config._attn_implementation}), block {cfg.block_size}, {seconds:g} s a setting, on {name} "
        f"(peak dense bf16: {f'{peak / 1e12:.0f} TFLOP/s' if peak else 'not known: no MFU'})\n\n"
        "| setting | rows/step | steps | tokens/s | MFU | data wait | peak memory | warm-up |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|"
    )


def probe_row(r: ProbeResult) -> str:
    """One setting's row of the table: tokens/s in millions, MFU and data wait in %, memory in
    GiB, warm-up in seconds; "–" where not known, the error in place of tokens/s."""
    name = r.setting or "(config)"
    if r.error:
        return f"| {name} | {r.rows_per_step} | – | {r.error} | – | – | – | – |"

    def cell(value: float | None, form: str, unit: str = "") -> str:
        return "–" if value is None else format(value, form) + unit

    return (
        f"| {name} | {r.rows_per_step} | {r.steps} | {r.tokens_per_s / 1e6:.3f} M | {cell(r.mfu, '.1%')} "
        f"| {cell(r.data_wait, '.0%')} | {cell(r.peak_gib, '.1f', ' GiB')} | {r.warmup_s:.1f} s |"
    )
