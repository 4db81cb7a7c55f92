"""Fit the ranking's stage ``weights`` (the ensemble member weights, and the hint slack) on validation gaps.

    rows = member_scores(members, gaps, slack=5)           # restores each gap once per member
    weights, value = fit_weights(rows, gaps, start={"neural": 1.0, "infini": 1.0, ...})

Each member proposes ``config.pool`` readings per gap, as in the shipped ensemble (the member of
kind ``neural`` given the hint as it is and searching the slack itself, the others the hint widened
by the slack); the union is scored once by every member (stage 1), then weights are searched
offline: the ensemble ranks a reading by the weighted mean of its scores
(:func:`~apollo_restore.restoration.ranking.pool.weighted_mean`, in the order of
:func:`~apollo_restore.restoration.ranking.order.best_first`), so a ranking under any weights needs no
model call. The search is coordinate ascent from the folder's weights over
:data:`GRID`, one member at a time, keeping a change only when it raises the objective
(:func:`~apollo_restore.tune.measure.objective`); the first member with a non-zero weight is held
fixed (scaling every weight changes no ranking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tqdm.auto import tqdm

from apollo_restore.data.formats import GapExample
from apollo_restore.restoration.config import hint_slack as slack_of
from apollo_restore.restoration.ranking.order import best_first
from apollo_restore.restoration.ranking.pool import union, weighted_mean
from apollo_restore.restoration.restorer import Restorer, member_kind
from apollo_restore.tune.measure import objective

#: Weights tried for each member.
GRID = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: Passes of coordinate ascent over the members.
ROUNDS = 2


@dataclass
class Scored:
    """One gap's pool: ``readings`` (the union of the members' proposals), ``scores[name][i]``,
    member ``name``'s score of reading ``i``, and ``kinds[name]``, its kind."""

    readings: list[str]
    scores: dict[str, list[float]]
    kinds: dict[str, str]

    def ranked(self, weights: dict[str, float]) -> list[str]:
        """The readings as the ensemble weighted so ranks them (stage 2), best first; members
        weighted 0 take no part, as the ensemble leaves them out."""
        used = [m for m, w in weights.items() if w]
        if not used or not self.readings:
            return list(self.readings)
        s = weighted_mean([self.scores[m] for m in used], [weights[m] for m in used], [self.kinds[m] for m in used])
        return [self.readings[i] for i in best_first(s)]


def member_scores(
    members: dict[str, Restorer], gaps: Sequence[GapExample], slack: int, pool: int, progress: bool = False
) -> list[Scored]:
    """Each gap's union of the members' ``pool`` proposals, scored by every member (see the module
    docstring; ``members["neural"]`` searches the slack itself); with
    ``progress``, a progress bar on stderr."""
    kinds = {name: member_kind(m) for name, m in members.items()}
    out = []
    for gap in tqdm(gaps, desc=f"members (slack {slack})", unit="gap", disable=not progress):
        widened = gap.hint.widen(slack_of(gap.hint, members["neural"].config.replace(hint_slack=slack)))
        proposals = []
        for name, m in members.items():
            hint = gap.hint if kinds[name] == "neural" else widened  # as the ensemble searches
            proposals.append((name, [c.text for c in m.candidates(gap.prefix, gap.suffix, hint, pool)]))
        readings, _ = union(proposals)
        scores = {name: m.score_readings(gap.prefix, gap.suffix, gap.hint, readings) for name, m in members.items()}
        out.append(Scored(readings, scores, kinds))
    return out


def fit_weights(
    rows: Sequence[Scored], gaps: Sequence[GapExample], start: dict[str, float]
) -> tuple[dict[str, float], tuple[float, float]]:
    """The weights (same names as ``start``) that rank ``rows`` best, and their objective.

    Args:
        rows: :func:`member_scores` of ``gaps``.
        gaps: the validation gaps (their targets and hint conditions).
        start: the folder's weights: where the search starts, and what it keeps on ties.
    """
    weights = dict(start)
    best = objective(gaps, [r.ranked(weights) for r in rows])
    fixed = next((name for name, w in weights.items() if w > 0), None)
    for _ in range(ROUNDS):
        for name in weights:
            if name == fixed:
                continue
            for value in GRID:
                trial = dict(weights, **{name: value})
                found = objective(gaps, [r.ranked(trial) for r in rows])
                if found > best:
                    weights, best = trial, found
    return weights, best
