"""Copying from the gap's own document: proposals of the context's words and the document's
evidence for any reading."""

from __future__ import annotations

import pytest

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.members.document_copy import DocumentCopy
from apollo_restore.restoration.members.ensemble import Ensemble
from tests.stubs import Scored

# a name lost in the gap stands in full later in the document
PREFIX = "ομολογει διον"
SUFFIX = "ρας μετα κυριου του ανδρος παρα διονυσοδωρας"


def test_the_document_contributes_the_name_it_repeats():
    readings = [c.text for c in DocumentCopy().candidates(PREFIX, SUFFIX, NO_HINT)]
    assert readings[0] == "υσοδω"
    assert "υσοδω" in [c.text for c in DocumentCopy().candidates(PREFIX, SUFFIX, Hint.exact(5))]
    assert DocumentCopy().candidates(PREFIX, SUFFIX, Hint.exact(3)) == []  # no copy of 3 letters joins both edges


def test_the_document_supports_a_copy_and_charges_nothing_per_letter_it_cannot_judge():
    copy = DocumentCopy()
    copied, unrelated, longer = copy.score_readings(PREFIX, SUFFIX, NO_HINT, ["υσοδω", "ξψξ", "ξψξξψξξψ"])
    # the unrelated readings contradict the document only where "ρας" meets them (it has "ωρας")
    assert copied > 10 > 0 > unrelated == pytest.approx(longer)
    # the gap is never its own context: without the later mention, the name has no support
    assert copy.score_readings(PREFIX, "ρας μετα κυριου", NO_HINT, ["υσοδω"]) == [0.0]
    assert copy.candidates(PREFIX, "ρας μετα κυριου", NO_HINT) == []


def test_copies_across_spaces_keep_the_documents_spelling():
    prefix, suffix = "παυσιριων απολλωνιου του", " και αλλοι παυσιριων απολλωνιου του παυσιριωνος"
    readings = [c.text for c in DocumentCopy().candidates(prefix, suffix, NO_HINT)]
    assert " παυσιριωνος" not in readings and "παυσιριωνος" in readings


def test_an_ensemble_with_the_copy_member_prefers_the_repeated_name():
    model = Scored({"υσιο": -4.0, "υσοδω": -6.0})
    assert Ensemble([(model, 1.0)]).candidates(PREFIX, SUFFIX, NO_HINT)[0].text == "υσιο"
    ens = Ensemble([(model, 1.0), (DocumentCopy(), 0.2)])
    best = ens.candidates(PREFIX, SUFFIX, NO_HINT)[0]
    evidence = DocumentCopy().score_readings(PREFIX, SUFFIX, NO_HINT, ["υσοδω"])[0]
    assert best.text == "υσοδω" and best.log_score == pytest.approx(-6.0 + 0.2 * evidence)
