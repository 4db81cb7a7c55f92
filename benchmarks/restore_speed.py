"""Per-gap time of the shipped default, two source trees side by side on the same gaps (issue 21).

    git archive ce80386 src | tar -x -C /tmp/base           # the tree to compare with
    python benchmarks/restore_speed.py --prepared data/prepared --baseline /tmp/base/src --per-length 3

Each tree runs in its own worker process (``PYTHONPATH`` set to it), loads the shipped restorer
(``load_restorer()``: the embedded model, its ensemble and presentation) and restores the same ddb
validation gaps (exact hint and no hint, lengths 1–20); the gaps are sent to the two workers in
turn, each going first in turn, so that the load of a shared machine falls on all alike.
Prints Markdown: p50/p95 of each tree's CPU milliseconds per gap and of the per-gap CPU ratio
(tree / baseline), top-1 agreement with the baseline, and uniform-weighted Top-1/Top-20 per
condition. Without ``--baseline`` this tree's defaults are the reference; ``--gap-file`` restores
that gap set instead (its conditions, whatever they are), and the Top-1 of gaps of ≥ 4 letters
whose answer stands in the visible context is shown beside the others' **of the same lengths**
(each side's mean per letter count, then over the counts that have both: issue 22's bar);
``--report`` prints the table of an earlier run's ``--save`` file. ``--variant
NAME='{"beam_width": 20}'`` (repeatable) adds a worker of this tree with those ``RestoreConfig``
fields changed (the search settings to choose on validation); a ``"model"`` field loads that
model folder instead of the embedded one (a candidate model against the shipped one, same gaps,
side by side).

    python benchmarks/restore_speed.py --prepared data/prepared --device cuda --gaps 10000 --check 100

With ``--device`` (no baseline) this tree alone restores ``--gaps`` validation gaps through
``predict`` on that device, ``--batch`` gaps at a time (the shipped default, or the neural model
alone with ``--neural-only``), and prints gaps per second; then the first ``--check`` of them
again on the CPU one at a time, and how many got the same readings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic, condition_of, load_gaps
from apollo_restore.evaluate.metrics import GapScore, answer_in_context, score_gap, uniform
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.predict import predict
from apollo_restore.restoration.ranking.pool import match_key
from apollo_restore.restoration.threads import use_threads

HERE = Path(__file__).resolve().parent.parent / "src"

#: run in each worker: one JSON gap per input line → one JSON result per output line
WORKER = """
import json, sys, time, torch
from dataclasses import replace
from apollo_restore.hint import Hint
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG
try:
    from apollo_restore.restoration.load import load_restorer
except ImportError:  # a tree from before load_filler was renamed load_restorer
    from apollo_restore.restoration.load import load_filler as load_restorer
