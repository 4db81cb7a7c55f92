"""The calibration's formula written twice: NumPy to apply it
(:func:`~apollo_restore.restoration.ranking.calibration.calibrated_by`), torch to fit it
(:func:`~apollo_restore.tune.calibration.scores`). On random inputs, readings padded with
``-inf``, unknown words and parameters of every kind, the two give the same probabilities.

    python -m pytest -q tests/tune/test_calibration_torch.py
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from apollo_restore.restoration.ranking.calibration import calibrated_by, features, temperature_features
from apollo_restore.tune.calibration import scores


@pytest.mark.parametrize("seed", range(5))
def test_the_torch_fit_s_formula_is_the_numpy_one(seed):
    rng = np.random.default_rng(seed)
    gaps, k = 40, 7
    logq = np.log(rng.dirichlet(np.ones(k), gaps))
    logq[rng.random((gaps, k)) < 0.3] = -np.inf  # readings missing (padding)
    logq[:, 0] = np.log(rng.uniform(0.05, 1, gaps))  # every gap has a reading
    unknown = (rng.random((gaps, k)) < 0.2).astype(float)
    x = features(logq, rng.integers(1, 20, gaps), rng.normal(-10, 4, gaps))
    t = temperature_features(x)
    log_a, rest = rng.normal(0, 0.5, gaps), rng.normal(0, 1, (gaps, 2 + x.shape[1] + t.shape[1]))
    penalty = float(rng.uniform(0, 2))
    params = np.concatenate([np.exp(log_a)[:, None], rest], axis=1)  # NumPy's rows take a, torch's log a
    expected = calibrated_by(logq, unknown, x, params, penalty, t)  # (G, K)

    tensor = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    per = tensor(np.concatenate([log_a[:, None], rest], axis=1))
    mask = torch.tensor(np.isfinite(logq))
    z, none = scores(per, tensor(np.where(np.isfinite(logq), logq, 0.0)), mask, tensor(unknown), tensor(x),
                     tensor(t), penalty)  # fmt: skip
    found = torch.softmax(torch.cat([z, none[:, None]], dim=1), dim=1)[:, :k].numpy()
    assert np.allclose(found, expected, rtol=1e-9, atol=1e-12)
    assert np.all(found[~np.isfinite(logq)] == 0)
