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
    ids, sources, splits, texts = (table[c].to_pylist() for c in ("id", "source", "split", "text"))
    totals = {
        source: sum(len(t) for t, s, sp in zip(texts, sources, splits) if s == source and sp == "train")
        for source in caps
    }
    share = {source: min(1.0, cap / max(totals[source], 1)) for source, cap in caps.items()}
    kept = [
        i
        for i, (doc_id, source, split) in enumerate(zip(ids, sources, splits))
        if source not in caps or split != "train" or zlib.crc32(doc_id.encode()) / 2**32 < share[source]
    ]
    table = table.take(kept)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = pq.read_schema(args.prepared / DOCUMENTS_FILE).metadata
    pq.write_table(
        table.replace_schema_metadata(meta), args.out / DOCUMENTS_FILE, compression="brotli", compression_level=11
    )
    print(
        f"{table.num_rows} documents, {sum(len(t) for t in table['text'].to_pylist()):,} characters "
        f"→ {args.out / DOCUMENTS_FILE}"
    )


if __name__ == "__main__":
    main()
