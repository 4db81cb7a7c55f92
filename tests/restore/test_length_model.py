"""The lost-length prior: fitted on toy pools whose members prefer short readings, it recovers the
true lengths; as an ensemble member it scores only where no hint is given."""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.ensemble import Ensemble
from apollo_restore.restore.length_model import LengthPool, LostLength, fit_lost_length

from .test_ensemble import Fixed


def toy_pools(gaps: int, seed: int, cost: float = 1.5) -> list[LengthPool]:
    """Pools of readings of 1–25 letters (3 of each) whose members charge ``cost`` nats a letter
    and give the true length 2 nats of evidence; true lengths uniform over 1–20."""
    rng = np.random.default_rng(seed)
    letters = np.repeat(np.arange(1, 26), 3)
    pools = []
    for _ in range(gaps):
        truth = int(rng.integers(1, 21))
        scores = -cost * letters + rng.normal(0.0, 1.0, len(letters)) + 2.0 * (letters == truth)
        pools.append(LengthPool(scores, letters, truth))
    return pools


def top_length_error(pools: list[LengthPool], prior: LostLength | None) -> np.ndarray:
    """Letters of each pool's top reading minus the truth's."""
    out = []
    for pool in pools:
        scores = pool.scores + (prior.log_prior(pool.letters) if prior else 0.0)
        out.append(pool.letters[np.argmax(scores)] - pool.truth)
    return np.array(out)


def test_a_prior_fitted_on_toy_pools_recovers_the_true_lengths():
    prior = fit_lost_length(toy_pools(300, seed=0), ridge=0.01)
    held_out = toy_pools(300, seed=1)
    before, after = top_length_error(held_out, None), top_length_error(held_out, prior)
    assert before.mean() < -8  # the members alone pick the shortest readings
    assert abs(after.mean()) < 1 and (after == 0).mean() > 0.6 > (before == 0).mean() + 0.5
    f = prior.log_prior(np.arange(1, 21))
    assert np.diff(f).mean() == pytest.approx(1.5, abs=0.2)  # it learned the per-letter cost back


def test_the_prior_scores_only_without_a_hint_and_round_trips():
    prior = LostLength((1, 10), (0.0, 9.0))
    assert prior.score_readings("", "", NO_HINT, ["α", "αβγδε", "αβγδεζηθικλμ"]) == pytest.approx([0.0, 4.0, 9.0])
    assert prior.score_readings("", "", Hint.exact(5), ["α", "αβγδε"]) == [0.0, 0.0]
    assert LostLength.from_json(prior.to_json()) == prior
    assert prior.candidates("", "", NO_HINT) == []


def test_the_prior_turns_an_ensemble_towards_longer_readings_without_changing_its_scale():
    short = Fixed({"και": -3.0, "καισαρος": -8.0})
    plain = Ensemble([(short, 1.0)])
    with_prior = Ensemble([(short, 1.0), (LostLength((1, 10), (0.0, 18.0)), 1.0)])
    assert plain.candidates("", "", NO_HINT)[0].text == "και"
    best = with_prior.candidates("", "", NO_HINT)[0]
    # f(8) = 14 nats; the prior's weight is not in the mean's denominator
    assert best.text == "καισαρος" and best.log_score == pytest.approx(-8.0 + 14.0)
    assert with_prior.candidates("", "", Hint.exact(3))[0].text == "και"


def test_fitting_needs_a_pool_holding_its_true_length():
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_lost_length([LengthPool(np.zeros(2), np.array([1, 2]), 5)])


def test_a_model_folder_declares_the_prior_and_the_copy_member(memorised_model, tmp_path):
    import json
    import shutil

    from apollo_restore.ngram.model import NgramModel
    from apollo_restore.restore.copy_fill import DocumentCopy
    from apollo_restore.restore.load import load_filler

    from ..conftest import PASSAGE_1

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    NgramModel.build([PASSAGE_1], order=4).save(folder / "ngram.npz")
    meta = json.loads((folder / "apollo_restore.json").read_text())
    prior = LostLength((1, 10), (0.0, 9.0))
    weights = {"neural": 0.0, "ngram": 1.0, "copy": 0.1, "length": 2.0}
    meta["ensemble"] = {"ngram": "ngram.npz", "weights": weights, "lost_length": prior.to_json()}
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    members = load_filler(folder, present=False).members
    assert [type(f).__name__ for f, _ in members] == ["NgramRestorer", "DocumentCopy", "LengthPrior", "LostLength"]
    assert members[1][1] == 0.1 and isinstance(members[1][0], DocumentCopy) and members[3] == (prior, 1.0)
