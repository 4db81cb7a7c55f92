"""How often the kind of a text is read right (:mod:`apollo_restore.restoration.text_kind`), on
excerpts of validation documents of each source.

    python benchmarks/text_kind.py --prepared PREPARED [--per-source 80 --letters 300 --seed 0]

Each document of at least 40 characters drawn (``--per-source`` of each source, by ``--seed``)
gives one excerpt of ``--letters`` characters at a random start; prints the confusion counts.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from apollo_restore.data.table import load_documents
from apollo_restore.data.textindex import TextIndex
from apollo_restore.restoration.text_kind import KIND_OF_SOURCE, read_kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepared", required=True)
    ap.add_argument("--per-source", type=int, default=80)
    ap.add_argument("--letters", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    index = TextIndex.shared()
    table = load_documents(Path(args.prepared), "validation", list(KIND_OF_SOURCE))
    rng = np.random.default_rng(args.seed)
    confusion: Counter[tuple[str, str]] = Counter()
    for source, kind in KIND_OF_SOURCE.items():
        texts = table.filter(pc.equal(table["source"], source))["text"].to_pylist()
        for j in rng.choice(len(texts), size=min(args.per_source, len(texts)), replace=False):
            text = texts[int(j)]
            if len(text) < 40:
                continue
            start = int(rng.integers(0, max(1, len(text) - args.letters)))
            confusion[(kind, read_kind(text[start : start + args.letters], index))] += 1
    print("| kind | read as documentary | literary | inscription | right |")
    print("|---|---:|---:|---:|---:|")
    for kind in KIND_OF_SOURCE.values():
        row = [confusion[(kind, other)] for other in KIND_OF_SOURCE.values()]
        print(f"| {kind} | " + " | ".join(map(str, row)) + f" | {confusion[(kind, kind)] / max(1, sum(row)):.2f} |")


if __name__ == "__main__":
    main()
