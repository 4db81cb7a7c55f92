"""``scripts/fit_calibration.py``: its two-fold cross-fitting over documents."""

from __future__ import annotations

import importlib.util
import math
import zlib
from pathlib import Path

from apollo_restore.hint import Hint

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fit_calibration.py"
_spec = importlib.util.spec_from_file_location("fit_calibration", SCRIPT)
fit_calibration = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit_calibration)


def _record(i: int) -> dict:
    """A gap whose pool is 3 readings long in one half of the documents and 5 in the other."""
    doc = f"doc{i}"
    width = 3 if zlib.crc32(doc.encode()) % 2 == 0 else 5
    probs = [0.5] + [0.5 / (width - 1)] * (width - 1)
    return {
        "id": f"g{i}", "doc": doc, "condition": ("exact", "range", "none")[i % 3], "hint": Hint.exact(3).to_json(),
        "truth": 0 if i % 4 else -1, "texts": [f"αβ{chr(0x3b1 + j)}" for j in range(width)],
        "logq": [math.log(p) for p in probs], "unknown": [False] * width, "top_score": -5.0,
    }  # fmt: skip


def test_cross_fitting_joins_halves_whose_largest_pools_differ():
    # with the document members the halves' largest pools differ (92 and 95 readings on ddb validation)
    records = [_record(i) for i in range(120)]
    assert {len(r["texts"]) for r in records} == {3, 5}
    probs, right = fit_calibration.cross_fitted(records)
    assert probs.shape == right.shape == (120, 5)
    assert (probs >= 0).all() and (probs.sum(1) <= 1 + 1e-9).all()
    assert right[:, 0].sum() == sum(r["truth"] == 0 for r in records)
