"""Model tokens per gap of the shipped default, by kind (issue 21): where a faster restore must cut.

    python benchmarks/restore_tokens.py --prepared data/prepared --every 4

Restores every ``--every``-th ddb validation gap (1 per length, exact hint and no hint, seed 21)
with ``load_filler()`` and counts, per gap: the prompt's tokens, the neural beam's row-steps
(joining rows, forced through the join characters, and free rows, still writing the middle) and
the padded tokens of the re-scoring of the other members' readings. Prints the means.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import torch

from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.model import lean
from apollo_restore.restore import beam
from apollo_restore.restore.load import load_filler


def counting(tally: Counter) -> None:
    """Wrap the beam's step, the prompt and the re-scoring so that each adds to ``tally``."""
    advance, continue_rows, prompt = beam._Search.advance, lean.LeanModel.continue_rows, lean.LeanModel.prompt

    def counted_advance(self, logp):
        items = advance(self, logp)
        tally["beam joining row-steps"] += sum(row.join_at is not None for row, _, _ in items)
        tally["beam free row-steps"] += sum(row.join_at is None for row, _, _ in items)
        return items

    def counted_rows(self, run, rows):
        tally["re-scoring tokens (padded)"] += rows.numel()
        return continue_rows(self, run, rows)

    def counted_prompt(self, ids):
        tally["prompt tokens"] += len(ids)
        return prompt(self, ids)

    beam._Search.advance, lean.LeanModel.continue_rows, lean.LeanModel.prompt = (
        counted_advance, counted_rows, counted_prompt
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--every", type=int, default=4, help="restore every n-th gap")
    args = parser.parse_args()
    torch.set_num_threads(1)
    table = load_documents(args.prepared, split="validation", sources=["ddb"])
    gaps = build_synthetic(table, "ddb", "validation", 1, conditions=("exact", "none"), seed=21)[:: args.every]
    filler = load_filler()
    tally: Counter = Counter()
    counting(tally)
    for gap in gaps:
        filler.candidates(gap.prefix, gap.suffix, gap.hint, 20)
    print(f"| per gap ({len(gaps)} ddb validation gaps) | tokens |\n|---|---:|")
    for name, count in tally.items():
        print(f"| {name} | {count / len(gaps):.0f} |")


if __name__ == "__main__":
    main()
