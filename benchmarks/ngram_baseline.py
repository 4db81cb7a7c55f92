"""The classical baseline: a character n-gram model restoring synthetic gaps of unseen documents.

    python benchmarks/ngram_baseline.py --prepared /work/data/prepared-v0 --workdir /tmp/ngram \\
        [--orders 8] [--builds 6,8,10,8:2] [--per-length 30] [--seed 0]

Builds (each in a subprocess, so peak memory is its own) are written to ``--workdir`` and
reused when present. Gaps: from the ddb *test* split, ``--per-length`` gaps per length 1..20
at seeded random positions (a span of n letters with no ``-``/``…``, starting and ending on a
letter; up to 250 characters of context each side). Matches are space-agnostic (spaces and
``·`` removed, ς folded to σ). Prints Markdown tables: builds, then accuracy per model and
hint condition (uniform-weighted = mean over lengths 1–20 of per-length means; prior = mean
over gaps of 1–10 letters) and milliseconds per gap, wall-clock and CPU (the machine may be
shared: CPU time is the steadier figure).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.table import load_documents
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.members.ngram import FillConfig, NgramRestorer
from apollo_restore.restoration.ranking.pool import match_key

CONTEXT = 250
LENGTHS = range(1, 21)
_BUILD_LINE = re.compile(r"(?P<ngrams>[\d,]+) n-grams, (?P<mb>[\d.]+) MB, (?P<s>[\d.]+) s, peak RSS (?P<rss>\d+) MB")


def build(prepared: Path, workdir: Path, order: int, min_count: int) -> tuple[Path, dict[str, str]]:
    """Build (or reuse) one model; returns its path and the build's statistics."""
    out = workdir / f"ddb-{order}-min{min_count}.npz"
    log = out.with_suffix(".log")
    if not out.exists() or not log.exists():
        cmd = [
            sys.executable,
            "-m",
            "apollo_restore",
            "ngram",
            "--prepared",
            str(prepared),
            "--source",
            "ddb",
            "--order",
            str(order),
            "--min-count",
            str(min_count),
            "--out",
            str(out),
        ]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        log.write_text(done.stdout)
    found = _BUILD_LINE.search(log.read_text())
    return out, found.groupdict() if found else {}


def sample_gaps(texts: list[str], per_length: int, seed: int) -> list[tuple[str, str, str, int]]:
    """``(prefix, target, suffix, n)`` gaps, ``per_length`` for each n in 1..20 (seeded)."""
    rng = np.random.default_rng(seed)
    sizes = np.array([len(t) for t in texts], dtype=np.float64)
    weights = sizes / sizes.sum()
    gaps = []
    for n in LENGTHS:
        got, tries = 0, 0
        while got < per_length and tries < 100_000:
            tries += 1
            text = texts[rng.choice(len(texts), p=weights)]
            start = int(rng.integers(len(text)))
            if not _is_letter(text[start]):
                continue
            end, letters = start, 0
            while end < len(text) and letters < n and text[end] not in "-…":
                letters += _is_letter(text[end])
                end += 1
            if letters < n or not _is_letter(text[end - 1]):
                continue
            gaps.append((text[max(0, start - CONTEXT) : start], text[start:end], text[end : end + CONTEXT], n))
            got += 1
    return gaps


def _is_letter(ch: str) -> bool:
    return ch not in " ·-…"


def evaluate(restorer: NgramRestorer, gaps: list[tuple[str, str, str, int]], exact: bool) -> dict[str, float]:
    top1 = {n: [] for n in LENGTHS}
    top20 = {n: [] for n in LENGTHS}
    started, cpu_started = time.perf_counter(), time.process_time()
    for prefix, target, suffix, n in gaps:
        cands = restorer.candidates(prefix, suffix, Hint.exact(n) if exact else NO_HINT, k=20)
        keys = [match_key(c.text) for c in cands]
        want = match_key(target)
        assert letter_count(target) == n
        top1[n].append(bool(keys) and keys[0] == want)
        top20[n].append(want in keys)
    ms = (time.perf_counter() - started) * 1000 / len(gaps)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / len(gaps)
    uni1 = float(np.mean([np.mean(top1[n]) for n in LENGTHS]))
    uni20 = float(np.mean([np.mean(top20[n]) for n in LENGTHS]))
    prior1 = float(np.mean(sum((top1[n] for n in range(1, 11)), [])))
    prior20 = float(np.mean(sum((top20[n] for n in range(1, 11)), [])))
    curve = " ".join(f"{np.mean(top1[n]):.2f}" for n in LENGTHS)
    return {
        "uni1": uni1,
        "uni20": uni20,
        "prior1": prior1,
        "prior20": prior20,
        "ms": ms,
        "cpu_ms": cpu_ms,
        "curve": curve,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prepared", type=Path, default=Path("/work/data/prepared-v0"))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ngram"))
    ap.add_argument("--builds", default="6,8,10,8:2,10:2", help="order[:min_count], comma-separated")
    ap.add_argument("--orders", default="8", help="builds (order[:min_count]) to evaluate")
    ap.add_argument("--per-length", type=int, default=30)
    ap.add_argument("--beam", type=int, default=None, help="live beams (default: FillConfig's)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    def spec(s: str) -> tuple[int, int]:
        order, _, mc = s.partition(":")
        return int(order), int(mc or 1)

    models = {}
    print("| order | min_count | n-grams | file MB | build s | peak RSS MB |\n|---:|---:|---:|---:|---:|---:|")
    for s in dict.fromkeys(args.builds.split(",") + args.orders.split(",")):
        order, mc = spec(s)
        path, st = build(args.prepared, args.workdir, order, mc)
        models[s] = path
        print(
            f"| {order} | {mc} | {st.get('ngrams', '?')} | {st.get('mb', '?')} | {st.get('s', '?')} "
            f"| {st.get('rss', '?')} |"
        )

    table = load_documents(args.prepared, split="test", sources=["ddb"])
    gaps = sample_gaps(table["text"].to_pylist(), args.per_length, args.seed)
    print(
        f"\n{len(gaps)} gaps from {table.num_rows} ddb test documents "
        f"(seed {args.seed}, {args.per_length} per length 1–20)\n"
    )
    print(
        "| model | hint | Top-1 (uniform) | Top-20 (uniform) | Top-1 (prior 1–10) | Top-20 (prior 1–10) "
        "| ms/gap | CPU ms/gap |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    curves = []
    for s in args.orders.split(","):
        cfg = FillConfig() if args.beam is None else FillConfig(beam=args.beam)
        restorer = NgramRestorer.load(models[s], cfg)
        restorer.candidates("και ", " του", Hint.exact(3))  # warm up (dense low-order table)
        for exact in (True, False):
            r = evaluate(restorer, gaps, exact)
            name = f"{s.split(':')[0]}-gram" + (f" min_count {spec(s)[1]}" if spec(s)[1] > 1 else "")
            hint = "exact" if exact else "none"
            print(
                f"| {name} | {hint} | {r['uni1']:.3f} | {r['uni20']:.3f} | {r['prior1']:.3f} | {r['prior20']:.3f} "
                f"| {r['ms']:.0f} | {r['cpu_ms']:.0f} |"
            )
            curves.append(f"| {name} | {hint} | {r['curve']} |")
    print("\nTop-1 per gap length 1..20:\n\n| model | hint | Top-1 by length |\n|---|---|---|")
    print("\n".join(curves))


if __name__ == "__main__":
    main()
