"""Fit the ranking's stage ``demotions`` (:class:`~apollo_restore.restoration.ranking.demotions.Demotions`,
the factors of doubtful readings) on validation gaps.

    pools = whole_pools(restorer, gaps)               # the bare restorer's whole ranked pool per gap (stage 2)
    flagged = annotated(pools, gaps)                  # each reading's doubts, once
    demotions, value = fit_demotions(flagged, gaps, start=Demotions())

Each set of factors ranks the pools as the ranking does before any calibration
(:meth:`~apollo_restore.restoration.ranking.order.Ranking.rank_doubted` with no calibration: the factors,
the exact count's hold, the one order), so every set is measured offline on the same pools: a grid
over :data:`GRID` for each of the three kinds (the folder's ``count_floor`` kept), the folder's
factors first (kept on ties).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from tqdm.auto import tqdm

from apollo_restore.data.formats import GapExample
from apollo_restore.data.orthography import EditionForms
from apollo_restore.restoration.presentation.present import annotate
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.doubts import Doubts, doubts
from apollo_restore.restoration.ranking.order import Ranking
from apollo_restore.restoration.ranking.pool import WHOLE_POOL
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.schema.restoration import Candidate
from apollo_restore.tune.measure import objective

#: Factors tried for each kind of doubt (1: not demoted).
GRID = (1.0, 0.5, 0.3, 0.1, 0.03, 0.01, 0.001)

#: One gap's annotated pool, each reading with its doubts.
Flagged = list[tuple[Candidate, Doubts]]


def whole_pools(restorer: Restorer, gaps: Sequence[GapExample], progress: bool = False) -> list[list[Candidate]]:
    """Each gap's whole ranked pool from the bare restorer (no presentation); with ``progress``, a
    progress bar on stderr."""
    bar = tqdm(gaps, desc="pools", unit="gap", disable=not progress)
    return [restorer.candidates(g.prefix, g.suffix, g.hint, WHOLE_POOL) for g in bar]


def annotated(pools: Sequence[list[Candidate]], gaps: Sequence[GapExample], forms: EditionForms) -> list[Flagged]:
    """Each pool's readings annotated as shown (:func:`~apollo_restore.restoration.presentation.present.annotate`:
    edition forms, unknown words, notes) with their :func:`~apollo_restore.restoration.ranking.doubts.doubts`."""
    out = []
    for pool, g in zip(pools, gaps):
        cands = annotate(pool, forms, g.prefix, g.suffix, g.hint)
        out.append([(c, doubts(c, g.prefix, g.suffix, g.hint)) for c in cands])
    return out


def demoted(flagged: Sequence[Flagged], gaps: Sequence[GapExample], demotions: Demotions) -> list[list[Candidate]]:
    """Each pool as the ranking orders it before calibration (stage 3 alone): ``prob`` is ``q'``."""
    ranking = Ranking(demotions)
    return [ranking.rank_doubted([c for c, _ in pool], [f for _, f in pool], g.hint) for pool, g in zip(flagged, gaps)]


def value(flagged: Sequence[Flagged], gaps: Sequence[GapExample], demotions: Demotions) -> tuple[float, float]:
    """The objective (:func:`~apollo_restore.tune.measure.objective`) of the pools demoted by ``demotions``."""
    return objective(gaps, [[c.text for c in pool[:20]] for pool in demoted(flagged, gaps, demotions)])


def fit_demotions(
    flagged: Sequence[Flagged], gaps: Sequence[GapExample], start: Demotions
) -> tuple[Demotions, tuple[float, float]]:
    """The factors (from :data:`GRID`, or ``start``'s) that rank the pools best, and their objective
    (``start``'s ``count_floor`` kept)."""
    best, best_value = start, value(flagged, gaps, start)
    for truncated, repeat, hint_miss in itertools.product(GRID, repeat=3):
        trial = start.model_copy(update={"truncated": truncated, "repeat": repeat, "hint_miss": hint_miss})
        found = value(flagged, gaps, trial)
        if found > best_value:
            best, best_value = trial, found
    return best, best_value
