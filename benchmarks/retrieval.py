"""Parallel-passage engines compared, and restoration with and without retrieval.

    python benchmarks/retrieval.py --prepared /work/data/prepared-v1 --index /work/data/index-v1 \\
        [--fts /tmp/fts-v1.sqlite] [--per-length 10] [--seed 0]
    python benchmarks/retrieval.py --prepared /work/data/prepared-v1 --index /work/data/index-v1 \\
        --rag-eval GAPSET.jsonl --model DIR [--limit 200]
    python benchmarks/retrieval.py --prepared /work/data/prepared-v1 --make-gapset OUT.jsonl [--per-length 10]

Engines (both answer the same gap query: the last L letters of the prefix followed within 40
letters by the first L letters of the suffix, spaces and ``·`` ignored, L backing off
16 → 12 → 8 → 6):

* **suffix array** (``apollo_restore.retrieve.parallels``, the package's engine): NumPy prefix
  doubling to depth 48 over the letters-only stream; binary search for each anchor, pairs by
  ``searchsorted``.
* **SQLite FTS5 trigram** (stdlib, defined here only): the letters-only stream in overlapping
  chunks of 1,000 letters; ``MATCH '"left" AND "right"'`` then a regex over each chunk found.

Indexes are built when missing (``--index``, ``--fts``) and reused otherwise. Queries: the
synthetic ddb *test* gaps of :mod:`apollo_restore.evaluate.gapsets` (no hint, ``--per-length``
per length 1–20) — test documents are never in the index. Phrase queries: 2–4 words from
those contexts. Prints Markdown: build time and size, latency p50/p95, and how often the
true reading is among the parallels.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from apollo_restore.data.formats import GapExample, read_gapset, write_gapset
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, build_true_lacunae
from apollo_restore.restoration.ranking.pool import match_key
from apollo_restore.retrieve.parallels import ANCHORS, MAX_BETWEEN, MIN_SIDE, MIN_TOTAL, ParallelIndex

_STREAM = str.maketrans({" ": None, "·": None, "ς": "σ"})
CHUNK, OVERLAP = 1000, 100  # OVERLAP ≥ 2 × 16 + MAX_BETWEEN, so every match lies whole in one chunk


# -- the FTS5 engine ---------------------------------------------------------------------------


def build_fts(prepared: Path, path: Path) -> float:
    """SQLite FTS5 trigram table over the train split's letters-only text; returns seconds."""
    started = time.perf_counter()
    table = load_documents(prepared, split="train")
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("create virtual table chunks using fts5(doc unindexed, last unindexed, body, tokenize='trigram')")
    rows = []
    for doc, text in zip(table["id"].to_pylist(), table["text"].to_pylist()):
        stream = text.translate(_STREAM)
        starts = range(0, max(1, len(stream) - OVERLAP), CHUNK)
        for start in starts:
            rows.append((doc, start == starts[-1], stream[start : start + CHUNK + OVERLAP]))
        if len(rows) > 50_000:
            db.executemany("insert into chunks values (?, ?, ?)", rows)
            rows = []
    db.executemany("insert into chunks values (?, ?, ?)", rows)
    db.commit()
    db.execute("insert into chunks(chunks) values ('optimize')")
    db.commit()
    db.close()
    return time.perf_counter() - started


