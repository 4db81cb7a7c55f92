"""Readings made of the gap's own document's words (and of known words): proposals that must
contribute the word the document repeats, edge completion on both sides, a score for it."""

from __future__ import annotations

import pytest

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.members.document_words import (
    DocumentWords,
    Vocabulary,
    WordConfig,
    document_letters,
    word_readings,
)
from apollo_restore.restoration.members.ensemble import Ensemble
from tests.stubs import Scored

# a hand-made contract: the lessor's name is lost in the first line and stands in full a line later
PREFIX = "ομολογει παυσ"
SUFFIX = "ος απολλωνιου μεμισθωκεναι αυτωι παυσιριωνι απολλωνιου την γην"


def test_the_document_contributes_the_name_it_spells_a_line_later():
    # the gap inside one word: "παυσ" + z + "ος" is another case of the name written later
    assert "ιριων" in word_readings(PREFIX, SUFFIX, Hint.exact(5))
    assert "ιριων" in [c.text for c in DocumentWords().candidates(PREFIX, SUFFIX, NO_HINT)]


def test_the_gap_is_never_read_from_its_own_span():
    # without the later mention nothing in the context spells the name: nothing is proposed
    assert word_readings(PREFIX, "ος απολλωνιου την γην", Hint.exact(5)) == []
    assert document_letters(PREFIX, "ος απολλωνιου την γην", ["ιριων"]) == [0]


def test_edges_are_completed_on_both_sides():
    # left: "κυριο" + "υ" is κυριου; right: "απολ" + "λω" begins απολλωνιου (another ending)
    prefix, suffix = "μετα κυριο", "λω του σωταδου· και κυριου απολλωνιου"
    assert "υ απολ" in word_readings(prefix, suffix, Hint.exact(5))
    # only the right edge cut: a whole word of the context, then the beginning of "απολλω"
    assert "του απολ" in word_readings("μετα ", suffix, Hint.exact(7))
    # only the left edge cut: "κυριο" completed, then a run of two whole words of the context
    suffix = " και κυριου σωταδου απολλωνιου"
    assert "υ σωταδου απολλωνιου" in word_readings(prefix, suffix, Hint.exact(18), WordConfig(max_words=2))
    assert "υ σωταδου απολλωνιου" not in word_readings(prefix, suffix, Hint.exact(18), WordConfig(max_words=1))


def test_a_cut_edge_must_be_continued():
    # the left edge is cut ("κυριο"): every reading continues the word, none starts a new one
    readings = word_readings("μετα κυριο", " και κυριου", NO_HINT)
    assert readings[0] == "υ" and all(r.startswith("υ ") for r in readings[1:])


def test_words_touching_a_lacuna_are_fragments():
    assert word_readings("ομολογει παυσ", "ος ---ιριωνος", NO_HINT) == []


def test_vocabulary_completes_a_gap_inside_one_word():
    vocabulary = Vocabulary(sorted(["κυριος", "κυριου", "κυρτος", "κυριευω"]))
    assert vocabulary.completions("του κυ", "ου", Hint.exact(2)) == ["ρι"]
    assert vocabulary.completions("του κυ", "ος", NO_HINT) == ["ρι", "ρτ"]
    assert vocabulary.completions("του ", "ος", NO_HINT) == []  # one edge only: too many words fit


def test_the_score_counts_letters_in_the_documents_words():
    known, stem, unknown = document_letters(PREFIX, SUFFIX, ["ιριων", "ιριωνι", "ανιων"])
    # "παυσιριωνος" is "παυσιριωνι" with another ending; "παυσανιωνος" is nowhere
    assert (known, stem, unknown) == (5, 6, 0)
    assert document_letters("και ", " του", ["και", "απολλωνιου"], min_word=4) == [0, 0]  # short words earn nothing


def test_an_ensemble_with_the_words_member_prefers_the_documents_name():
    model = Scored({"ανιων": -4.0, "ιριων": -6.0})
    assert Ensemble([(model, 1.0)]).candidates(PREFIX, SUFFIX, NO_HINT)[0].text == "ανιων"
    ens = Ensemble([(model, 1.0), (DocumentWords(), 0.5)])
    best = ens.candidates(PREFIX, SUFFIX, NO_HINT)[0]
    # the member's weight is not in the mean's denominator: -6 + 0.5 × 5 letters
    assert best.text == "ιριων" and best.log_score == pytest.approx(-6.0 + 2.5)


def test_a_model_folder_declares_the_words_member(memorised_model, tmp_path):
    import json
    import shutil

    from apollo_restore.ngram.model import NgramModel
    from apollo_restore.restoration.load import load_restorer

    from ..conftest import PASSAGE_1

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    NgramModel.build([PASSAGE_1], order=4).save(folder / "ngram.npz")
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = {
        "members": [
            {"name": "neural", "weight": 0.0},
            {"name": "ngram", "weight": 1.0, "options": {"file": "ngram.npz"}},
            {"name": "words", "weight": 0.3, "options": {"vocabulary": True}},
            {"name": "length", "weight": 2.0},
        ]
    }
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    members = load_restorer(folder, present=False).members
    assert [type(f).__name__ for f, _ in members] == ["NgramRestorer", "DocumentWords", "LengthPrior"]
    words, weight = members[1]
    assert weight == 0.3 and words.vocabulary is not None and "κυριου" in words.vocabulary.keys
