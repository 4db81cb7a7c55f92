"""The prepared documents table (``documents.parquet``): its schema, writer and reader.

    from apollo_restore.data.table import load_documents
    table = load_documents(Path("data/prepared"), "test", ["ddb"])

One row per document (normalised text in both uncertainty variants, supplied spans, split);
:mod:`apollo_restore.data.prepare` writes it, training, evaluation, retrieval and the n-gram
builder read it. The writer stamps the normaliser and splitter into the Parquet metadata and the
reader refuses a table written with another normaliser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from apollo_restore.data.normalise import NORMALISER
from apollo_restore.data.splits import SPLITTER

DOCUMENTS_FILE = "documents.parquet"

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("split", pa.string()),
        ("group", pa.string()),
        ("tm", pa.string()),
        ("date", pa.int32()),
        ("text", pa.string()),
        ("text_uncertain_excluded", pa.string()),
        ("supplied_start", pa.list_(pa.int32())),
        ("supplied_end", pa.list_(pa.int32())),
        ("letters", pa.int64()),
        ("lacunae", pa.int32()),
    ]
)


def write_documents(rows: list[dict[str, Any]], path: Path) -> None:
    """Write ``rows`` (dicts of :data:`SCHEMA`'s columns) to ``path`` atomically (zstd Parquet)."""
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    table = table.replace_schema_metadata({"normaliser": NORMALISER, "splitter": SPLITTER})
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)


def load_documents(prepared: Path, split: str | None = None, sources: list[str] | None = None) -> pa.Table:
    """Read ``documents.parquet`` from a prepared folder, optionally filtered.

    Raises:
        FileNotFoundError: ``prepared`` holds no ``documents.parquet``.
        ValueError: it was prepared with another normaliser.
    """
    path = Path(prepared) / DOCUMENTS_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {DOCUMENTS_FILE} in {prepared}: run `apollo-restore prepare` first")
    table = pq.read_table(path)
    found = (table.schema.metadata or {}).get(b"normaliser", b"").decode()
    if found != NORMALISER:
        raise ValueError(f"{path} was prepared with normaliser {found!r}, this code uses {NORMALISER!r}")
    if split is not None:
        table = table.filter(pc.equal(table["split"], split))
    if sources:
        table = table.filter(pc.is_in(table["source"], pa.array(sources)))
    return table
