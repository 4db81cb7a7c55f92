"""Choose the demotion of truncated readings on validation gaps, and measure it.

    apollo-restore evaluate --prepared data/prepared --split validation --source ddb --per-length 5 \\
        --conditions exact,none --no-uncertain-excluded --bpc-windows 0 --out /tmp/eval-val
    python benchmarks/truncation.py --eval /tmp/eval-val [--factors 1,0.5,0.2,0.1,0.05]

A reading is *truncated* when the word it ends with is not a word the training editions spell
while the text after the gap starts a new word (``restore.present.is_truncated``). The readings
an ``evaluate`` run showed (its ``predictions.jsonl``: the shipped pipeline's calibrated top 20,
truncated readings not demoted, i.e. ``TRUNCATED_FACTOR`` 1) are re-ranked as each factor ``f``
would rank them: the demotion multiplies a reading's filler probability ``q`` by ``f`` before the
calibration, whose score is ``a · log q − δ · unknown``, so the calibrated order is the order of
the calibrated probabilities times ``f ** a`` for truncated readings (``a``: the calibration's
inverse temperature for the gap's hint condition). The list's members do not change (the same
20 readings), so Top-20 does not either; Top-1 and how many gaps show a truncated reading first
do. Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from apollo_restore.data.orthography import default_forms
from apollo_restore.evaluate.metrics import agnostic
from apollo_restore.hint import Hint
from apollo_restore.restore.calibration import Scaling, load_for
from apollo_restore.restore.config import DEFAULT_MODEL
from apollo_restore.restore.present import Presented, is_truncated
from apollo_restore.restore.types import Candidate


def gaps_and_readings(folder: Path) -> list[tuple[dict, list[Candidate]]]:
    """``(gap, shown readings)`` per gap of an ``evaluate`` output folder."""
    gaps = {g["id"]: g for g in map(json.loads, (folder / "gaps.jsonl").open(encoding="utf-8"))}
    out = []
    for pred in map(json.loads, (folder / "predictions.jsonl").open(encoding="utf-8")):
        out.append((gaps[pred["id"]], [Candidate(c["text"], c["prob"], 0.0) for c in pred["candidates"]]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, required=True, help="an evaluate output folder (gaps + predictions)")
    parser.add_argument("--factors", default="1,0.7,0.5,0.3,0.2,0.1,0.05,0.02,0.01")
    args = parser.parse_args()
    presented = Presented(None, default_forms())
    calibration = load_for(DEFAULT_MODEL)
    rows = []
    for gap, cands in gaps_and_readings(args.eval):
        cands = presented.annotate(cands, gap["prefix"], gap["suffix"])
        flags = [is_truncated(c, gap["prefix"], gap["suffix"]) for c in cands]
        kind = Hint.from_json(gap["hint"]).kind
        a = (calibration.conditions.get(kind, Scaling()) if calibration else Scaling()).a
        rows.append((agnostic(gap["target"]), [agnostic(c.text) for c in cands], [c.prob for c in cands], flags, a))
    n = len(rows)
    print(f"{args.eval}: {n} gaps; {sum(any(f) for *_, f, _ in rows)} show a truncated reading among their 20\n")
    print("| factor | Top-1 | Top-20 | truncated reading first |")
    print("|---:|---:|---:|---:|")
    for factor in (float(f) for f in args.factors.split(",")):
        top1 = top20 = first_truncated = 0
        for target, keys, probs, flags, a in rows:
            weights = [p * (factor**a if flag else 1.0) for p, flag in zip(probs, flags)]
            order = sorted(range(len(keys)), key=lambda i: -weights[i])  # stable: ties keep their order
            top1 += bool(keys) and keys[order[0]] == target
            top20 += target in keys
            first_truncated += bool(keys) and flags[order[0]]
        print(f"| {factor:g} | {top1 / n:.3f} | {top20 / n:.3f} | {first_truncated} |")


if __name__ == "__main__":
    main()
