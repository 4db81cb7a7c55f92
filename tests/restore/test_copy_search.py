"""The document cache that steers the neural beam (``restore/copy_search.py``)."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.config import RestoreConfig
from apollo_restore.restore.copy_search import DocumentCache
from apollo_restore.restore.engine import Restorer

from ..conftest import MEMORISED

TOK = CharTokenizer()
SUFFIX = "ιων απολλωνιου του παυσιριωνος και παυσανιου"


def cache(prefix: str, suffix: str = SUFFIX, mix: float = 0.5, min_chars: int = 4) -> DocumentCache:
    return DocumentCache(prefix, suffix, TOK, mix, min_chars)


def test_next_chars_follow_the_longest_run_repeated_elsewhere():
    c = cache("ομολογει ")
    # 'παυσ' stands twice (παυσιριωνος, παυσανιου); ' παυσ' too; 'του παυσ' only once
    assert c.next_chars("ομολογων παυσ") == Counter({"ι": 1, "α": 1})
    assert c.next_chars("ομολογει παυσ") == Counter({"α": 1})  # "ι παυσ" as in "και παυσανιου"
    assert c.next_chars("ομολογει του παυσ") == Counter({"ι": 1})
    assert c.next_chars("ομολογει αυσ") is None  # shorter than min_chars
    assert c.next_chars("ομολογει ξψξψ") is None  # not in the document


def test_the_gap_edge_is_not_a_repeat_of_itself():
    """A middle not yet begun has the prefix's end as its history; that run stands at the
    prefix's end, where the gap (not a character) follows it."""
    c = cache("ομολογει ")
    assert c.next_chars(c.start) is None
    assert c.next_chars("γει") is None


def test_runs_stop_at_lacuna_markers():
    c = cache("αβ -- παυσ", "ιων και -- παυσανιου")
    assert c.next_chars("-- παυσ") == Counter({"α": 1})  # the run does not reach over '-'


def test_mix_leaves_unmatched_rows_and_mixes_matched_ones_into_a_distribution():
    c = cache("ομολογει ", mix=0.3)
    logp = torch.log_softmax(torch.randn(2, len(TOK)), dim=-1)
    mixed = c.mix_rows(logp, ["ομολογει του παυσ", "ομολογει ξψξψ"])
    assert torch.equal(mixed[1], logp[1])
    assert mixed[0].exp().sum().item() == pytest.approx(1.0, abs=1e-5)
    iota = TOK.vocab["ι"]
    assert mixed[0, iota].exp().item() == pytest.approx(0.7 * logp[0, iota].exp().item() + 0.3, abs=1e-5)
    assert c.mix_rows(logp, ["ξψξψ", "ψξψξ"]) is logp


@pytest.mark.parametrize("mix, min_chars", [(0.0, 4), (1.0, 4), (0.5, 0)])
def test_settings_out_of_range_are_refused(mix, min_chars):
    with pytest.raises(ValueError, match="DocumentCache"):
        cache("αβγ", mix=mix, min_chars=min_chars)


def test_a_steered_search_reports_the_models_own_scores(memorised_model):
    """Steering changes which readings the search finds, not how they are scored: each
    reading's score is the one the model alone gives it."""
    plain = Restorer.load(memorised_model)
    steered = Restorer.load(memorised_model, config=RestoreConfig(copy_mix=0.5, copy_min_chars=3))
    prefix, middle, suffix = MEMORISED[0]  # 'ου ', 'ρου', ' του' … repeat: rows are steered
    for hint in (NO_HINT, Hint.exact(len(middle))):
        cands = steered.candidates(prefix, suffix, hint, k=10)
        assert cands[0].text == middle
        assert [c.text for c in cands] != [c.text for c in plain.candidates(prefix, suffix, hint, k=10)]
        scores = plain.score_readings(prefix, suffix, hint, [c.text for c in cands])
        assert scores == pytest.approx([c.log_score for c in cands], abs=1e-3)


def test_without_a_share_the_search_is_the_models_alone(memorised_model):
    prefix, _, suffix = MEMORISED[1]
    plain = Restorer.load(memorised_model).candidates(prefix, suffix, NO_HINT)
    off = Restorer.load(memorised_model, config=RestoreConfig(copy_mix=0.0, copy_min_chars=3))
    assert off.candidates(prefix, suffix, NO_HINT) == plain
