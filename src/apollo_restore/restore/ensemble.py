"""A log-linear ensemble of gap fillers (e.g. the neural FIM model and the n-gram model).

Each member proposes candidates; the union (merged by :func:`match_key`) is re-scored by every
member, and readings are ranked by ``Σ wᵢ · log pᵢ(reading)``. The weights are chosen on the
validation split (``benchmarks/ensemble_weights.py``), never on test gaps.

    from apollo_restore.restore.ensemble import Ensemble
    ens = Ensemble([(neural, 1.0), (ngram, 0.6)])
    ens.candidates(prefix, suffix, hint=7)
"""

from __future__ import annotations

from typing import Protocol

from apollo_restore.data.document import Document
from apollo_restore.fim.examples import Hint
from apollo_restore.restore.engine import RestoreConfig, match_key, restore_text, to_candidates
from apollo_restore.restore.types import Candidate, Restoration


class ScoringFiller(Protocol):
    """A gap filler that can also score given readings (log-probabilities, nats)."""

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]: ...

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]: ...


class Ensemble:
    """Weighted product of experts over gap fillers.

    Args:
        members: ``(filler, weight)`` pairs; weights multiply each member's log-score.
        name: shown in results.
        config: ``k`` (candidates returned) is read from here.
    """

    def __init__(self, members: list[tuple[ScoringFiller, float]], name: str = "ensemble", config: RestoreConfig = RestoreConfig()):
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members, self.name, self.config = members, name, config

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``Σ wᵢ · log pᵢ(reading)`` for each reading."""
        totals = [0.0] * len(readings)
        for filler, weight in self.members:
            for i, score in enumerate(filler.score_readings(prefix, suffix, hint, readings)):
                totals[i] += weight * score
        return totals

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]:
        """The union of the members' candidates, re-ranked by the weighted score.

        Probabilities are normalised over the returned list; ``log_score`` is the weighted sum.
        """
        k = k or self.config.k
        pool: dict[str, str] = {}
        for filler, _ in self.members:
            for cand in filler.candidates(prefix, suffix, hint, k):
                pool.setdefault(match_key(cand.text), cand.text)
        readings = list(pool.values())
        scored = sorted(zip(readings, self.score_readings(prefix, suffix, hint, readings)), key=lambda item: -item[1])
        return to_candidates(scored[:k])

    def restore(
        self, text: str | Document, hints: dict[int, Hint] | None = None, pins: dict[int, str] | None = None, k: int | None = None
    ) -> Restoration:
        """Every lacuna of a Leiden text, left to right (see :func:`restore_text`)."""
        return restore_text(self, text, hints, pins, k or self.config.k, self.name)
