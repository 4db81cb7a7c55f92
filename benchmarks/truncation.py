"""Choose the demotion of truncated readings on validation gaps, and measure it.

    python benchmarks/truncation.py --prepared data/prepared [--per-length 5] [--conditions exact,none] \\
        [--cache /tmp/truncation.jsonl] [--factors 1,0.5,0.2,0.1,0.05,0.02]

A reading is *truncated* when the word it ends with is not a word the training editions spell
while the text after the gap starts a new word (``restore.present.is_truncated``). On synthetic
gaps of the ddb **validation** split, the shipped filler's bare readings are cached once (k =
the calibration's); then, for each factor, what the shipped pipeline shows (display forms,
truncated readings' probabilities times the factor, calibration, cut to 20) is scored: Top-1
and Top-20 (space-agnostic), and how many gaps show a truncated reading first. Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.hint import Hint
from apollo_restore.restore.load import load_filler
from apollo_restore.restore.present import Presented, demote_truncated, is_truncated
from apollo_restore.restore.types import Candidate

EDGE = 60  # context characters kept per side: enough for the words touching the gap


def readings(args: argparse.Namespace, filler: Presented) -> list[dict]:
    """One record per gap: target, hint, context edges and the bare filler's readings."""
    if args.cache and args.cache.exists():
        return [json.loads(line) for line in args.cache.open()]
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", args.per_length, args.conditions.split(","), seed=args.seed)
    want = max(20, filler.calibration.k if filler.calibration else 20)
    records, started = [], time.perf_counter()
    for gap in gaps:
        cands = filler.inner.candidates(gap.prefix, gap.suffix, gap.hint, want)
        records.append({
            "target": gap.target, "hint": gap.hint.to_json(), "prefix": gap.prefix[-EDGE:], "suffix": gap.suffix[:EDGE],
            "readings": [[c.text, c.prob, c.log_score] for c in cands],
        })  # fmt: skip
    print(f"{len(records)} gaps searched in {time.perf_counter() - started:.0f} s\n")
    if args.cache:
        args.cache.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return records


def shown(filler: Presented, record: dict, factor: float) -> list[Candidate]:
    """What the shipped pipeline shows for one cached gap with this factor."""
    hint = Hint.from_json(record["hint"])
    cands = [Candidate(text, prob, score) for text, prob, score in record["readings"]]
    prefix, suffix = record["prefix"], record["suffix"]
    out = filler.annotate(cands, prefix, suffix)
    out = demote_truncated(out, prefix, suffix, factor)
    return filler.calibration.apply(out, hint)[:20] if filler.calibration else out[:20]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--per-length", type=int, default=5)
    parser.add_argument("--conditions", default="exact,none")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None, help="JSONL of the bare readings (reused when present)")
    parser.add_argument("--factors", default="1,0.5,0.3,0.2,0.1,0.05,0.02,0.01")
    args = parser.parse_args()
    filler = load_filler()
    records = readings(args, filler)
    print(f"ddb validation, {len(records)} gaps ({args.per_length} per length 1–20, {args.conditions}), k = 20\n")
    print("| factor | Top-1 | Top-20 | truncated reading first |")
    print("|---:|---:|---:|---:|")
    for factor in (float(f) for f in args.factors.split(",")):
        top1 = top20 = trunc = 0
        for record in records:
            cands = shown(filler, record, factor)
            keys = [agnostic(c.text) for c in cands]
            target = agnostic(record["target"])
            top1 += bool(keys) and keys[0] == target
            top20 += target in keys
            trunc += bool(cands) and is_truncated(cands[0], record["prefix"], record["suffix"])
        n = len(records)
        print(f"| {factor:g} | {top1 / n:.3f} | {top20 / n:.3f} | {trunc} |")


if __name__ == "__main__":
    main()
