"""Calibration: fitted per hint condition on gaps with known answers, applied to candidates."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from apollo_restore.errors import ModelFolderError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.model.folder import fingerprint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.load import calibration_for
from apollo_restore.restoration.ranking.calibration import OLD_FORMAT, Calibration, Scoring, gap_letters
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.schema.folder import Scaling
from apollo_restore.schema.restoration import Candidate
from apollo_restore.tune.calibration import fit
from tests.stubs import FixedReadings

#: stage 3 leaving every reading alone: these tests look at stage 4
NO_DEMOTIONS = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)


def _shown(cal: Calibration, cands: list[Candidate], hint: Hint) -> list[Candidate]:
    """The readings as the ranking shows them with calibration ``cal`` and no demotion."""
    return Ranking(NO_DEMOTIONS, cal).rank(cands, "", "", hint)


def test_fit_learns_that_an_overconfident_restorer_is_often_wrong():
    rng = np.random.default_rng(0)
    g, k = 400, 5
    logq = np.log(np.tile([0.9, 0.04, 0.03, 0.02, 0.01], (g, 1)))
    truth = np.where(rng.random(g) < 0.3, 0, -1)  # the top reading is right 30% of the time, else none is
    cal = fit(logq, np.zeros((g, k)), np.full(g, 5), np.full(g, -5.0), truth, ["exact"] * g)
    cands = [Candidate("α", 0.9, -5.0), Candidate("β", 0.04, -8.0), Candidate("γ", 0.03, -8.0)]
    top = _shown(cal, cands, Hint.exact(5))[0]
    assert top.calibrated and abs(top.prob - 0.3) < 0.08


@pytest.mark.parametrize("differs", ["letters", "score"])
def test_fit_can_say_certain_and_tells_sure_gaps_from_hard_ones(differs):
    """A restorer always 99 % sure of its first reading, right 97 % of the time on easy gaps and
    40 % on hard ones, which are longer (``letters``) or whose best reading the restorer itself
    finds improbable (``score``, nats per letter): the fit shows the easy ones well above 50 %
    (the family before issue 23 capped every reading at ½) and the hard ones near 40 %."""
    rng = np.random.default_rng(1)
    g = 600
    easy = np.arange(g) % 2 == 0
    letters = np.where(easy | (differs == "score"), 3, 15)
    top_score = letters * np.where(easy | (differs == "letters"), -0.2, -2.0)
    logq = np.log(np.tile([0.99, 0.006, 0.004], (g, 1)))
    truth = np.where(rng.random(g) < np.where(easy, 0.97, 0.4), 0, -1)
    cal = fit(logq, np.zeros_like(logq), letters, top_score, truth, ["exact"] * g)
    for group in (easy, ~easy):
        n, score = letters[group][0], top_score[group][0]
        sure = [Candidate("αβγ", 0.99, score), Candidate("δεζ", 0.006, -9.0), Candidate("ηθι", 0.004, -9.0)]
        right = (truth[group] == 0).mean()
        assert _shown(cal, sure, Hint.exact(int(n)))[0].prob == pytest.approx(right, abs=0.04)
    assert (truth[easy] == 0).mean() > 0.9


def test_gap_letters_follow_the_hint_or_the_best_reading():
    assert gap_letters("και ο", Hint.exact(7)) == 7 and gap_letters("και ο", Hint.span(4, 8)) == 4
    assert gap_letters("και ο", Hint.span(1, 3)) == 3 and gap_letters("και ο", Hint.span(6, 9)) == 6
    assert gap_letters("και ο", NO_HINT) == 4 and gap_letters("", NO_HINT) == 1


def test_calibration_demotes_unknown_words_and_leaves_room_for_none():
    cal = Calibration({"none": Scaling(a=1.0, b=0.0)}, unknown_word_penalty=3.0)
    cands = [Candidate("τραπ", 0.6, -1.0, unknown_words=["τραπ"]), Candidate("τραπεζης", 0.4, -1.5)]
    probs = cal.probabilities([0.6, 0.4], [True, False], cands[0], NO_HINT)
    assert probs[0] < probs[1] and sum(probs) < 1  # in the order given: it orders nothing
    out = _shown(cal, cands, NO_HINT)
    assert [c.text for c in out] == ["τραπεζης", "τραπ"] and [c.prob for c in out] == probs[::-1]
    assert cal.probabilities([0.6, 0.4], [True, False], cands[0], Hint.exact(4)) is None  # no such condition
    assert (NO_HINT.kind, Hint.exact(5).kind, Hint.span(4, 6).kind) == ("none", "exact", "range")


def test_a_calibration_fitted_on_another_model_is_ignored(tmp_path):
    (tmp_path / "apollo_restore.json").write_text("{}")
    scoring = Scoring(fingerprint(tmp_path), "neural", "fp32")
    cal = Calibration(dict.fromkeys(("exact", "range", "none"), Scaling()), info=scoring.info(tmp_path))
    cal.save(tmp_path / "calibration.json")
    assert calibration_for(tmp_path, scoring) is not None
    (tmp_path / "apollo_restore.json").write_text('{"training": {"note": "not what scores depend on"}}')
    assert calibration_for(tmp_path, replace(scoring, fingerprint=fingerprint(tmp_path))) is not None
    (tmp_path / "apollo_restore.json").write_text('{"presentation": {"demotions": {"repeat": 0.5}}}')
    assert calibration_for(tmp_path, replace(scoring, fingerprint=fingerprint(tmp_path))) is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.pop("kinds"), "kinds"),
        (lambda d: d.update(kinds=[]), "kinds"),
        (lambda d: d["kinds"].pop("real"), "kinds.real"),
        (lambda d: d["kinds"].pop("synthetic"), "kinds.synthetic"),
        (lambda d: d["kinds"]["real"].update(exact={"a": "1.0"}), "kinds.real.exact.a"),
        (lambda d: d["kinds"]["synthetic"].update(range=[1, 2]), "kinds.synthetic.range"),
        (lambda d: d.update(format="apollo_restore calibration.v3"), "format"),
        (lambda d: d.update(unknown_word_penalty=True), "unknown_word_penalty"),
    ],
)
def test_a_calibration_file_that_parses_but_is_not_one_is_a_numbered_error(tmp_path, change, field):
    data = json.loads((DEFAULT_MODEL / "calibration.json").read_text())
    change(data)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFolderError, match=rf"\[E505\] {re.escape(str(path))}: {re.escape(field)} ="):
        Calibration.load(path)


#: real lacunae: no room for "none of these"; synthetic gaps: a lot of it
REAL, SYNTHETIC = Scaling(a=1.0), Scaling(a=1.0, b=5.0)
KINDED = Calibration(
    dict.fromkeys(("exact", "range", "none"), REAL), 0.0, {}, dict.fromkeys(("exact", "range", "none"), SYNTHETIC)
)


def test_a_real_lacuna_gets_the_real_fit_and_a_synthetic_gap_the_synthetic_one():
    from apollo_restore.data.formats import GapExample
    from apollo_restore.restoration.predict import predict
    from apollo_restore.restoration.presentation.present import Presented

    presented = Presented(
        FixedReadings([Candidate("αβγ", 0.9, -1.0), Candidate("δεζ", 0.1, -3.0)], name="pool"),
        None,
        Ranking(NO_DEMOTIONS, KINDED),
    )
    restored = presented.candidates("", "", Hint.exact(3))  # a text's gap: a real lacuna
    assert restored[0].prob == pytest.approx(0.9) and restored[0].calibrated
    synthetic = presented.for_gap_kind("synthetic").candidates("", "", Hint.exact(3))
    assert synthetic[0].prob < 0.01 and presented.ranking.kind == "real"  # the original untouched
    gaps = [GapExample(f"g{i}", "ddb", "d", "", "", "αβγ", Hint.exact(3), kind) for i, kind in
            enumerate(["true", "synthetic", "true"])]  # fmt: skip
    probs = [p.candidates[0][1] for p in predict(presented, gaps, k=2, progress=False, batch=3)]
    assert probs[0] == probs[2] == pytest.approx(0.9) and probs[1] < 0.01


def test_a_calibration_of_an_unknown_kind_is_refused(tmp_path):
    data = json.loads((DEFAULT_MODEL / "calibration.json").read_text())
    data["kinds"]["copied"] = data["kinds"]["real"]
    (tmp_path / "calibration.json").write_text(json.dumps(data))
    with pytest.raises(ModelFolderError, match=r"\[E522\] .*kinds gives 'copied'.*takes real, synthetic"):
        Calibration.load(tmp_path)


def test_a_calibration_of_both_kinds_is_saved_and_read_back(tmp_path):
    KINDED.save(tmp_path / "calibration.json")
    data = json.loads((tmp_path / "calibration.json").read_text())
    assert data["format"] == "apollo_restore calibration.v2" and set(data["kinds"]) == {"real", "synthetic"}
    back = Calibration.load(tmp_path)
    assert back.for_kind("real") == KINDED.conditions and back.for_kind("synthetic") == KINDED.synthetic
    one = Calibration(dict.fromkeys(("exact", "range", "none"), REAL))  # one fit: it serves both kinds
    assert one.for_kind("synthetic") is one.conditions


def test_fit_gives_each_kind_its_own_parameters():
    rng = np.random.default_rng(2)
    g = 600
    logq = np.log(np.tile([0.9, 0.06, 0.04], (g, 1)))
    real = np.arange(g) % 2 == 0
    truth = np.where(rng.random(g) < np.where(real, 0.95, 0.3), 0, -1)  # real lacunae: right far more often
    kinds = np.where(real, "real", "synthetic")
    cal = fit(logq, np.zeros_like(logq), np.full(g, 3), np.full(g, -2.0), truth, ["exact"] * g, kinds=kinds)
    cands = [Candidate("αβγ", 0.9, -2.0), Candidate("δεζ", 0.06, -5.0), Candidate("ηθι", 0.04, -5.0)]
    for kind, right in (("real", 0.95), ("synthetic", 0.3)):
        shown = Ranking(NO_DEMOTIONS, cal, kind).rank(cands, "", "", Hint.exact(3))
        assert shown[0].prob == pytest.approx(right, abs=0.06), kind


def test_a_calibration_of_the_old_format_is_refused_naming_what_to_do(tmp_path):
    """A ``calibration.v1`` file (one fit, of synthetic gaps) would calibrate real lacunae with the
    synthetic fit: it is refused with ``E530``, which says to fit it again (or delete it)."""
    path = tmp_path / "calibration.json"
    scaling = {"a": 1.0, "b": -2.0, "c": 0.0, "d": 0.0, "e": 0.0, "f": 0.0}
    conditions = dict.fromkeys(("exact", "range", "none"), scaling)
    path.write_text(json.dumps({"format": OLD_FORMAT, "conditions": conditions, "unknown_word_penalty": 0.3}))
    with pytest.raises(ModelFolderError, match=r"\[E530\].*tune --what calibration"):
        Calibration.load(path)


def test_fit_lets_the_temperature_follow_the_gap_length():
    """Two readings at 60 / 40 % on every gap, one of them always right: the first is right 90 %
    of the time on 2-letter gaps and 60 % on 12-letter ones. One temperature cannot show both
    (the pool is the same); ``g`` (the temperature's change with log n) can."""
    rng = np.random.default_rng(3)
    g = 800
    short = np.arange(g) % 2 == 0
    letters = np.where(short, 2, 12)
    logq = np.log(np.tile([0.6, 0.4], (g, 1)))
    truth = np.where(rng.random(g) < np.where(short, 0.9, 0.6), 0, 1)
    cands = [Candidate("αβ", 0.6, -2.0), Candidate("γδ", 0.4, -2.5)]
    cal = fit(logq, np.zeros_like(logq), letters, np.full(g, -2.0), truth, ["exact"] * g)
    for n, right in ((2, 0.9), (12, 0.6)):
        assert _shown(cal, cands, Hint.exact(n))[0].prob == pytest.approx(right, abs=0.05), n
    assert cal.conditions["exact"].g < 0  # longer gaps: a lower inverse temperature
    one = fit(logq, np.zeros_like(logq), letters, np.full(g, -2.0), truth, ["exact"] * g, temperature=())
    assert one.conditions["exact"].g == one.conditions["exact"].h == 0
    shown = [_shown(one, cands, Hint.exact(n))[0].prob for n in (2, 12)]
    assert shown[0] == pytest.approx(shown[1], abs=0.02)  # one temperature: the same for both


def test_a_calibration_file_without_the_temperature_slopes_reads_them_as_zero(tmp_path):
    """``g`` and ``h`` came after ``calibration.v2``'s first files: a file without them maps
    scores exactly as before; slopes beyond ±10 (an infinite temperature) are refused."""
    data = json.loads((DEFAULT_MODEL / "calibration.json").read_text())
    for conditions in data["kinds"].values():
        for scaling in conditions.values():
            scaling.pop("g", None), scaling.pop("h", None)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    read = Calibration.load(path)
    assert all(s.g == s.h == 0 for kind in ("real", "synthetic") for s in read.for_kind(kind).values())
    data["kinds"]["real"]["none"]["g"] = 11.0
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFolderError, match=r"\[E505\] .*kinds\.real\.none\.g ="):
        Calibration.load(path)


def test_the_temperature_slopes_are_fitted_for_real_lacunae_only():
    rng = np.random.default_rng(4)
    g = 800
    letters = np.where(np.arange(g) % 2 == 0, 2, 12)
    logq = np.log(np.tile([0.6, 0.4], (g, 1)))
    truth = np.where(rng.random(g) < np.where(letters == 2, 0.9, 0.6), 0, 1)
    kinds = np.where(np.arange(g) % 4 < 2, "real", "synthetic")
    cal = fit(logq, np.zeros_like(logq), letters, np.full(g, -2.0), truth, ["exact"] * g, kinds=kinds)
    assert cal.conditions["exact"].g < 0 and cal.synthetic["exact"].g == cal.synthetic["exact"].h == 0
