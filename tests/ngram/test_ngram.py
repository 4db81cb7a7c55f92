"""The character n-gram model and its restorer (apollo_restore.ngram)."""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.data.document import render
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.readers.archive import iter_files
from apollo_restore.data.readers.ddb import parse_file
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.ngram.model import SYMBOLS, NgramModel, encode
from apollo_restore.restoration.members.ngram import FillConfig, NgramRestorer, ReversedRestorer
from apollo_restore.restoration.ranking.pool import match_key
from apollo_restore.restoration.restorer import Restorer

SENTENCES = [
    "ετους δευτερου αυτοκρατορος καισαρος μαρκου αυρηλιου αντωνινου σεβαστου μεσορη",
    "ομολογω πεπρακεναι σοι καμηλον θηλειαν και απεχω την τιμην αργυριου δραχμας",
    "και βεβαιωσω πασηι βεβαιωσει· ετους τριτου αυτοκρατορος καισαρος τραιανου",
]
TEXTS = [" ".join(SENTENCES)] * 20 + ["και τ-- αυτου … ηρακλειδης -"]


@pytest.fixture(scope="module")
def lm() -> NgramModel:
    return NgramModel.build(TEXTS, order=6)


@pytest.fixture(scope="module")
def restorer(lm: NgramModel) -> NgramRestorer:
    return NgramRestorer(lm, FillConfig(beam=48))


def test_next_symbol_probabilities_sum_to_one(lm: NgramModel) -> None:
    contexts = ["", "κ", "και ", "αυτοκρατορος καισ", "ζζψψξξ", "ωωωω ·", "και τ--", "αυτου …", "μαρκ-ου", "-"]
    lp = lm.logprobs_next(contexts)
    assert lp.shape == (len(contexts), len(SYMBOLS))
    assert np.all(np.isfinite(lp))
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.exp(lm.logprobs_next(["και"], bos=True)).sum(), 1.0, atol=1e-6)


def test_contexts_back_off_after_gap_markers(lm: NgramModel) -> None:
    # Everything up to the last marker is ignored: "ξξ-και " is predicted like "και ".
    np.testing.assert_allclose(lm.logprobs_next(["ξξ-και "]), lm.logprobs_next(["και "]))
    np.testing.assert_allclose(lm.logprobs_next(["αυτου …"]), lm.logprobs_next([""]))


def test_memorised_context_is_predicted(lm: NgramModel) -> None:
    lp = lm.logprobs_next(["αυτοκρατορος καισ"])[0]
    assert SYMBOLS[int(np.argmax(lp))] == "α"
    assert lm.logprob("ρος", "αυτοκρατο") > lm.logprob("ξος", "αυτοκρατο")


def test_pruning_keeps_distributions(lm: NgramModel) -> None:
    pruned = NgramModel.build(TEXTS, order=6, min_count=2)
    assert sum(pruned.meta["ngrams"]) < sum(lm.meta["ngrams"])
    np.testing.assert_allclose(np.exp(pruned.logprobs_next(["και ", "τ--", "ζζ"])).sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("hint", [Hint.exact(9), Hint.span(7, 11), NO_HINT])
def test_restores_a_memorised_word_at_rank_one(restorer: NgramRestorer, hint) -> None:
    prefix, suffix = "ετους δευτερου αυτοκρατορος καισαρος μαρκου αυρηλιου ", " σεβαστου μεσορη"
    cands = restorer.candidates(prefix, suffix, hint, k=20)
    assert match_key(cands[0].text) == "αντωνινου"
    pool = restorer.candidates(prefix, suffix, hint, k=restorer.config.pool)
    assert abs(sum(c.prob for c in pool) - 1.0) < 1e-6 and cands == pool[:20]  # k only cuts the pool
    assert [c.log_score for c in cands] == sorted((c.log_score for c in cands), reverse=True)


def test_exact_hint_candidates_have_the_hinted_length(restorer: NgramRestorer) -> None:
    for n in (1, 4, 9):
        cands = restorer.candidates("ομολογω πεπρακεναι σοι ", " και απεχω", Hint.exact(n), k=20)
        assert cands and all(letter_count(c.text) == n for c in cands)


def test_gap_at_document_edges(restorer: NgramRestorer) -> None:
    assert match_key(restorer.candidates("", " δευτερου αυτοκρατορος", Hint.exact(5))[0].text) == "ετουσ"
    assert restorer.candidates("τραιανου ", "", Hint.span(1, 4))  # empty suffix: the document ends


def test_score_readings_match_search_scores(restorer: NgramRestorer) -> None:
    prefix, suffix = "βεβαιωσω πασηι βεβαιωσει· ετους ", " αυτοκρατορος"
    found = restorer.search(prefix, suffix, Hint.exact(6))[:5]
    scores = restorer.score_readings(prefix, suffix, Hint.exact(6), [text for text, _ in found])
    np.testing.assert_allclose(scores, [s for _, s in found], rtol=1e-9)


def test_ngram_restorers_follow_the_protocol(restorer: NgramRestorer) -> None:
    assert isinstance(restorer, Restorer) and restorer.language_model() is None
    assert isinstance(ReversedRestorer(restorer), Restorer) and ReversedRestorer(restorer).language_model() is None


def test_save_load_round_trip(lm: NgramModel, restorer: NgramRestorer, tmp_path) -> None:
    path = tmp_path / "lm.npz"
    assert lm.save(path) == path.stat().st_size > 0
    loaded = NgramModel.load(path)
    assert loaded.meta == lm.meta and loaded.meta["normaliser"] == "apollo_restore norm.v1"
    contexts = ["", "και ", "αυτοκρατορος καισ", "ζζ-", "ω"]
    np.testing.assert_array_equal(loaded.logprobs_next(contexts), lm.logprobs_next(contexts))
    again = NgramRestorer(loaded, restorer.config)
    args = ("ετους δευτερου αυτοκρατορος ", " μαρκου", NO_HINT)
    assert [(c.text, c.log_score) for c in again.candidates(*args)] == [
        (c.text, c.log_score) for c in restorer.candidates(*args)
    ]


def test_builds_on_rendered_ddb_documents() -> None:
    texts = [render(parse_file(content, name)).text for name, content in iter_files("tests/fixtures/ddb", (".xml",))]
    lm = NgramModel.build(texts, order=8, min_count=2)
    assert lm.meta["characters"] == sum(len(encode(t)) for t in texts) + len(texts) + 1
    np.testing.assert_allclose(np.exp(lm.logprobs_next(["και ", texts[0][:40]])).sum(axis=1), 1.0, atol=1e-6)