class FtsIndex:
    """Gap and phrase parallels from the FTS5 table (counts and betweens only)."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)

    def gap_parallels(self, prefix: str, suffix: str, max_between: int = MAX_BETWEEN) -> list[tuple[str, int]]:
        left = re.split("[-…]", prefix.translate(_STREAM))[-1]
        right = re.split("[-…]", suffix.translate(_STREAM))[0]
        tried = set()
        for size in ANCHORS:
            la, lb = min(size, len(left)), min(size, len(right))
            if min(la, lb) < MIN_SIDE or la + lb < MIN_TOTAL or (la, lb) in tried:
                continue
            tried.add((la, lb))
            a, b = left[-la:], right[:lb]
            pattern = re.compile(f"(?={re.escape(a)}([^-…]{{1,{max_between}}}?){re.escape(b)})")
            counts: dict[str, int] = {}
            query = f'"{a}" AND "{b}"'
            for body, last in self.db.execute("select body, last from chunks where chunks match ?", (query,)):
                for m in pattern.finditer(body):
                    if m.start() < CHUNK or last:  # the overlap belongs to the next chunk
                        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
            if counts:
                return sorted(counts.items(), key=lambda kv: -kv[1])
        return []

    def phrase_count(self, phrase: str) -> int:
        key = phrase.translate(_STREAM)
        total = 0
        for body, last in self.db.execute("select body, last from chunks where chunks match ?", (f'"{key}"',)):
            total += sum(1 for m in re.finditer(f"(?={re.escape(key)})", body) if m.start() < CHUNK or last)
        return total


# -- measurements ------------------------------------------------------------------------------


def _size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [f for f in path.iterdir() if f.is_file()]
    return sum(f.stat().st_size for f in files) / 2**20


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn()
    return (time.perf_counter() - started) * 1000, out


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def sample_phrases(gaps: list[GapExample], seed: int) -> list[str]:
    """A 2–4-word phrase from each gap's prefix (whole words, no lost letters)."""
    rng = np.random.default_rng(seed)
    phrases = []
    for gap in gaps:
        words = [w for w in re.split(r"[ ·]+", gap.prefix) if w and "-" not in w and "…" not in w][1:]
        n = int(rng.integers(2, 5))
        if len(words) >= n:
            i = int(rng.integers(len(words) - n + 1))
            phrase = " ".join(words[i : i + n])
            if len(phrase.translate(_STREAM)) >= 6:
                phrases.append(phrase)
    return phrases


def build_sa(prepared: Path, out: Path) -> None:
    """Build the package index in a subprocess (so its peak memory is its own)."""
    subprocess.run(
        [sys.executable, "-m", "apollo_restore", "index", "--prepared", str(prepared), "--out", str(out)], check=True
    )