torch.set_num_threads(int(sys.argv[1]))
overrides = json.loads(sys.argv[2])
folder = overrides.pop("model", None)
config = DEFAULT_RESTORE_CONFIG.replace(**overrides) if overrides else DEFAULT_RESTORE_CONFIG
restorer = load_restorer(folder, config=config)
print("ready", flush=True)
for line in sys.stdin:
    gap = json.loads(line)
    wall, cpu = time.perf_counter(), time.process_time()
    cands = restorer.candidates(gap["prefix"], gap["suffix"], Hint(gap["lo"], gap["hi"]), gap["k"])
    wall, cpu = (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000
    out = {"texts": [c.text for c in cands], "probs": [c.prob for c in cands], "wall": wall, "cpu": cpu}
    print(json.dumps(out, ensure_ascii=False), flush=True)
"""


def start_worker(src: Path, threads: int, overrides: dict | None = None) -> subprocess.Popen:
    """A worker process importing ``apollo_restore`` from ``src``, once it has loaded the restorer
    (with these ``RestoreConfig`` fields changed from the tree's default)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", WORKER, str(threads), json.dumps(overrides or {})]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def ask(proc: subprocess.Popen, gap: dict) -> dict:
    proc.stdin.write(json.dumps(gap, ensure_ascii=False) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def compare(args: argparse.Namespace) -> None:
    if args.gap_file:
        gaps = load_gaps(args.gap_file)
    else:
        table = load_documents(args.prepared, split="validation", sources=["ddb"])
        gaps = build_synthetic(table, "ddb", "validation", args.per_length, ("exact", "none"), seed=args.seed)
    variants = dict(v.split("=", 1) for v in args.variant)
    trees = {"baseline": (args.baseline, {})} if args.baseline else {}
    trees["this tree"] = (HERE, {})
    trees |= {name: (HERE, json.loads(fields)) for name, fields in variants.items()}
    if args.report:  # the table again from a --save file of the same gaps and trees, restoring nothing
        saved = [json.loads(line) for line in args.report.open()]
        report(gaps, {name: [row[name] for row in saved] for name in trees}, trees, args)
        return
    workers = {name: start_worker(src, args.threads, fields) for name, (src, fields) in trees.items()}
    results: dict[str, list[dict]] = {name: [] for name in trees}
    names = list(trees)
    for n, gap in enumerate(gaps):
        request = {"prefix": gap.prefix, "suffix": gap.suffix, "lo": gap.hint.lo, "hi": gap.hint.hi, "k": args.k}
        for name in names[n % len(names) :] + names[: n % len(names)]:  # each goes first in turn
            results[name].append(ask(workers[name], request))
        if args.save:  # each gap as it comes: a long run cut short keeps what it measured
            with args.save.open("a") as f:
                f.write(json.dumps({name: rows[-1] for name, rows in results.items()}, ensure_ascii=False) + "\n")
        print(f"\r{n + 1}/{len(gaps)} gaps", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    for proc in workers.values():
        proc.stdin.close()
        proc.wait()
    report(gaps, results, trees, args)


def report(gaps: list, results: dict[str, list[dict]], trees: dict, args: argparse.Namespace) -> None:
    """Markdown: each tree's time per gap, its per-gap CPU ratio to the baseline (or, without
    one, to this tree's defaults), its top-1 agreement with it, its accuracy per condition (those
    the gaps have, in their order) and, with exact hints, how many of the top 20 readings have
    the answer's letter count."""
    old = next(iter(results.values()))
    where = args.gap_file.name if args.gap_file else "ddb validation gaps (exact + no hint)"
    print(f"## Shipped default, {len(gaps)} {where}, k = {args.k}, {args.threads} thread(s)\n")
    copied = [answer_in_context(g.prefix, g.suffix, g.target) and letter_count(g.target) >= 4 for g in gaps]
    print(f"({sum(copied)} gaps of ≥ 4 letters whose answer stands in the visible context.)\n")
    conditions = list(dict.fromkeys(condition_of(g) for g in gaps))
    names = {"none": "no hint"}
    head = " | ".join(f"{names.get(c, c)} W.Top-1 / W.Top-20" for c in conditions)
    split_head = "; ".join(names.get(c, c) for c in conditions)
    lengths = " | exact: of the top 20, readings of the answer's length" if "exact" in conditions else ""
    print(f"| tree | settings | CPU p50 ms | CPU p95 ms | CPU ratio p50 | CPU ratio p95 | wall p50 ms | top-1 same "
          f"| {head} | Top-1 answer in context / others of its lengths (lengths): {split_head}{lengths} |")  # fmt: skip
    print("|---|---|" + "---:|" * (7 + len(conditions) + bool(lengths)))
    for name, rows in results.items():
        wall, cpu = [r["wall"] for r in rows], [r["cpu"] for r in rows]
        ratio = [b["cpu"] / a["cpu"] for a, b in zip(old, rows)]
        same = sum(bool(a["texts"]) and bool(b["texts"]) and a["texts"][0] == b["texts"][0] for a, b in zip(old, rows))
        accuracy, split = [], []
        for cond in conditions:
            summary = uniform([score_gap(g.target, r["texts"]) for g, r in zip(gaps, rows) if condition_of(g) == cond])
            accuracy.append(f"{summary.top1:.3f} / {summary.top20:.3f}")
            scored = [
                (score_gap(g.target, r["texts"]), c) for g, r, c in zip(gaps, rows, copied) if condition_of(g) == cond
            ]
            split.append(same_length_split(scored))
        settings = json.dumps(trees[name][1]) if trees[name][1] else "default"
        times = f"{pct(cpu, 50):.0f} | {pct(cpu, 95):.0f} | {pct(ratio, 50):.2f} | {pct(ratio, 95):.2f}"
        print(f"| {name} | `{settings}` | {times} | {pct(wall, 50):.0f} | {same}/{len(rows)} | ", end="")
        shown = [right_length(g.target, r["texts"][:20]) for g, r in zip(gaps, rows) if condition_of(g) == "exact"]
        tail = f" | {np.mean(shown):.1f}" if lengths else ""
        print(f"{' | '.join(accuracy)} | {'; '.join(split)}{tail} |")


def same_length_split(scored: list[tuple[GapScore, bool]]) -> str:
    """``in / others (n)``: Top-1 of the gaps whose answer stands in the context and of the other
    gaps of ≥ 4 letters, each the mean over letter counts holding both kinds (``n`` of them)."""
    by_length: dict[int, dict[bool, list[bool]]] = {}
    for score, copied in scored:
        if score.length >= 4:
            by_length.setdefault(score.length, {True: [], False: []})[copied].append(score.top1)
    both = [kinds for kinds in by_length.values() if kinds[True] and kinds[False]]
    if not both:
        return "–"
    inside, others = (np.mean([np.mean(kinds[c]) for kinds in both]) for c in (True, False))
    return f"{inside:.3f} / {others:.3f} ({len(both)})"


def right_length(target: str, texts: list[str]) -> int:
    """How many of ``texts`` have ``target``'s letter count (compared as match keys)."""
    letters = letter_count(match_key(target))
    return sum(letter_count(match_key(text)) == letters for text in texts)


def throughput(args: argparse.Namespace) -> None:
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    per_length = -(-args.gaps // 40)  # 20 lengths × 2 conditions
    gaps = build_synthetic(table, "ddb", "validation", per_length, ("exact", "none"), seed=args.seed)[: args.gaps]
    use_threads(args.threads)
    restorer = load_restorer(device=args.device, neural_only=args.neural_only)
    started = time.perf_counter()
    batched = list(predict(restorer, gaps, args.k, progress=False, batch=args.batch))
    seconds = time.perf_counter() - started
    what = "the neural model alone" if args.neural_only else "the shipped default"
    print(f"## {what}, {len(gaps)} ddb validation gaps on {args.device}, batch {args.batch}, k = {args.k}\n")
    print(f"{seconds:.0f} s: {len(gaps) / seconds:.1f} gaps/s")
    if args.check:
        cpu = load_restorer(neural_only=args.neural_only)
        alone = list(predict(cpu, gaps[: args.check], args.k, progress=False))
        texts = [([t for t, _ in a.candidates], [t for t, _ in b.candidates]) for a, b in zip(alone, batched)]
        same, top1 = sum(a == b for a, b in texts), sum(a[:1] == b[:1] for a, b in texts)
        gap = max(abs(p - q) for a, b in zip(alone, batched) for (_, p), (_, q) in zip(a.candidates, b.candidates))
        print(f"same readings as the CPU one at a time: {same}/{len(alone)} (top-1: {top1}/{len(alone)}); ", end="")
        print(f"largest probability difference {gap:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--baseline", type=Path, help="a source tree's src folder to compare with")
    parser.add_argument("--per-length", type=int, default=3, help="gaps per letter count and condition")
    parser.add_argument("--seed", type=int, default=21, help="seed of the synthetic gaps")
    parser.add_argument("--gap-file", type=Path, help="restore this gap set (our JSONL) instead")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--save", type=Path, help="append each gap's results to this JSONL")
    parser.add_argument("--report", type=Path, help="print the table of a --save file (same gaps and trees) instead")
    parser.add_argument(
        "--variant", action="append", default=[], metavar='NAME={"beam_width": 20}',
        help="also this tree with these RestoreConfig fields changed (repeatable)",
    )  # fmt: skip
    parser.add_argument("--device", help="restore --gaps gaps on this device instead (cpu, cuda)")
    parser.add_argument("--gaps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=256, help="gaps searched together (with --device)")
    parser.add_argument("--neural-only", action="store_true", help="the neural model alone (with --device)")
    parser.add_argument("--check", type=int, default=0, help="gaps also restored on the CPU one at a time")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.device:
        throughput(args)
    else:
        compare(args)
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
