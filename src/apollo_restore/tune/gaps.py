"""The validation gaps ``tune`` fits on: synthetic gaps and real lacunae (the editors'
supplements) of a prepared corpus's validation split.

gaps = validation_gaps(Path("data/prepared"), {"ddb": 5}, ("exact", "range", "none"), seed=0)
real = validation_lacunae(Path("data/prepared"), {"ddb": 100}, seed=0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from apollo_restore.data.formats import GapExample
from apollo_restore.data.table import DOCUMENTS_FILE, SCHEMA, load_documents
from apollo_restore.evaluate.gapsets import (
    build_synthetic,
    true_lacunae_under_hints,
)
from apollo_restore.tune.folder import TuneError

#: Hint conditions fitted on: each has its own calibration.
CONDITIONS = ("exact", "range", "none")


def validation_gaps(
    prepared: Path,
    per_length: dict[str, int],
    conditions: Sequence[str] = CONDITIONS,
    seed: int = 0,
    limit: int | None = None,
) -> list[GapExample]:
    """Synthetic gaps (letter counts 1–20, ``per_length[source]`` spans each, the same spans under
    every condition) of each source's **validation** documents, never the test split, in an order
    shuffled by ``seed`` (any first part is a sample over lengths and conditions), the first
    ``limit`` of them.

    Raises:
        TuneError: ``E705`` when ``prepared``'s ``documents.parquet`` is missing or cannot be read
            (:func:`validation_documents`), ``E703`` when the sources' validation documents give no gap.
    """
    gaps: list[GapExample] = []
    for source, count in per_length.items():
        table = validation_documents(prepared, source)
        gaps += build_synthetic(table, source, "validation", count, conditions, seed=seed)
    if not gaps:
        raise TuneError("E703", prepared=prepared, sources=", ".join(per_length))
    np.random.default_rng(seed).shuffle(gaps)
    return gaps[:limit]


def validation_lacunae(prepared: Path, per_source: dict[str, int], seed: int = 0) -> list[GapExample]:
    """Real lacunae (``kind="true"``): up to ``per_source[source]`` editor supplements of 1–20
    letters of each source's **validation** documents (drawn by ``seed``), each asked with its
    exact count, a range that contains it (:func:`~apollo_restore.evaluate.gapsets.range_hint`) and
    no count, in document order.

    Raises:
        TuneError: ``E705`` as :func:`validation_documents`.
    """
    gaps: list[GapExample] = []
    for source, count in per_source.items():
        if count <= 0:
            continue
        gaps += true_lacunae_under_hints(validation_documents(prepared, source), source, "validation", count, seed)
    return gaps


def validation_documents(prepared: Path, source: str) -> pa.Table:
    """The validation documents of ``source`` in ``prepared``'s ``documents.parquet``, with every
    column a prepared corpus has.

    Raises:
        TuneError: ``E705`` naming the file and why it cannot be read: it is missing, it is not a
            Parquet file (truncated, garbage), it lacks columns, or it was prepared with another
            normaliser.
    """
    path = Path(prepared) / DOCUMENTS_FILE
    if not path.is_file():
        reason = "it is a folder" if path.exists() else "it is missing"
        raise TuneError("E705", path=path, prepared=prepared, reason=reason)
    try:
        table = load_documents(prepared, "validation", [source])
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as err:
        reason = (str(err).splitlines() or [type(err).__name__])[0][:200]
        raise TuneError("E705", path=path, prepared=prepared, reason=reason) from None
    lacking = [name for name in SCHEMA.names if name not in table.column_names]
    if lacking:
        raise TuneError("E705", path=path, prepared=prepared, reason=f"it has no column {', '.join(lacking)}")
    return table
