"""One place ranks (issue 44, part 4): the stages of :mod:`apollo_restore.restoration.ranking` on
hand-made examples, the order by ``p``, an ensemble and a presentation that only call it."""

from __future__ import annotations

import math

import pytest

from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.presentation.present import Presented, annotate
from apollo_restore.restoration.ranking.calibration import Calibration
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.order import FITTED_STAGES, STAGES, Ranking, best_first
from apollo_restore.restoration.ranking.pool import ranked_pool, to_candidates, weighted_mean
from apollo_restore.schema.folder import Scaling
from apollo_restore.schema.restoration import Candidate
from apollo_restore.tune.folder import STEPS
from tests.stubs import FixedReadings, Scored

NO_DEMOTIONS = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)


def test_the_stages_are_named_once_and_tune_fits_them_by_those_names():
    assert STAGES == ("members", "weights", "demotions", "calibration")
    assert STEPS == FITTED_STAGES == STAGES[1:]


def test_stage_2_is_the_weighted_mean_over_the_language_models_weights():
    scores = [[-1.0, -3.0], [-2.0, -1.0], [-1.0, 0.0]]  # neural, classical, prior
    s = weighted_mean(scores, [1.0, 3.0, 4.0], ["neural", "classical", "prior"])
    assert s == pytest.approx([(-1.0 - 6.0 - 4.0) / 4.0, (-3.0 - 3.0 + 0.0) / 4.0])
    assert weighted_mean([[-2.0]], [2.0], ["prior"]) == [-4.0]  # no language model: the sum
    pool = ranked_pool(["α", "β"], s)
    assert [c.text for c in pool] == ["β", "α"]
    assert pool[0].prob == pytest.approx(1 / (1 + math.exp(s[0] - s[1])))
    assert [c.log_score for c in pool] == [s[1], s[0]]
    assert ranked_pool(["α", "β", "γ"], [-1.0, -1.0, -1.0], 2) == to_candidates(
        [("α", -1.0), ("β", -1.0), ("γ", -1.0)], 2
    )


def test_stages_3_and_4_follow_the_formula_of_the_docstring():
    s = [-1.0, -2.0, -3.0]
    pool = ranked_pool(["αβγ", "δεζ", "ηθι"], s)
    pool[2] = Candidate(pool[2].text, pool[2].prob, pool[2].log_score, unknown_words=["ηθι"])
    flags = [(False, True, False), (False, False, False), (False, False, False)]  # the first repeats
    scaling = Scaling(a=2.0, b=-1.0, c=0.5, d=0.1, e=0.2, f=0.3, g=0.4, h=-0.05)
    ranking = Ranking(
        Demotions(truncated=1.0, repeat=0.2, hint_miss=1.0, count_floor=None),
        Calibration({"none": scaling}, unknown_word_penalty=1.0),
    )
    shown = ranking.rank_doubted(pool, flags, NO_HINT)
    # by hand
    q = [math.exp(x) / sum(math.exp(y) for y in s) for x in s]
    weighted = [q[0] * 0.2, q[1], q[2]]
    q2 = [w / sum(weighted) for w in weighted]
    best = 1  # δεζ: the highest q' once the repeat is demoted
    ordered = sorted(q2, reverse=True)
    margin = math.log(ordered[0]) - math.log(ordered[1])
    a = 2.0 * math.exp(0.4 * math.log(3) - 0.05 * min(margin, 10))  # the temperature of this gap
    z = [a * math.log(q2[0]), a * math.log(q2[1]), a * math.log(q2[2]) - 1.0]
    none = -1.0 - 0.5 * max(z) + 0.1 * math.log(3) + 0.2 * margin + 0.3 * s[best]
    total = sum(math.exp(x) for x in z) + math.exp(none)
    p = [math.exp(x) / total for x in z]
    assert [c.text for c in shown] == ["δεζ", "αβγ", "ηθι"]
    assert [c.prob for c in shown] == pytest.approx([p[1], p[0], p[2]], rel=1e-9)
    assert all(c.calibrated for c in shown)
    assert [c.log_score for c in shown] == [s[1], s[0], s[2]]  # s unchanged
    # without a calibration: p = q'; with every φ 1: q' = q and the stage-2 order
    assert [c.prob for c in Ranking(ranking.demotions).rank_doubted(pool, flags, NO_HINT)] == pytest.approx(
        [q2[1], q2[0], q2[2]]
    )
    assert Ranking(NO_DEMOTIONS).rank_doubted(pool, flags, NO_HINT) == pool


