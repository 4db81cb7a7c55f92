"""Several restorers on the same gap set, side by side (uniform-weighted over lengths 1–20).

    python benchmarks/compare_restorers.py --gaps reports/ddb-test/gaps.jsonl --conditions exact,none \\
        --ngram /tmp/ngram/ddb-8-min1.npz [--neural [MODEL_FOLDER]] [--no-default]

Rows: the shipped default (``load_restorer()``), a plain forward n-gram file (the classical
baseline), and optionally the neural model alone. Prints Markdown.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from apollo_restore.data.formats import read_gapset
from apollo_restore.evaluate.gapsets import condition_of, is_excluded
from apollo_restore.evaluate.metrics import score_gap, uniform
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.ngram import load_ngram
from apollo_restore.restoration.predict import predict
from apollo_restore.restoration.threads import use_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", type=Path, required=True)
    parser.add_argument("--conditions", default="exact,none")
    parser.add_argument("--ngram", type=Path, action="append", default=[])
    parser.add_argument(
        "--neural",
        nargs="?",
        const="",
        default=None,
        help="the neural model alone (a folder; default: the shipped one)",
    )
    parser.add_argument("--no-default", action="store_true", help="skip the shipped default ensemble")
    args = parser.parse_args()
    wanted = args.conditions.split(",")
    gaps = [
        g for g in read_gapset(args.gaps) if g.kind == "synthetic" and not is_excluded(g) and condition_of(g) in wanted
    ]
    use_threads(1)  # one thread: the per-gap times compare restorers, not core counts
    restorers = [] if args.no_default else [("shipped default", load_restorer())]
    restorers += [(f"{p.stem}", load_ngram(p)) for p in args.ngram]
    if args.neural is not None:
        restorers.append((f"neural model alone ({args.neural or 'shipped'})", NeuralMember.load(args.neural or None)))
    print(f"## {len(gaps)} gaps of {args.gaps} ({', '.join(wanted)})\n")
    print("| restorer | " + " | ".join(f"{c} W.Top-1 / W.Top-20" for c in wanted) + " | ms/gap |")
    print("|---|" + "---:|" * (len(wanted) + 1))
    for name, restorer in restorers:
        preds = list(predict(restorer, gaps, k=20, progress=False))
        cells = []
        for cond in wanted:
            scores = [
                score_gap(g.target, [t for t, _ in p.candidates])
                for g, p in zip(gaps, preds)
                if condition_of(g) == cond
            ]
            s = uniform(scores)
            cells.append(f"{s.top1:.3f} / {s.top20:.3f}")
        ms = sum(p.ms or 0 for p in preds) / max(1, len(preds))
        print(f"| {name} | " + " | ".join(cells) + f" | {ms:.0f} |")


if __name__ == "__main__":
    main()
