"""The stage-4 formula of ``restoration/ranking/``'s docstring (its ``__init__.py``) is the code's: its four lines,
read from the docstring and translated word for word into NumPy, give the probabilities
:func:`~apollo_restore.restoration.ranking.calibration.calibrated` gives, with every parameter ``a``–``h``
and ``δ`` away from its neutral value (a parameter the docstring left out would show here)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from apollo_restore.restoration import ranking
from apollo_restore.restoration.ranking.calibration import FLOOR, MARGIN_CAP, calibrated
from apollo_restore.schema.folder import Scaling

#: the docstring's notation → Python, applied in order (names of the reading ``r`` dropped: each
#: line is evaluated on the vector of a gap's readings)
WORDS = [
    (r"Σ_\{r'\} exp z\(r'\)", "np.exp(z).sum()"),
    (r"exp none", "np.exp(none)"),
    (r"exp z\(r\)", "np.exp(z)"),
    (r"(?<!np\.)exp\(", "np.exp("),
    (r"log q'\(r\)", "np.log(q1)"),
    (r"log n", "np.log(n)"),
    (r"max z", "z.max()"),
    (r"\[r leaves an unknown word\]", "unknown"),
    (r"s\*", "s_top"),
    (r"\b([zp])\(r\)", r"\1"),
    (r"α", "alpha"),
    (r"δ", "delta"),
    (r"·", "*"),
    (r"−", "-"),
]


def documented_lines() -> list[str]:
    """The formula lines of stage 4 in the module docstring, as written."""
    doc = ranking.__doc__
    stage = doc[doc.index("4. **calibration**") : doc.index("**The order**")]
    lines = [line.strip() for line in stage.splitlines() if re.match(r"^\s{7}\S.*=", line)]
    assert [line.split("=")[0].strip() for line in lines] == ["α", "z(r)", "none", "p(r)"], lines
    return lines


def documented_p(q1, unknown, n, s_top, s: Scaling, delta: float) -> np.ndarray:
    """``p`` by the docstring's lines, for one gap's readings (``q1``: ``q'``)."""
    logq = np.sort(np.log(q1))[::-1]
    scope = {
        "np": np,
        "min": min,
        "q1": q1,
        "unknown": unknown,
        "n": n,
        "s_top": s_top,
        "m": logq[0] - max(logq[1], np.log(FLOOR)),
        "M": MARGIN_CAP,
        "delta": delta,
        **vars(s),
    }
    for line in documented_lines():
        python = line
        for pattern, replacement in WORDS:
            python = re.sub(pattern, replacement, python)
        exec(python, scope)  # noqa: S102 - the docstring's own formula, translated above
    return scope["p"]


@pytest.mark.parametrize("seed", range(5))
def test_the_documented_formula_is_what_the_calibration_computes(seed):
    rng = np.random.default_rng(seed)
    q1 = rng.dirichlet(np.ones(6))
    unknown = (rng.random(6) < 0.3).astype(float)
    n, s_top, delta = int(rng.integers(1, 20)), float(-rng.random() * 8), float(rng.random() * 2)
    s = Scaling(
        **dict(zip("abcdefgh", (rng.normal(0, 0.5, 8) + [1.2, -1.0, 0.3, 0, 0, 0, 0, 0]).tolist()))
    )  # all in play
    code = calibrated(np.log(q1)[None], unknown[None], np.array([n]), np.array([s_top]), s, delta)[0]
    assert documented_p(q1, unknown, n, s_top, s, delta) == pytest.approx(code, rel=1e-9, abs=1e-12)


def test_a_formula_that_leaves_out_the_temperature_terms_is_caught():
    """The check can fail: with ``g`` and ``h`` (the terms the docstring once lacked) dropped from
    the first line, the documented ``p`` is no longer the code's."""
    s = Scaling(a=1.2, b=-1.0, c=0.3, d=0.1, e=0.2, f=0.05, g=0.4, h=-0.3)
    q1, unknown = np.array([0.6, 0.3, 0.1]), np.zeros(3)
    code = calibrated(np.log(q1)[None], unknown[None], np.array([7]), np.array([-2.0]), s, 0.5)[0]
    stripped = Scaling(a=s.a, b=s.b, c=s.c, d=s.d, e=s.e, f=s.f)  # what α = a alone would compute
    assert documented_p(q1, unknown, 7, -2.0, stripped, 0.5) != pytest.approx(code, rel=1e-6)
