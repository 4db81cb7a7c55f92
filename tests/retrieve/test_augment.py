"""Retrieval-augmented restoration with a tiny random model."""

from __future__ import annotations

import pytest
import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import Hint
from apollo_restore.model.builders import build_model
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.ranking.pool import match_key
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.retrieve.augment import RetrievalAugmented, with_parallels
from apollo_restore.retrieve.parallels import ParallelIndex
from apollo_restore.schema.restoration import Candidate

PREFIX, SUFFIX = "ετους τεταρτου αυτοκρατορος καισαρος ", " σεβαστου"


@pytest.fixture(scope="module")
def restorer() -> NeuralMember:
    torch.manual_seed(0)
    tok = CharTokenizer()
    return NeuralMember(build_model("tiny", tok).eval(), tok, name="tiny", config=RestoreConfig(k=5, max_chars=12))


@pytest.fixture(scope="module")
def beams(restorer: NeuralMember) -> list[Candidate]:
    return restorer.candidates(PREFIX, SUFFIX, Hint.exact(8), 5)


class _NoIndex:
    """An index that must not be asked."""

    def gap_parallels(self, *args, **kwargs):
        raise AssertionError("a disabled RetrievalAugmented consulted the index")


def test_augment_off_gives_model_candidates(
    restorer: NeuralMember, index: ParallelIndex, beams: list[Candidate]
) -> None:
    off = RetrievalAugmented(restorer, _NoIndex(), enabled=False)
    cands = off.candidates(PREFIX, SUFFIX, Hint.exact(8), 5)
    assert [(c.text, c.log_score, c.origin, c.citations) for c in cands] == [
        (b.text, b.log_score, ["model"], []) for b in beams
    ]
    assert off.name == "tiny"
    on = RetrievalAugmented(restorer, index, count_weight=1000.0).candidates(PREFIX, SUFFIX, Hint.exact(8), 5)
    assert on[0].text == "τραιανου" and on != cands  # the same gap with parallels does change the answer


def test_augment_merges_and_cites(restorer: NeuralMember, index: ParallelIndex, beams: list[Candidate]) -> None:
    rag = RetrievalAugmented(restorer, index)
    cands = rag.merge(PREFIX, SUFFIX, Hint.exact(8), beams, rag.parallels(PREFIX, SUFFIX, Hint.exact(8)).groups, 20)
    by_key = {match_key(c.text): c for c in cands}
    trajan = by_key["τραιανου"]
    assert trajan.origin == ["parallel"] and trajan.citations == ["ddb:a", "ddb:b", "ddb:d"]
    assert by_key["αδριανου"].citations == ["ddb:c"]
    assert [c.text for c in cands if c.origin == ["model"]] == [b.text for b in beams]
    (score,) = restorer.score_readings(PREFIX, SUFFIX, Hint.exact(8), ["τραιανου"])
    assert trajan.log_score == pytest.approx(score, abs=1e-4)  # the model's own score
    assert sum(c.prob for c in cands) == pytest.approx(1.0)
    assert [c.log_score for c in cands] == sorted((c.log_score for c in cands), reverse=True)
    assert len(cands) == len(beams) + 2


def test_augment_parallel_already_in_beam(restorer: NeuralMember, index: ParallelIndex, beams: list[Candidate]) -> None:
    rag = RetrievalAugmented(restorer, index)
    groups = rag.parallels(PREFIX, SUFFIX, Hint.exact(8)).groups
    groups[0].between = beams[0].text  # pretend the top beam was found in parallels
    merged = rag.merge(PREFIX, SUFFIX, Hint.exact(8), beams, groups, 20)
    top = next(c for c in merged if c.text == beams[0].text)
    assert top.origin == ["model", "parallel"] and top.log_score == beams[0].log_score
    assert top.citations == groups[0].docs and len(merged) == len(beams) + 1


def test_augment_count_prior_and_truncation(
    restorer: NeuralMember, index: ParallelIndex, beams: list[Candidate]
) -> None:
    strong = RetrievalAugmented(restorer, index, count_weight=1000.0).candidates(PREFIX, SUFFIX, Hint.exact(8), 5)
    assert strong[0].text == "τραιανου" and strong[0].prob > 0.99  # 3 parallels beat 1
    assert strong[1].text == "αδριανου" and len(strong) == 5  # k kept
    (score,) = restorer.score_readings(PREFIX, SUFFIX, Hint.exact(8), ["τραιανου"])
    assert strong[0].log_score == pytest.approx(score, abs=1e-4)  # the prior is not in log_score


def test_augment_restore_leiden(restorer: NeuralMember, index: ParallelIndex) -> None:
    rag = RetrievalAugmented(restorer, index, count_weight=1000.0)
    assert isinstance(rag, Restorer) and rag.language_model() == restorer.language_model()
    result = restore_text(rag, "αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ", k=3)
    gap = result.gaps[0]
    assert gap.candidates[0].text == "τραιανου" and gap.candidates[0].citations and result.model == "tiny+parallels"


def test_k_only_cuts_the_merged_pool(restorer: NeuralMember, index: ParallelIndex) -> None:
    rag = RetrievalAugmented(restorer, index)
    few, many = (rag.candidates(PREFIX, SUFFIX, Hint.exact(8), k) for k in (3, 50))
    assert len(few) == 3 and len(many) > 3 and sum(c.prob for c in many) == pytest.approx(1.0)
    assert [(c.text, c.prob) for c in few] == [(c.text, c.prob) for c in many[:3]]


def test_with_parallels_keeps_the_presentation_over_the_merged_pool(
    restorer: NeuralMember, index: ParallelIndex
) -> None:
    shown = with_parallels(
        Presented(restorer, ranking=Ranking(Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0, count_floor=None))),
        index,
        count_weight=1000.0,
    )
    assert isinstance(shown, Presented) and isinstance(shown.restorer, RetrievalAugmented)
    cands = shown.candidates(PREFIX, SUFFIX, Hint.exact(8), 5)
    assert cands[0].text == "τραιανου" and cands[0].origin == ["parallel"]
    assert with_parallels(restorer, index).restorer is restorer  # a bare restorer is wrapped as it is
