"""The harness: any restorer, joins by id, grouping, uncertain comparison, bits per character."""

from __future__ import annotations

import math

import pytest

from apollo_restore.data.formats import GapExample, Prediction
from apollo_restore.evaluate.gapsets import build_synthetic
from apollo_restore.evaluate.harness import (
    bpc_by_period,
    evaluate,
    period_of,
    score_predictions,
    window_bits,
    windows_of,
)
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.hint import Hint
from apollo_restore.model.builders import build_model
from apollo_restore.schema.restoration import Candidate


class Oracle:
    """A restorer that knows the answers of some contexts (any object with ``candidates``)."""

    batches = False

    def __init__(self, answers: dict[tuple[str, str], str]):
        self.answers, self.calls = answers, 0

    name = "oracle"

    def candidates(self, prefix, suffix, hint, k=None):
        self.calls += 1
        text = self.answers.get((prefix, suffix), "ουκ")
        return [Candidate(text, 0.9, -0.1), Candidate("αλλο", 0.1, -2.3)]


def test_harness_any_restorer_grouped_by_condition_variant_source(toy_table):
    gaps = build_synthetic(
        toy_table,
        "ddb",
        "test",
        3,
        ["exact", "none"],
        range(1, 5),
        seed=1,
        context_chars=30,
        uncertain_excluded=["exact"],
    )
    # the oracle knows the uncertain-included context only
    oracle = Oracle({(g.prefix, g.suffix): g.target for g in gaps if not g.id.endswith(":ue")})
    preds, metrics = evaluate(oracle, gaps, k=20, progress=False)
    assert oracle.calls == len(gaps) == len(preds) == metrics["gaps"] == metrics["predicted"]
    syn = metrics["groups"]["synthetic"]
    assert syn["included"]["exact"]["ddb"]["uniform"]["top1"] == 1.0
    assert syn["included"]["none"]["ddb"]["prior"]["n"] == 12
    unc = metrics["uncertain"]["ddb"]["exact"]
    assert (
        unc["n"] == 12
        and unc["included"]["top1"] == 1.0
        and unc["delta_top1"] == pytest.approx(1.0 - unc["excluded"]["top1"])
    )
    # the oracle answers an uncertain-excluded gap only where its context equals the included one
    known = {(g.prefix, g.suffix) for g in gaps if not g.id.endswith(":ue")}
    ue = [g for g in gaps if g.id.endswith(":ue")]
    by_length = {}
    for g in ue:
        by_length.setdefault(len(g.target.replace(" ", "")), []).append((g.prefix, g.suffix) in known)
    expected = sum(sum(v) / len(v) for v in by_length.values()) / len(by_length)
    assert unc["excluded"]["top1"] == pytest.approx(expected)


def test_harness_missing_prediction_scores_wrong():
    gaps = [
        GapExample("a", "ddb", "d", "", "", "καιτου", Hint.exact(6)),
        GapExample("b", "ddb", "d", "", "", "του", Hint.exact(3)),
    ]
    scored = score_predictions(gaps, [Prediction("a", [("και του", 0.5)])])
    assert [s.score.top1 for s in scored] == [True, False]
    assert scored[1].score.predicted is False and scored[1].condition == "exact"
    with pytest.raises(ValueError):
        evaluate(None, gaps)


@pytest.mark.parametrize(
    "year, period", [(None, "unknown"), (-120, "BC"), (1, "1st–3rd c. AD"), (300, "1st–3rd c. AD"), (301, "4th c. AD+")]
)
def test_harness_period_of(year, period):
    assert period_of(year) == period


def test_harness_windows_of_cut_at_spaces():
    text = " ".join(["λογος"] * 100)
    windows = windows_of(text, size=60, min_chars=10)
    assert all(len(w) <= 60 and not w.startswith(" ") and w.split(" ")[0] == "λογος" for w in windows)
    assert sum(w.count("λογος") for w in windows) == 100


@pytest.fixture(scope="module")
def random_tiny():
    tok = CharTokenizer()
    return build_model("tiny", tok, seed=0).eval(), tok


@pytest.mark.parametrize("mode", ["prefix", "middle"])
def test_harness_window_bits_random_model(random_tiny, mode):
    model, tok = random_tiny
    bits, chars = window_bits(model, tok, ["ετους δευτερου --- και", "του κυριου"], mode=mode)
    assert chars == len("ετους δευτερου  και") + len("του κυριου")  # gap markers not scored
    assert abs(bits / chars - math.log2(len(tok))) < 1.0  # an untrained model is near uniform


def test_harness_bpc_by_period(random_tiny, toy_table):
    model, tok = random_tiny
    out = bpc_by_period(model, tok, toy_table, windows_per_period=2, window_chars=80)
    assert set(out["ddb"]) == {"unknown", "BC", "1st–3rd c. AD", "all"} and set(out["inscription"]) == {
        "4th c. AD+",
        "all",
    }
    assert out["ddb"]["all"]["windows"] == sum(v["windows"] for k, v in out["ddb"].items() if k != "all")
    assert out["ddb"]["BC"]["ppl"] == pytest.approx(2 ** out["ddb"]["BC"]["bpc"])
