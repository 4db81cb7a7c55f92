"""Fixtures: the toy documents of :mod:`evaltoy` as a table and as a prepared folder."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from evaltoy import toy_rows

from apollo_restore.data.table import SCHEMA, write_documents


@pytest.fixture
def toy_table() -> pa.Table:
    return pa.Table.from_pylist(toy_rows(), schema=SCHEMA)


@pytest.fixture
def toy_prepared(tmp_path) -> Path:
    folder = tmp_path / "prepared"
    folder.mkdir()
    write_documents(toy_rows(), folder / "documents.parquet")
    return folder
