"""Pack the train and validation text of a prepared folder into one small Parquet file, for
training on a machine that cannot read ../shared (e.g. a lent GPU).

    python scripts/pack_training_text.py --prepared data/prepared --out data/gpu/prepared \
        --max-chars literary=15000000

Writes ``OUT/documents.parquet`` with the columns training reads (id, source, split, text) and the
prepared folder's normaliser stamp, brotli-compressed. ``--max-chars SOURCE=N`` keeps a
deterministic sample (by document id hash) of about N characters of a source's train split.
"""

from __future__ import annotations

import argparse
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from apollo_restore.data.prepare import DOCUMENTS_FILE, load_documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-chars", action="append", default=[], help="SOURCE=N")
    args = parser.parse_args()
    caps = {k: int(v) for k, v in (item.split("=") for item in args.max_chars)}
    table = load_documents(args.prepared).select(["id", "source", "split", "text"])
    table = table.filter(pc.is_in(table["split"], pa.array(["train", "validation"])))
    keep = []
    for source, cap in caps.items():
        rows = [
            i
            for i, (s, sp) in enumerate(zip(table["source"].to_pylist(), table["split"].to_pylist()))
            if s == source and sp == "train"
        ]
        ids, texts = table["id"].to_pylist(), table["text"].to_pylist()
        total = sum(len(texts[i]) for i in rows)
        share = min(1.0, cap / max(total, 1))
        keep += [i for i in rows if zlib.crc32(ids[i].encode()) / 2**32 < share]
    capped = {i for i in range(table.num_rows)} - {
        i
        for i, (s, sp) in enumerate(zip(table["source"].to_pylist(), table["split"].to_pylist()))
        if s in caps and sp == "train"
    }
    table = table.take(sorted(capped | set(keep)))
    args.out.mkdir(parents=True, exist_ok=True)
    meta = pq.read_schema(args.prepared / DOCUMENTS_FILE).metadata
    pq.write_table(
        table.replace_schema_metadata(meta), args.out / DOCUMENTS_FILE, compression="brotli", compression_level=11
    )
    print(
        f"{table.num_rows} documents, {sum(len(t) for t in table['text'].to_pylist()):,} characters → {args.out / DOCUMENTS_FILE}"
    )


if __name__ == "__main__":
    main()
