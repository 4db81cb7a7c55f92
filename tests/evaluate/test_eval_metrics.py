"""Metrics and protocols against hand-computed cases."""

from __future__ import annotations

import pytest

from apollo_restore.evaluate.metrics import (
    GapScore,
    agnostic,
    answer_in_context,
    by_length,
    levenshtein,
    mean_of,
    prior,
    score_gap,
    summarise,
    uniform,
)


@pytest.mark.parametrize(
    "a, b, d",
    [
        ("", "", 0),
        ("αβγ", "", 3),
        ("", "αβ", 2),
        ("καιτου", "καιτου", 0),
        ("kitten", "sitting", 3),
        ("αβγδ", "βγδε", 2),
        ("αβ", "βα", 2),
    ],
)
def test_metrics_levenshtein(a, b, d):
    assert levenshtein(a, b) == d
    assert levenshtein(b, a) == d


@pytest.mark.parametrize(
    "text, key",
    [
        ("και του", "καιτου"),  # spaces
        ("χαιρειν· ομολογω", "χαιρεινομολογω"),  # middle dot
        ("τους", "τουσ"),  # final sigma folded
        ("ϲωτηρ", "σωτηρ"),  # lunate sigma
        ("Καὶ τῆς", "καιτησ"),  # case and accents
        ("ετους ιβ 12", "ετουσιβ"),  # digits
        ("--α…β.,;", "αβ"),  # gap markers and punctuation
    ],
)
def test_metrics_agnostic(text, key):
    assert agnostic(text) == key


def test_metrics_score_gap_space_agnostic_and_sigma():
    s = score_gap("και τους", ["καιτουσ", "x"])
    assert s == GapScore(length=7, top1=True, top20=True, cer=0.0, char_acc=1.0, dlen=0)


def test_metrics_score_gap_top20_and_cer():
    # top candidate "καιτων" vs "καιτου": 2 substitutions over 6 letters
    s = score_gap("και του", ["και των", "και τον", "και του"])
    assert (s.top1, s.top20) == (False, True)
    assert s.cer == pytest.approx(2 / 6) and s.char_acc == pytest.approx(4 / 6)
    assert s.dlen == 0


def test_metrics_score_gap_only_first_k_count():
    s = score_gap("αβ", ["γ", "δ", "αβ"], k=2)
    assert not s.top20


def test_metrics_score_gap_cer_floors_char_acc_and_dlen():
    s = score_gap("αβ", ["γδεζηθ"])  # 6 edits over 2 letters
    assert s.cer == pytest.approx(3.0) and s.char_acc == 0.0 and s.dlen == 4


def test_metrics_score_gap_no_prediction():
    s = score_gap("αβγ", [])
    assert (s.top1, s.top20, s.cer, s.char_acc, s.dlen, s.predicted) == (False, False, 1.0, 0.0, -3, False)


def test_metrics_score_gap_rejects_empty_target():
    with pytest.raises(ValueError):
        score_gap(" · ", ["α"])


def _skewed() -> list[GapScore]:
    """Eight 1-letter gaps all right, two 10-letter gaps all wrong, one 15-letter gap right."""
    right = lambda n: GapScore(n, True, True, 0.0, 1.0, 0)  # noqa: E731
    wrong = lambda n: GapScore(n, False, False, 1.0, 0.0, -n)  # noqa: E731
    return [right(1)] * 8 + [wrong(10)] * 2 + [right(15)]


def test_metrics_prior_protocol_unweighted_short_gaps():
    p = prior(_skewed())
    assert p.n == 10 and p.top1 == pytest.approx(0.8)  # 8 of the 10 gaps of 1–10 letters
    assert p.dlen == pytest.approx(-20 / 10)
    assert p.missing == [2, 3, 4, 5, 6, 7, 8, 9]


def test_metrics_uniform_protocol_weights_lengths_equally():
    u = uniform(_skewed())
    # lengths 1 (1.0), 10 (0.0), 15 (1.0) weigh the same: (1 + 0 + 1) / 3
    assert u.top1 == pytest.approx(2 / 3)
    assert u.n == 11 and u.lengths == [1, 10, 15]
    assert u.missing == [n for n in range(1, 21) if n not in (1, 10, 15)]
    assert u.top1 != prior(_skewed()).top1  # the two protocols differ on skewed data
    assert mean_of(_skewed()).top1 == pytest.approx(9 / 11)


def test_metrics_uniform_ignores_lengths_outside_range():
    scores = [GapScore(1, True, True, 0.0, 1.0, 0), GapScore(25, False, False, 1.0, 0.0, 0)]
    assert uniform(scores).top1 == 1.0 and uniform(scores).n == 1


def test_metrics_empty_groups():
    assert uniform([]).top1 is None and prior([]).n == 0


def test_metrics_summarise_per_length_table():
    out = summarise(_skewed())
    assert set(out) == {"prior", "uniform", "all", "per_length"}
    assert list(out["per_length"]) == ["1", "10", "15"]
    assert out["per_length"]["10"]["top1"] == 0.0 and out["per_length"]["1"]["n"] == 8
    assert by_length(_skewed())[15].top20 == 1.0


def test_reliability_gives_ece_and_bins():
    from apollo_restore.evaluate.metrics import reliability

    out = reliability([0.9, 0.9, 0.1, 0.1], [True, False, False, False], bins=10)
    assert out["n"] == 4 and abs(out["ece"] - (0.5 * 0.4 + 0.5 * 0.1)) < 1e-9
    assert [(b["n"], b["accuracy"]) for b in out["bins"]] == [(2, 0.0), (2, 0.5)]
    assert reliability([], [])["ece"] is None


def test_answer_in_context_finds_the_answer_or_a_long_word_of_it():
    context = ("ομολογει ", " απολλωνιου του Παυσιρίωνος")
    assert answer_in_context(*context, "παυσιριωνος")  # the whole answer, case and accents folded
    assert answer_in_context(*context, "ογει παυσιριωνος")  # one word of ≥ 5 letters stands there
    assert not answer_in_context(*context, "του αμμωνιου")  # 'του' is too short to count
    assert not answer_in_context("", "", "απολλωνιου")
