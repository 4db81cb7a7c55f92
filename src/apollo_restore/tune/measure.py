"""How a ranking does on validation gaps: the one objective every ``tune`` step maximises.

value = objective(gaps, rankings)     # (mean uniform Top-1 over conditions, … Top-20)
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from apollo_restore.data.formats import GapExample
from apollo_restore.evaluate.gapsets import condition_of
from apollo_restore.evaluate.metrics import score_gap, uniform


def by_condition(gaps: Sequence[GapExample], rankings: Sequence[Sequence[str]]) -> dict[str, tuple[float, float]]:
    """Uniform-weighted (mean per letter count 1–20, then over counts) Top-1 and Top-20 per hint
    condition, of each gap's ranked readings (``rankings[i]``: gap ``i``'s, best first)."""
    scores: dict[str, list] = {}
    for gap, ranked in zip(gaps, rankings):
        scores.setdefault(condition_of(gap), []).append(score_gap(gap.target, list(ranked)))
    out = {}
    for cond, found in sorted(scores.items()):
        summary = uniform(found)
        out[cond] = (summary.top1 or 0.0, summary.top20 or 0.0)
    return out


def objective(gaps: Sequence[GapExample], rankings: Sequence[Sequence[str]]) -> tuple[float, float]:
    """Mean over conditions of :func:`by_condition`'s Top-1, then of its Top-20 (compared as a
    pair: Top-20 breaks ties of Top-1)."""
    table = by_condition(gaps, rankings).values()
    return statistics.mean(t for t, _ in table), statistics.mean(t for _, t in table)
