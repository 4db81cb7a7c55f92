"""``apollo_restore.tune.calibration``: records, and the two-fold cross-fitting over documents."""

from __future__ import annotations

import math
import zlib

from apollo_restore.data.formats import GapExample
from apollo_restore.hint import Hint
from apollo_restore.schema.restoration import Candidate
from apollo_restore.tune.calibration import cross_fitted, fit_calibration, record


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
    probs, right = cross_fitted(records)
    assert probs.shape == right.shape == (120, 5)
    assert (probs >= 0).all() and (probs.sum(1) <= 1 + 1e-9).all()
    assert right[:, 0].sum() == sum(r["truth"] == 0 for r in records)


def test_a_half_without_a_condition_is_not_cross_fitted_but_the_fit_is_made():
    records = [_record(i) | {"doc": "one"} for i in range(30)]  # one document: one half is empty
    assert cross_fitted(records) is None
    cal = fit_calibration(records)
    assert set(cal.conditions) == {"exact", "range", "none"} and "ece_after_cross_fitted" not in cal.info
    assert cal.info["gaps"] == 30 and cal.info["ece_before"]["top1"] >= 0


def test_record_finds_the_answer_space_agnostically():
    gap = GapExample("g", "ddb", "d", "", "", "και του", Hint.exact(6))
    cands = [Candidate("καιτο", 0.6, -1.0), Candidate("και του", 0.4, -2.0, unknown_words=["του"])]
    r = record(gap, cands)
    assert r["truth"] == 1 and r["unknown"] == [False, True] and r["top_score"] == -1.0
    assert r["logq"][0] == math.log(0.6) and r["condition"] == "exact"


def test_a_first_reading_that_misses_the_count_and_is_never_right_is_given_a_miss_penalty():
    """Issue 64: a reading noted "2 letters, hint 3" first in half the gaps and never right: the fit
    chooses a positive μ, and the literary texts take the synthetic gaps' parameters."""
    records = []
    for i in range(240):
        r = _record(i) | {"kind": ("real", "synthetic")[i % 2]}
        if i % 4 in (1, 2):  # the first reading has 2 letters (misses the count 3), the second is right
            r |= {"texts": ["αβ"] + r["texts"][1:], "truth": 1}
        records.append(r)
    cal = fit_calibration(records)
    assert cal.miss_penalty > 0 and cal.info["miss_penalty_log_loss_cross_fitted"]["0.0"] > min(
        cal.info["miss_penalty_log_loss_cross_fitted"].values()
    )
    assert cal.texts["literary"] == cal.for_kind("synthetic")
