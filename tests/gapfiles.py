"""Gap-set lines for the job tests (``predict`` and its doors): one gap of three letters in a
fixed context, any field changed by keyword, written as a JSONL gap set."""

from __future__ import annotations

import json
from pathlib import Path

PREFIX = "ετους δευτερου και εικοστου "
SUFFIX = " καισαρος του κυριου τυβι"


def gap(i: int, **changes) -> dict:
    """Gap ``g{i}`` of the fixed context, ``changes`` replacing its fields."""
    row = {"id": f"g{i}", "source": "ddb", "doc": "d", "prefix": PREFIX, "suffix": SUFFIX, "target": "αβγ", "hint": 3}
    return {**row, **changes}


def write_gaps(path: Path, rows: list[dict]) -> Path:
    """``rows`` as a gap-set file at ``path``."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path
