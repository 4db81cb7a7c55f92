"""Pack the normalised train split into the package: ``models/corpus/train-text.tsv.xz``.

    python scripts/pack_train_text.py --prepared data/prepared [--sources ddb,dclp,inscription,literary]

Only the **train** split is read (validation and test documents never enter the text index), and
every text must be in norm.v1's one normal form (a fixed point of ``normalise_with_gaps``: E412).
Prints the size per source; the package budget for the packed text is about 18 MB.
"""

from __future__ import annotations

import argparse
import lzma
from pathlib import Path

from apollo_restore.data.prepare import load_documents
from apollo_restore.data.textindex import PACKED_TEXT, pack_train_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path("data/prepared"))
    parser.add_argument("--sources", default="ddb,dclp,inscription,literary")
    parser.add_argument("--out", type=Path, default=PACKED_TEXT)
    args = parser.parse_args()
    table = load_documents(args.prepared, split="train", sources=args.sources.split(","))
    ids, sources, texts, splits = (table.column(c).to_pylist() for c in ("id", "source", "text", "split"))
    for source in args.sources.split(","):
        sample = "\n".join(t for s, t in zip(sources, texts) if s == source).encode()
        print(f"{source}: {sum(s == source for s in sources):,} documents, {len(sample) / 2**20:.1f} MB text, "
              f"{len(lzma.compress(sample, preset=6)) / 2**20:.1f} MB xz (preset 6)")  # fmt: skip
    size = pack_train_text(ids, sources, texts, splits, args.out)
    print(f"wrote {args.out}: {len(ids):,} documents, {size / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
