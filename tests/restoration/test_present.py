"""Truncated readings: flagged by the word they end with, demoted by a factor (notes and the other
demotions: tests/restoration/test_notes.py)."""

from __future__ import annotations

import pytest

from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT
from apollo_restore.restoration.presentation.present import Presented, annotate
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.doubts import doubts, is_truncated
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.ranking.pool import to_candidates
from apollo_restore.schema.restoration import percent
from tests.stubs import FixedReadings

FORMS = EditionForms.from_forms(["τραπέζης", "τῆς", "κυρίῳ", "χαίρειν", "τῷ"])


def _annotated(prefix: str, suffix: str):
    presented = Presented(
        FixedReadings([("τραπ", -1.0), ("τραπεζης", -1.2), ("κυριωι", -3.0)]),
        FORMS,
        Ranking(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)),
    )
    return presented.candidates(prefix, suffix, NO_HINT, 3)


def test_a_reading_ending_inside_an_unknown_word_before_a_new_word_is_truncated():
    cands = _annotated("της ", " χαιρειν")
    assert [is_truncated(c, "της ", " χαιρειν") for c in cands] == [True, False, False]


def test_the_prefix_partial_word_joins_the_reading():
    cands = annotate(to_candidates([("πεζης", -1.0), ("π", -1.5)]), FORMS, "της τρα", " χαιρειν")
    assert [is_truncated(c, "της τρα", " χαιρειν") for c in cands] == [False, True]  # τραπεζης, τραπ


def test_where_the_word_runs_on_after_the_gap_a_reading_ending_a_word_there_is_truncated():
    """``[.4]εζης``: the text says the word goes on across the gap's edge; ``τραπ`` completes it,
    a whole word before it (``τραπεζης`` + ``εζης``, ``κυριωι`` + ``εζης``) contradicts it."""
    cands = _annotated("της ", "εζης χαιρειν")
    assert [is_truncated(c, "της ", "εζης χαιρειν") for c in cands] == [False, True, True]


def test_the_word_a_reading_begins_with_counts_at_the_left_edge():
    cands = annotate(to_candidates([("ιωι χαιρειν", -1.0), ("τωι", -1.5)]), FORMS, "τωι κυρ", " ")
    assert [is_truncated(c, "τωι κυρ", " ") for c in cands] == [False, True]  # κυριωι; κυρτωι


def test_the_boundary_at_the_gaps_edge_ranks_the_readings():
    """The issue's pair: ``καὶ [.6]του`` and ``καὶ [.6] του`` rank a six-letter word differently."""
    forms = EditionForms.from_forms(["καί", "παντός", "τοῦ", "αὐτοῦ"])
    cands = to_candidates([("παντος", -1.0), ("αυ", -1.2)])
    ranking = Ranking(Demotions(truncated=0.1))
    joined = ranking.rank(annotate(cands, forms, "και ", "του μηνος"), "και ", "του μηνος", NO_HINT)
    apart = ranking.rank(annotate(cands, forms, "και ", " του μηνος"), "και ", " του μηνος", NO_HINT)
    assert [c.text for c in joined] == ["αυ", "παντος"] and joined[1].unknown_words == ["παντοςτου"]
    assert [c.text for c in apart][0] == "παντος"


def test_demotion_reranks_and_renormalises():
    cands = _annotated("της ", " χαιρειν")
    factors = [Demotions(truncated=0.1).factor(doubts(c, "της ", " χαιρειν", NO_HINT)) for c in cands]
    assert factors == [0.1, 1.0, 1.0]
    out = Ranking(Demotions(truncated=0.1)).rank(cands, "της ", " χαιρειν", NO_HINT)
    assert [c.text for c in out] == ["τραπεζης", "κυριωι", "τραπ"]
    assert abs(sum(c.prob for c in out) - 1.0) < 1e-9
    assert (
        Ranking(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None)).rank(
            cands, "της ", " χαιρειν", NO_HINT
        )
        == cands
    )


def test_presented_applies_its_factor():
    presented = Presented(
        FixedReadings([("τραπ", -1.0), ("τραπεζης", -1.2), ("κυριωι", -3.0)]), FORMS, Ranking(Demotions(truncated=0.1))
    )
    assert presented.candidates("της ", " χαιρειν", NO_HINT, 3)[0].text == "τραπεζης"


@pytest.mark.parametrize(
    "prob, shown", [(0.0, "<1 %"), (0.0049, "<1 %"), (0.005, "1 %"), (0.42, "42 %"), (0.994, "99 %"), (0.995, ">99 %")]
)
def test_percent_is_written_as_every_interface_shows_it(prob, shown):
    """One rule for the CLI, the page (app.js mirrors it) and the export: never a bare 0 % or 100 %."""
    assert percent(prob) == shown
