"""How many training tokens a second the data feed can build: FIM rows per second of one process,
and through the training loop's DataLoader with N worker processes.

    python benchmarks/fim_rows.py --config configs/gpu_large.yaml --prepared data/prepared --workers 1 2

Builds the rows of a GPU config (its block size, FIM settings, layout, source weights and seed)
from the prepared corpus's training split exactly as ``train`` does (``PackedFimStream.row`` as
the ``(ids, labels)`` tensors of :class:`~apollo_restore.train.loop.RowDataset`), first in this process,
then through :func:`~apollo_restore.train.loop.row_batches` (the DataLoader, its workers, batching
and collation) for each ``--workers`` count, after a warm-up of ``--warmup`` rows each. Prints
Markdown: rows/s, tokens/s (rows/s × block size, padding included: what the GPU computes) and,
per worker, the tokens/s one worker feeds. The training needs workers ≥ the GPU's tokens/s ÷
that; a worker count above the cores of this machine measures the cores, not the code.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

from apollo_restore.config import load_config
from apollo_restore.fim.dataset import PackedFimStream
from apollo_restore.fim.examples import FimConfig
from apollo_restore.fim.layout import layout_named
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.train.loop import RowDataset, TrainConfig, row_batches, training_corpus


def rows_per_second_here(stream: PackedFimStream, rows: int, warmup: int) -> float:
    """Rows/s of ``stream`` built one after the other in this process, as a worker builds them
    (the ``(ids, labels)`` tensors of the training loop's dataset)."""
    dataset = RowDataset(stream)
    for i in range(warmup):
        dataset[i]
    started = time.perf_counter()
    for i in range(warmup, warmup + rows):
        dataset[i]
    return rows / (time.perf_counter() - started)


def rows_per_second_loader(stream: PackedFimStream, cfg: TrainConfig, rows: int, warmup: int) -> float:
    """Rows/s of the training loop's DataLoader (``cfg.num_workers`` workers, ``cfg.batch_size``
    rows a batch), timed after ``warmup`` rows (the workers' start and their first batches)."""
    batches = row_batches(stream, 0, cfg)
    seen = 0
    for ids, _ in batches:
        seen += ids.size(0)
        if seen >= warmup:
            break
    started, seen = time.perf_counter(), 0
    for ids, _ in itertools.takewhile(lambda _: seen < rows, batches):
        seen += ids.size(0)
    elapsed = time.perf_counter() - started
    del batches  # the workers stop
    return seen / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/gpu_large.yaml"))
    parser.add_argument("--prepared", default="data/prepared", help="a prepared corpus (overrides the config's)")
    parser.add_argument("--rows", type=int, default=2000, help="rows timed per setting")
    parser.add_argument("--warmup", type=int, default=256, help="rows built before the timing starts")
    parser.add_argument("--workers", type=int, nargs="*", default=[1], help="DataLoader worker counts to time")
    parser.add_argument("--batch", type=int, default=64, help="rows a batch through the DataLoader")
    args = parser.parse_args()
    cfg = TrainConfig.from_dict(load_config(args.config, [f"prepared={args.prepared}"], TrainConfig))
    started = time.perf_counter()
    corpus = training_corpus(cfg, "train")
    loaded = time.perf_counter() - started
    fim = FimConfig(loss=cfg.loss)
    stream = PackedFimStream(
        corpus, CharTokenizer(), fim, cfg.block_size, seed=cfg.seed, layout=layout_named(cfg.layout)
    )
    block = cfg.block_size
    results = [("this process", 1, rows_per_second_here(stream, args.rows, args.warmup))]
    for workers in args.workers:
        loader_cfg = cfg.replace(num_workers=workers, batch_size=args.batch)
        results.append(
            (
                f"DataLoader, {workers} worker(s)",
                workers,
                rows_per_second_loader(stream, loader_cfg, args.rows, args.warmup),
            )
        )
    chars = sum(len(t) for t in corpus.texts)
    print(
        f"## FIM rows: `{args.config}` (block {block}, loss {cfg.loss}, layout {cfg.layout}), "
        f"{len(corpus.texts):,} training documents ({chars / 1e6:.1f} M characters, loaded in {loaded:.1f} s), "
        f"{os.cpu_count()} CPU cores\n"
    )
    print("| rows built by | rows/s | tokens/s | tokens/s a worker |\n|---|---:|---:|---:|")
    for name, workers, rps in results:
        print(f"| {name} | {rps:,.0f} | {rps * block / 1e6:.2f} M | {rps * block / workers / 1e6:.2f} M |")


if __name__ == "__main__":
    main()