def test_the_order_is_by_p_and_ties_keep_the_order_before():
    assert best_first([0.2, 0.5, 0.2, 0.1]) == [1, 0, 2, 3]
    assert best_first([0.2, 0.2, 0.2], [0.1, 0.3, 0.1]) == [1, 0, 2]
    pool = ranked_pool(["α", "β", "γ", "δ"], [-1.0, -1.0, -2.0, -2.0])  # two ties
    shown = Ranking(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)).rank_doubted(
        pool, [(False, False, False)] * 4, NO_HINT
    )
    assert [c.text for c in shown] == ["α", "β", "γ", "δ"]
    cal = Calibration({"exact": Scaling(a=0.5, b=0.0, c=1.0)}, unknown_word_penalty=5.0)
    pool[0] = Candidate("α", pool[0].prob, -1.0, unknown_words=["α"])
    shown = Ranking(NO_DEMOTIONS, cal).rank_doubted(pool, [(False, False, False)] * 4, Hint.exact(1))
    probs = [c.prob for c in shown]
    assert probs == sorted(probs, reverse=True) and [c.text for c in shown] == ["β", "γ", "δ", "α"]


def test_an_ensemble_ranks_with_the_stage_2_functions():
    a = Scored({"αβ": -1.0, "γδ": -2.0}, name="a", kind="neural", unknown=-20.0)
    b = Scored({"γδ": -0.5, "εζ": -0.7}, name="b", kind="classical", unknown=-20.0)
    prior = Scored({"αβ": -3.0}, name="prior", kind="prior", unknown=-20.0)
    ens = Ensemble([(a, 1.0), (b, 2.0), (prior, 1.0)])
    readings = ["αβ", "γδ", "εζ"]  # the union, in the order first proposed
    scores = [m.score_readings("", "", NO_HINT, readings) for m in (a, b, prior)]
    s = weighted_mean(scores, [1.0, 2.0, 1.0], ["neural", "classical", "prior"])
    assert ens.candidates("", "", NO_HINT, k=10) == ranked_pool(readings, s)
    assert ens.score_readings("", "", NO_HINT, readings) == s


FORMS = EditionForms.from_forms(["τραπέζης", "τῆς", "χαίρειν", "καὶ"])


#: a fixed pool, best first
POOL = [("τραπ", -1.0), ("χαιρειν χαιρειν", -1.1), ("τραπεζης", -1.2), ("και", -3.0)]


@pytest.mark.parametrize("hint", [NO_HINT, Hint.exact(8), Hint.span(3, 8)])
def test_the_presentation_shows_the_rankings_order_and_never_reorders(hint):
    prefix, suffix = "της ", " χαιρειν"
    cal = Calibration({c: Scaling(a=0.7, b=-2.0, c=0.3) for c in ("exact", "range", "none")}, unknown_word_penalty=1.5)
    ranking = Ranking(Demotions(), cal)
    presented = Presented(FixedReadings(POOL, name="pool", k=3), FORMS, ranking)
    pool = FixedReadings(POOL, name="pool", k=3).candidates(prefix, suffix, hint, 100)
    expected = ranking.rank(annotate(pool, FORMS, prefix, suffix, hint), prefix, suffix, hint)
    assert presented.candidates(prefix, suffix, hint, 3) == expected[:3]
    assert presented.candidates(prefix, suffix, hint, 10) == expected
    assert [c.prob for c in expected] == sorted((c.prob for c in expected), reverse=True)
