"""Calibration: fitted per hint condition on gaps with known answers, applied to candidates."""

from __future__ import annotations

import numpy as np

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.calibration import Calibration, Scaling, fingerprint, fit, load_for
from apollo_restore.restore.types import Candidate


def test_fit_learns_that_an_overconfident_filler_is_often_wrong():
    rng = np.random.default_rng(0)
    g, k = 400, 5
    logq = np.log(np.tile([0.9, 0.04, 0.03, 0.02, 0.01], (g, 1)))
    truth = np.where(rng.random(g) < 0.3, 0, -1)  # the top reading is right 30% of the time, else none is
    cal = fit(logq, np.zeros((g, k)), truth, ["exact"] * g, penalties=(0.0,))
    top = cal.apply([Candidate("α", 0.9, 0.0), Candidate("β", 0.04, 0.0), Candidate("γ", 0.03, 0.0)], Hint.exact(5))[0]
    assert top.calibrated and abs(top.prob - 0.3) < 0.08


def test_apply_demotes_unknown_words_and_leaves_room_for_none():
    cal = Calibration({"none": Scaling(1.0, 0.0)}, unknown_word_penalty=3.0)
    cands = [Candidate("τραπ", 0.6, -1.0, unknown_words=["τραπ"]), Candidate("τραπεζης", 0.4, -1.5)]
    out = cal.apply(cands, NO_HINT)
    assert [c.text for c in out] == ["τραπεζης", "τραπ"] and sum(c.prob for c in out) < 1
    assert (NO_HINT.kind, Hint.exact(5).kind, Hint.span(4, 6).kind) == ("none", "exact", "range")


def test_a_calibration_fitted_on_another_model_is_ignored(tmp_path):
    (tmp_path / "apollo_restore.json").write_text("{}")
    cal = Calibration({"none": Scaling()}, info={"model_fingerprint": fingerprint(tmp_path)})
    cal.save(tmp_path / "calibration.json")
    assert load_for(tmp_path) is not None
    (tmp_path / "apollo_restore.json").write_text('{"changed": 1}')
    assert load_for(tmp_path) is None
