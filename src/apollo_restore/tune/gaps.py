"""The validation gaps ``tune`` fits on: synthetic gaps of a prepared corpus's validation split.

gaps = validation_gaps(Path("data/prepared"), {"ddb": 5}, ("exact", "range", "none"), seed=0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from apollo_restore.data.formats import GapExample
from apollo_restore.data.table import load_documents
from apollo_restore.evaluate.gapsets import build_synthetic
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
        FileNotFoundError: no ``documents.parquet`` in ``prepared``.
        TuneError: ``E703`` when the sources' validation documents give no gap.
    """
    gaps: list[GapExample] = []
    for source, count in per_length.items():
        table = load_documents(prepared, "validation", [source])
        gaps += build_synthetic(table, source, "validation", count, conditions, seed=seed)
    if not gaps:
        raise TuneError("E703", prepared=prepared, sources=", ".join(per_length))
    np.random.default_rng(seed).shuffle(gaps)
    return gaps[:limit]