def compare_engines(args: argparse.Namespace) -> None:
    if not (args.index / "meta.json").exists():
        build_sa(args.prepared, args.index)
    meta = json.loads((args.index / "meta.json").read_text())
    if args.fts and not args.fts.exists():
        fts_seconds = build_fts(args.prepared, args.fts)
        args.fts.with_suffix(".json").write_text(json.dumps({"build_seconds": round(fts_seconds, 1)}))
    table = load_documents(args.prepared, split="test", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "test", args.per_length, conditions=["none"], seed=args.seed)
    phrases = sample_phrases(gaps, args.seed)

    sa = ParallelIndex.open(args.index)
    sa.gap_parallels("και ", " του")  # warm the page cache
    rows = []
    gap_ms, phrase_ms, found, truth, truth1 = [], [], 0, 0, 0
    for gap in gaps:
        ms, res = _timed(lambda: sa.gap_parallels(gap.prefix, gap.suffix))
        gap_ms.append(ms)
        keys = [match_key(g.between) for g in res.groups]
        found += bool(keys)
        truth += match_key(gap.target) in keys
        truth1 += bool(keys) and keys[0] == match_key(gap.target)
    for phrase in phrases:
        phrase_ms.append(_timed(lambda: sa.phrase_parallels(phrase))[0])
    rows.append(
        ("suffix array (NumPy)", meta["build_seconds"], _size_mb(args.index), gap_ms, phrase_ms, found, truth, truth1)
    )

    if args.fts:
        fts = FtsIndex(args.fts)
        fts_meta = json.loads(args.fts.with_suffix(".json").read_text())
        gap_ms, phrase_ms, found, truth, truth1 = [], [], 0, 0, 0
        for gap in gaps:
            ms, res = _timed(lambda: fts.gap_parallels(gap.prefix, gap.suffix))
            gap_ms.append(ms)
            keys = [match_key(b) for b, _ in res]
            found += bool(keys)
            truth += match_key(gap.target) in keys
            truth1 += bool(keys) and keys[0] == match_key(gap.target)
        for phrase in phrases:
            phrase_ms.append(_timed(lambda: fts.phrase_count(phrase))[0])
        rows.append(
            (
                "SQLite FTS5 trigram",
                fts_meta["build_seconds"],
                _size_mb(args.fts),
                gap_ms,
                phrase_ms,
                found,
                truth,
                truth1,
            )
        )

    n = len(gaps)
    print(f"Index: {meta['documents']:,} train documents, {meta['stream_codes']:,} letters and markers "
          f"({', '.join(f'{k} {v:,}' for k, v in meta['sources'].items())}); {meta['normaliser']}.\n")  # fmt: skip
    print(f"Queries: {n} synthetic ddb test gaps (no hint, {args.per_length} per length 1–20, seed {args.seed}); "
          f"{len(phrases)} phrases of 2–4 words from their contexts.\n")  # fmt: skip
    print(
        "| engine | build s | size MB | gap p50 ms | gap p95 ms | phrase p50 ms | phrase p95 ms "
        "| gaps with parallels | truth among parallels | truth = top parallel |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, build_s, mb, g, p, f, t, t1 in rows:
        print(f"| {name} | {build_s:.0f} | {mb:.0f} | {_pct(g, 50):.1f} | {_pct(g, 95):.1f} | {_pct(p, 50):.1f} | "
              f"{_pct(p, 95):.1f} | {f / n:.1%} | {t / n:.1%} | {t1 / n:.1%} |")  # fmt: skip


# -- restoration with and without retrieval -----------------------------------------------------


def rag_eval(args: argparse.Namespace) -> None:
    """Top-1 / Top-20 of the same gap set with retrieval off and on."""
    from apollo_restore.restoration.load import load_restorer
    from apollo_restore.restoration.predict import predict
    from apollo_restore.retrieve.augment import RetrievalAugmented

    gaps = read_gapset(args.rag_eval)[: args.limit]
    restorer = load_restorer(args.model)
    index = ParallelIndex.open(args.index)
    print(
        f"{len(gaps)} gaps from {args.rag_eval}; model {restorer.name}; "
        f"index {args.index} (count weight {args.count_weight})\n"
    )
    print(
        "| gaps | retrieval | n | Top-1 | Top-20 | gaps with parallels | ms/gap |\n|---|---|---:|---:|---:|---:|---:|"
    )
    for kind in sorted({g.kind for g in gaps}):
        subset = [g for g in gaps if g.kind == kind]
        with_parallels = sum(bool(index.gap_parallels(g.prefix, g.suffix, g.hint).groups) for g in subset)
        for enabled in (False, True):
            augmented = RetrievalAugmented(restorer, index, enabled=enabled, count_weight=args.count_weight)
            top1 = top20 = 0
            ms = []
            for gap, pred in zip(subset, predict(augmented, subset, k=20, progress=False)):
                keys = [match_key(text) for text, _ in pred.candidates]
                want = match_key(gap.target)
                top1 += bool(keys) and keys[0] == want
                top20 += want in keys
                ms.append(pred.ms or 0.0)
            n = max(1, len(subset))
            extra = f"{with_parallels / n:.1%}" if enabled else "–"
            print(
                f"| {kind} | {'on' if enabled else 'off'} | {len(subset)} | {top1 / n:.3f} | {top20 / n:.3f} "
                f"| {extra} | {statistics.mean(ms):.0f} |"
            )


def make_gapset(args: argparse.Namespace) -> None:
    """A small gap set from the prepared test split: ddb synthetic (exact hint) and true lacunae."""
    table = load_documents(args.prepared, split="test", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "test", args.per_length, conditions=["exact"], seed=args.seed)
    gaps += build_true_lacunae(table, "ddb", "test", limit=20 * args.per_length, seed=args.seed)
    n = write_gapset(args.make_gapset, gaps)
    print(f"wrote {n} gaps to {args.make_gapset}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prepared", type=Path, default=Path("/work/data/prepared-v1"))
    ap.add_argument("--index", type=Path, default=Path("/work/data/index-v1"))
    ap.add_argument("--fts", type=Path, default=None, help="FTS5 database to build (if missing) and compare")
    ap.add_argument("--per-length", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rag-eval", type=Path, default=None, help="gap set (JSONL) to run with retrieval off and on")
    ap.add_argument(
        "--model", type=Path, default=None, help="model folder for --rag-eval (default: the embedded model)"
    )
    ap.add_argument("--count-weight", type=float, default=0.0, help="prior weight w · log(1 + count) for --rag-eval")
    ap.add_argument("--limit", type=int, default=None, help="first N gaps of --rag-eval")
    ap.add_argument("--make-gapset", type=Path, default=None, help="write a small ddb test gap set here and stop")
    args = ap.parse_args()
    if args.make_gapset:
        make_gapset(args)
    elif args.rag_eval:
        rag_eval(args)
    else:
        compare_engines(args)


if __name__ == "__main__":
    main()
