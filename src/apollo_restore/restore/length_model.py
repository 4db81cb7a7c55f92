"""A learned prior over a gap's lost letters where no length is hinted.

Every member scores a reading by a sum of per-letter log-probabilities, so each extra letter
costs and, with no hint, readings come out short (4.8 letters short on held-out gaps, 10 at
17–20 letters). :class:`LostLength` adds ``f(n)`` nats to a reading of ``n`` letters, a
piecewise-linear function fitted on validation restorations by :func:`fit_lost_length`:

    pools = [LengthPool(scores, letters, truth) for each validation gap]   # the ensemble's pools
    model = fit_lost_length(pools)
    model.log_prior(np.array([3, 12]))      # f(3), f(12) (nats)

The fit is a model of the lost length given the context: the members' evidence for a length is
the log-sum-exp of the scores of the pool's readings of that length, ``f`` its prior, and ``f``
maximises the likelihood of the true lengths, ``P(n) ∝ Σ_{|m|=n} exp(s(m) + f(n))``, with a
ridge penalty — a concave problem solved by Newton's method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from apollo_restore.data.normalise import letter_count
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.types import Candidate

#: Letter counts where ``f`` has a free value (linear between them, flat beyond the ends).
DEFAULT_KNOTS = (1, 2, 4, 7, 10, 14, 18, 24, 32)


@dataclass(frozen=True)
class LengthPool:
    """One validation gap's restoration, as the length model is fitted on it.

    Attributes:
        scores: ``(R,)`` the ranking score of each pooled reading (nats, the ensemble's
            weighted sum over members).
        letters: ``(R,)`` letters of each reading.
        truth: letters of the true reading.
    """

    scores: np.ndarray
    letters: np.ndarray
    truth: int


@dataclass(frozen=True)
class LostLength:
    """``f(n)``: nats added to a reading of ``n`` letters when no hint is given (an ensemble
    member that proposes nothing; with a hint it scores 0, the hint's own prior rules).

    Attributes:
        knots: increasing letter counts.
        values: ``f`` at each knot (nats); linear between knots, flat beyond the ends.
    """

    knots: tuple[int, ...]
    values: tuple[float, ...]

    name = "lost-length"

    def log_prior(self, letters: np.ndarray) -> np.ndarray:
        """``(N,)`` letter counts → ``(N,)`` ``f`` (nats)."""
        return np.interp(np.asarray(letters, dtype=np.float64), self.knots, self.values)

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        return []

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``f(letters)`` of each reading with no hint; 0 with one."""
        if hint.given:
            return [0.0] * len(readings)
        return self.log_prior(np.array([letter_count(r) for r in readings])).tolist()

    def language_model(self) -> None:
        return None

    def to_json(self) -> dict[str, list]:
        """``{"knots": [...], "values": [...]}``, as a model folder stores it."""
        return {"knots": list(self.knots), "values": [round(v, 4) for v in self.values]}

    @classmethod
    def from_json(cls, spec: dict[str, list]) -> LostLength:
        """The inverse of :meth:`to_json`."""
        return cls(tuple(int(k) for k in spec["knots"]), tuple(float(v) for v in spec["values"]))


def _basis(letters: np.ndarray, knots: Sequence[int]) -> np.ndarray:
    """``(N,)`` letters → ``(N, K)`` hat functions, so that ``f(n) = basis(n) @ values``."""
    eye = np.eye(len(knots))
    return np.stack([np.interp(letters.astype(np.float64), knots, eye[j]) for j in range(len(knots))], axis=1)


def fit_lost_length(
    pools: Sequence[LengthPool], knots: Sequence[int] = DEFAULT_KNOTS, ridge: float = 1.0, steps: int = 50
) -> LostLength:
    """The ``f`` that maximises ``Σ log P(true length) − ridge/2 · |values|²`` (see the module
    docstring). Gaps whose pool holds no reading of the true length say nothing about ``f``
    and are skipped.

    Args:
        pools: validation gaps restored with no hint.
        knots: letter counts where ``f`` is free.
        ridge: L2 penalty on the values (shrinks ``f`` to 0, i.e. to no prior).
        steps: Newton steps at most.

    Raises:
        ValueError: no pool holds a reading of its true length.
    """
    data = []
    for pool in pools:
        letters = np.asarray(pool.letters)
        if (letters == pool.truth).any():
            scores = np.asarray(pool.scores, dtype=np.float64)
            data.append((scores - scores.max(), _basis(letters, knots), _basis(np.array([pool.truth]), knots)[0]))
    if not data:
        raise ValueError("no validation pool holds a reading of its true length: nothing to fit")
    theta = np.zeros(len(knots))

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        value, grad, hess = -0.5 * ridge * theta @ theta, -ridge * theta, -ridge * np.eye(len(theta))
        for scores, basis, truth in data:
            z = scores + basis @ theta
            top = z.max()
            p = np.exp(z - top)
            total = p.sum()
            p /= total
            mean = p @ basis
            # log P(length = truth) = logsumexp over the truth's readings (their f is f(truth)) − logsumexp(z)
            value += truth @ theta - (top + np.log(total))
            grad += truth - mean
            hess -= (basis * p[:, None]).T @ basis - np.outer(mean, mean)
        return value, grad, hess

    value, grad, hess = objective(theta)
    for _ in range(steps):
        step = np.linalg.solve(hess, -grad)
        rate = 1.0
        while rate > 1e-4:
            new = objective(theta + rate * step)
            if new[0] >= value:
                break
            rate /= 2
        else:
            break
        theta = theta + rate * step
        done = new[0] - value < 1e-9
        value, grad, hess = new
        if done:
            break
    return LostLength(tuple(int(k) for k in knots), tuple(float(v) for v in theta))
