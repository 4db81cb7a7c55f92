"""The neural member: memorised passages at rank 1, probabilities, hints, multi-gap, pins."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.normalise import letter_count
from apollo_restore.data.readers.leiden import parse_leiden
from apollo_restore.errors import LeidenError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.context import context_of
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.members import neural as neural_module
from apollo_restore.restoration.members.neural import MAX_KEPT_PROMPTS, NeuralMember, length_batches
from apollo_restore.restoration.ranking.pool import match_key, merge_equivalent
from apollo_restore.restoration.restorer import Restorer

from ..conftest import MEMORISED
from ..ranking import assert_same_ranking


@pytest.fixture(scope="module")
def restorer(memorised_model) -> NeuralMember:
    return NeuralMember.load(memorised_model)


@pytest.mark.parametrize("hint_kind", ["none", "exact", "range"])
def test_neural_member_memorised_passage_at_rank_one(restorer, hint_kind):
    for prefix, middle, suffix in MEMORISED:
        n = len(middle)
        hint = {"none": NO_HINT, "exact": Hint.exact(n), "range": Hint.span(n - 2, n + 1)}[hint_kind]
        cands = restorer.candidates(prefix, suffix, hint)
        assert cands[0].text == middle


def test_neural_member_is_a_restorer_with_its_language_model(restorer):
    assert isinstance(restorer, Restorer)
    assert restorer.language_model() == (restorer.model, restorer.tok)  # bits per character reads these


def test_neural_member_probabilities_sorted_and_at_most_one(restorer):
    prefix, _, suffix = MEMORISED[0]
    cands = restorer.candidates(prefix, suffix, NO_HINT, k=20)
    probs = [c.prob for c in cands]
    assert probs == sorted(probs, reverse=True)
    assert sum(probs) <= 1 + 1e-9 and all(p > 0 for p in probs)
    assert len({match_key(c.text) for c in cands}) == len(cands)  # equivalents merged
    assert [c.log_score for c in cands] == sorted((c.log_score for c in cands), reverse=True)


def test_neural_member_k_only_cuts_the_ranked_pool(restorer):
    """The beam is ``config.pool`` wide whatever k: asking for fewer readings neither changes
    the best one nor any probability (before issue 23, k was the beam width)."""
    prefix, _, suffix = MEMORISED[0]
    full = restorer.candidates(prefix, suffix, NO_HINT, k=restorer.config.pool)
    for k in (1, 3, 7):
        assert restorer.candidates(prefix, suffix, NO_HINT, k=k) == full[:k]


def test_neural_member_exact_length_mode(memorised_model):
    exact = NeuralMember.load(memorised_model, config=RestoreConfig(exact_length=True))
    prefix, _, suffix = MEMORISED[0]
    for cand in exact.candidates(prefix, suffix, Hint.exact(6)):
        assert letter_count(cand.text) == 6


def test_neural_member_beam_width_narrows_only_the_free_rows(memorised_model, restorer):
    """``beam_width`` keeps fewer middles growing per step; the pool's own width is the
    default, and a narrow beam still finds the memorised passage and up to ``pool`` readings."""
    prefix, middle, suffix = MEMORISED[0]
    same = NeuralMember.load(memorised_model, config=RestoreConfig(beam_width=restorer.config.pool))
    assert same.candidates(prefix, suffix, NO_HINT) == restorer.candidates(prefix, suffix, NO_HINT)
    narrow = NeuralMember.load(memorised_model, config=RestoreConfig(beam_width=4))
    cands = narrow.candidates(prefix, suffix, Hint.exact(len(middle)))
    assert cands[0].text == middle and 4 < len(cands) <= narrow.config.pool


def test_neural_member_score_matches_beam(restorer):
    prefix, middle, suffix = MEMORISED[1]
    cands = restorer.candidates(prefix, suffix, NO_HINT, k=5)
    scores = restorer.score_readings(prefix, suffix, NO_HINT, [c.text for c in cands])
    assert scores == pytest.approx([c.log_score for c in cands], abs=1e-3)


def test_a_score_does_not_depend_on_a_search_having_run_before(memorised_model):
    """The kept prompts are a memo: the same scores (to float rounding) from a fresh member, one that
    just searched the gap (its search's scores reused) and one that searched other gaps since."""
    prefix, _, suffix = MEMORISED[1]
    hint = Hint.exact(9)
    searched = NeuralMember.load(memorised_model)
    readings = [c.text for c in searched.candidates(prefix, suffix, hint, k=10)] + ["και", "αβγδεζηθι"]
    after_search = searched.score_readings(prefix, suffix, hint, readings)
    fresh = NeuralMember.load(memorised_model).score_readings(prefix, suffix, hint, readings)
    assert after_search == pytest.approx(fresh, abs=1e-4)
    other = [(p, s, NO_HINT) for p, _, s in MEMORISED if p != prefix]
    searched.candidates_many(other)  # this gap's prompt is no longer kept
    assert searched.score_readings(prefix, suffix, hint, readings) == pytest.approx(fresh, abs=1e-4)


def test_the_kept_prompts_are_bounded_and_shrink_to_the_last_batch(memorised_model, monkeypatch):
    monkeypatch.setattr(neural_module, "MAX_KEPT_PROMPTS", 3)
    member = NeuralMember.load(memorised_model)
    gaps = [(p + "και " * i, s, NO_HINT) for i in range(5) for p, _, s in MEMORISED[:1]]
    member.candidates_many(gaps, k=2)
    cache = member._cache()
    assert len(cache.runs) == cache.kept == 3  # a batch larger than the bound keeps its last 3
    for gap in gaps:  # scoring every gap of the batch still works; the bound still holds
        member.score_readings(*gap, ["και"])
        assert len(cache.runs) <= 3
    member.candidates(*gaps[0], k=2)
    assert len(cache.runs) == cache.kept == 1  # a batch of one keeps one: the cache never only grows
    assert MAX_KEPT_PROMPTS >= 256  # covers a GPU batch of predict's default size


def test_neural_member_restores_memorised_leiden_text(restorer):
    result = restore_text(
        restorer, "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ [.10] σοι κάμηλον θήλειαν"
    )
    assert result.gaps[0].hint == Hint.exact(10)
    assert result.gaps[0].candidates[0].text == "πεπρακεναι"
    assert result.restored_text == MEMORISED[0][0] + "πεπρακεναι" + MEMORISED[0][2]


def test_neural_member_restores_leiden_text_with_several_gaps(restorer):
    text = (
        "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ [.10] σοι κάμηλον θήλειαν | "
        "ἔτους δευτέρου καὶ εἰκοστοῦ [- - -] Καίσαρος"
    )
    result = restore_text(restorer, text)
    assert [g.number for g in result.gaps] == [1, 2]
    assert result.gaps[0].hint == Hint.exact(10) and result.gaps[1].hint == NO_HINT
    # the first gap's reading is in the second gap's prefix; later gaps show as … in suffixes
    assert result.gaps[1].prefix.endswith(
        "ομολογω " + result.gaps[0].best + " σοι καμηλον θηλειαν ετους δευτερου και εικοστου "
    )
    assert "…" in result.gaps[0].suffix
    start, end = result.gaps[0].span
    assert text[start:end] == "[.10]"
    assert result.to_dict()["gaps"][0]["candidates"][0]["text"] == result.gaps[0].best


def test_neural_member_pin_reruns_following_gaps(restorer):
    text = "ὁμολογῶ [.10] σοι κάμηλον [.3] θήλειαν"
    free = restore_text(restorer, text)
    pinned = restore_text(restorer, text, pins={1: "ζζζζ"})
    assert pinned.gaps[0].pinned == "ζζζζ" and pinned.gaps[0].candidates == []
    assert pinned.gaps[1].prefix == "ομολογω ζζζζ σοι καμηλον "
    assert free.gaps[1].prefix != pinned.gaps[1].prefix


@pytest.mark.parametrize(
    "leiden,hint",
    [
        ("[.5]", Hint.exact(5)),
        ("[.....]", Hint.exact(5)),
        ("[ca.10]", Hint.span(8, 12)),
        ("[.5-8]", Hint.span(5, 8)),
        ("[- - -]", NO_HINT),
        ("[---]", NO_HINT),
        ("[...]", Hint.exact(3)),
        ("[…]", NO_HINT),
        ("???", Hint.exact(3)),
    ],
)
def test_neural_member_hint_forms(restorer, leiden, hint):
    result = restore_text(restorer, f"και {leiden} του", k=3)
    assert result.gaps[0].hint == hint


def test_neural_member_hint_override_and_removal(restorer):
    result = restore_text(restorer, "και [.5] του [.3] θεου", hints={1: Hint.span(2, 9), 2: None}, k=2)
    assert result.gaps[0].hint == Hint.span(2, 9) and result.gaps[1].hint == NO_HINT


@pytest.mark.parametrize("bad", ["και [αβ του", "και ]αβ", "[.0]", "[.8-5]", "και [] του"])
def test_neural_member_bad_input_raises_leiden_error(restorer, bad):
    with pytest.raises(LeidenError):
        restore_text(restorer, bad)


def test_context_keeps_spaces_and_renders_later_gaps_unknown():
    doc = parse_leiden("αβγ [.3] δεζ[.2] ηθ")
    prefix, suffix = context_of(doc.segments, 0, [])
    assert prefix == "αβγ " and suffix == " δεζ… ηθ"
    prefix, suffix = context_of(doc.segments, 1, ["ιοκ"])
    assert prefix == "αβγ ιοκ δεζ" and suffix == " ηθ"


def test_merge_equivalent_adds_probabilities():
    import math

    merged = merge_equivalent([("και του", -1.0), ("καιτου", -2.0), ("θεος", -1.5)])
    assert merged[0][0] == "και του"
    assert merged[0][1] == pytest.approx(math.log(math.exp(-1) + math.exp(-2)))
    assert match_key("θεος· και") == match_key("θεοσκαι")


def test_gaps_searched_together_get_what_each_gets_alone(memorised_model):
    # prompts of different lengths and hints; the batched code is the one a GPU runs (--device cuda)
    gaps = [(p, s, hint) for p, _, s in MEMORISED for hint in (NO_HINT, Hint.exact(9))]
    gaps.append(("ετους ", " του κυριου", Hint.span(3, 6)))
    together = NeuralMember.load(memorised_model).candidates_many(gaps, k=8)
    for gap, batched in zip(gaps, together):
        alone = NeuralMember.load(memorised_model).candidates(*gap, k=8)
        assert [c.text for c in batched] == [c.text for c in alone]
        assert [c.log_score for c in batched] == pytest.approx([c.log_score for c in alone], abs=1e-4)


def test_a_gpu_asked_for_without_one_is_a_clear_error(memorised_model, monkeypatch):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(ValueError, match="E513"):
        NeuralMember.load(memorised_model, device="cuda")


def test_length_batches_cover_every_body_once_and_split_only_where_padding_costs_more():
    assert length_batches([20] * 6 + [40] * 6, batch_cost=64) == [list(range(6)), list(range(6, 12))]  # saves 120 > 64
    assert length_batches([20, 40], batch_cost=64) == [[0, 1]]  # saves 20 < 64
    batches = length_batches([17, 30, 5, 30, 29, 6], batch_cost=8)
    assert sorted(i for b in batches for i in b) == list(range(6))
    assert batches[0] == [2, 5]  # shortest first


def test_cli_predict_batched_equals_one_at_a_time_and_refuses_a_missing_gpu(memorised_model, tmp_path, monkeypatch):
    gaps = tmp_path / "gaps.jsonl"
    rows = [{"id": f"g{i}", "source": "ddb", "doc": "d", "prefix": p, "suffix": s, "target": m, "hint": len(m),
             "kind": "synthetic"} for i, (p, m, s) in enumerate(MEMORISED * 2)]  # fmt: skip
    gaps.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    args = ["predict", "--gaps", str(gaps), "--model", str(memorised_model), "--k", "5", "--threads", "1"]
    outs = []
    for batch in ("1", "3"):
        out = tmp_path / f"batch{batch}.jsonl"
        assert CliRunner().invoke(app, [*args, "--out", str(out), "--batch", batch]).exit_code == 0
        outs.append(
            [[(c["text"], c["prob"]) for c in json.loads(line)["candidates"]] for line in out.read_text().splitlines()]
        )
    # other batch shapes add in other orders: near ties may swap (tests/ranking.py)
    for batched, alone in zip(outs[1], outs[0], strict=True):
        assert_same_ranking(batched, alone)
    assert outs[0][0][0][0] == MEMORISED[0][1]
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "gpu.jsonl"), "--device", "cuda"])
    assert result.exit_code == 2 and "E513" in result.output
