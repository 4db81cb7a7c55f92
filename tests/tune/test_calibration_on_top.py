"""``fit_on_top`` (issue 64): a kind of text's parameters as a temperature (and a bias of "none of
these") on top of a base fit. Gaps drawn from a known move of the base are fitted back to it; what
is not fitted stays the base's.

    python -m pytest -q tests/tune/test_calibration_on_top.py
"""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.hint import Hint
from apollo_restore.restoration.ranking.calibration import calibrated
from apollo_restore.schema.folder import Scaling
from apollo_restore.tune.calibration import fit_on_top

BASE = {
    "exact": Scaling(a=0.5, b=-1.1, c=-0.5, d=1.0, e=-0.4, f=-0.01, g=0.01, h=-0.01),
    "range": Scaling(a=0.8, b=-1.2, c=-0.4, d=0.9, e=-0.4, f=-0.01, g=-0.2, h=-0.05),
    "none": Scaling(a=0.9, b=-1.0, c=-0.1, d=0.5, e=-0.3, f=-0.01, g=-0.3, h=-0.05),
}


def _records(tau: float, beta: float, gaps: int, conditions=("exact", "range", "none"), seed: int = 0) -> list[dict]:
    """Gaps of five readings whose right reading (or none of them) is drawn from the base moved by
    ``a ← tau · a``, ``b ← b + beta``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(gaps):
        cond = conditions[i % len(conditions)]
        s = BASE[cond]
        moved = s.model_copy(update={"a": s.a * tau, "b": s.b + beta})
        logq = np.sort(np.log(rng.dirichlet(np.full(5, 0.3)) + 1e-9))[::-1]
        texts = ["αβγ", "δεζ", "ηθι", "κλμ", "νξο"]
        hint = Hint.exact(3) if cond == "exact" else Hint.span(2, 4) if cond == "range" else Hint()
        top = float(rng.normal(-8, 3))
        p = calibrated(logq[None], np.zeros((1, 5)), np.array([3]), np.array([top]), moved, 0.0)[0]
        chances = np.maximum(np.append(p, 1 - p.sum()), 0.0)  # the five readings, then none of them
        pick = rng.choice(6, p=chances / chances.sum())
        out.append({
            "id": f"g{i}", "doc": f"d{i % 50}", "condition": cond, "hint": hint.to_json(),
            "truth": int(pick) if pick < 5 else -1, "texts": texts, "logq": logq.tolist(),
            "unknown": [False] * 5, "top_score": top,
        })  # fmt: skip
    return out


@pytest.mark.parametrize(("tau", "beta"), [(0.5, 0.0), (1.8, 0.8)])
def test_a_known_move_of_the_base_is_fitted_back(tau, beta):
    moved = fit_on_top(_records(tau, beta, 3000), BASE, penalty=0.0)
    for cond, s in BASE.items():
        assert moved[cond].a / s.a == pytest.approx(tau, rel=0.2)
        assert moved[cond].b - s.b == pytest.approx(beta, abs=0.35)
        assert (moved[cond].c, moved[cond].g, moved[cond].h) == (s.c, s.g, s.h)  # held


def test_without_bias_only_the_temperature_moves():
    moved = fit_on_top(_records(0.5, 0.0, 600), BASE, penalty=0.0, bias=False)
    assert all(moved[c].b == BASE[c].b and moved[c].a < BASE[c].a for c in BASE)


def test_per_condition_a_condition_without_gaps_keeps_the_base():
    moved = fit_on_top(_records(0.5, 0.0, 600, ("exact",)), BASE, penalty=0.0, per_condition=True)
    assert moved["exact"].a < 0.8 * BASE["exact"].a
    assert moved["range"] == BASE["range"] and moved["none"] == BASE["none"]
