"""The one order of a gap's readings: stages 3 and 4 of the ranking applied (:class:`Ranking`)
and the one sort (:func:`best_first`) that the pool (stage 2) and what is shown both use.

    shown = Ranking(demotions, calibration).rank(annotated_pool, prefix, suffix, hint)

The stages, their formulas and the order's ties: :mod:`apollo_restore.restoration.ranking`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apollo_restore.hint import Hint
from apollo_restore.restoration.ranking.calibration import Calibration
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.restoration.ranking.doubts import Doubts, doubts, misses_hint
from apollo_restore.schema.restoration import Candidate

#: The stages of the ranking, in order (the room's docstring, :mod:`apollo_restore.restoration.ranking`).
STAGES = ("members", "weights", "demotions", "calibration")
#: The stages whose parameters ``apollo-restore tune`` fits on validation gaps, in the order it fits
#: them (each on what the ones before chose): its ``--what``.
FITTED_STAGES = STAGES[1:]


def best_first(*keys: Sequence[float]) -> list[int]:
    """The indices of ``keys[0]`` (all of one length), best first: by the first key, highest
    first, its ties by the next key, and so on; the last ties in index order (a stable sort)."""
    return sorted(range(len(keys[0])), key=lambda i: tuple(-key[i] for key in keys))


@dataclass(frozen=True)
class Ranking:
    """Stages 3 and 4 (a model folder's demotions and calibration) and the order shown.

    Attributes:
        demotions: the factors of doubtful readings (the folder's, or the defaults).
        calibration: the fitted calibration (``None``: ``p = q'``).
        kind: the gaps ranked, whose calibration applies: ``"real"`` lacunae (every text
            restored) or ``"synthetic"`` gaps (a gap set's, :meth:`Presented.for_gap_kind
            <apollo_restore.restoration.presentation.present.Presented.for_gap_kind>`).
        text: the kind of text the gaps are of (``documentary``, ``literary``, ``inscription``):
            real lacunae take its parameters where the calibration has them.
    """

    demotions: Demotions = field(default_factory=Demotions)
    calibration: Calibration | None = None
    kind: str = "real"
    text: str = "documentary"

    def rank(self, pool: list[Candidate], prefix: str, suffix: str, hint: Hint) -> list[Candidate]:
        """A gap's whole annotated pool (stage 2's, in its order: ``prob`` is ``q``,
        ``log_score`` is ``s``; ``display`` and ``unknown_words`` filled in) as shown: best first
        by ``p`` (:mod:`apollo_restore.restoration.ranking`), ``prob`` = ``p``, ``calibrated``
        when stage 4 applied."""
        return self.rank_doubted(pool, [doubts(c, prefix, suffix, hint) for c in pool], hint)

    def rank_doubted(self, pool: list[Candidate], flags: list[Doubts], hint: Hint) -> list[Candidate]:
        """:meth:`rank` of a pool whose doubts (:func:`~apollo_restore.restoration.ranking.doubts.doubts`)
        are ``flags`` (found once, e.g. to try many demotions on the same pools)."""
        return self.rank_factored(pool, self.demotions.factors(pool, flags, hint), hint)

    def rank_factored(self, pool: list[Candidate], phi: list[float], hint: Hint) -> list[Candidate]:
        """:meth:`rank` of a pool whose stage-3 factors are ``phi`` (φ of each reading, e.g. another
        treatment of doubtful readings a benchmark compares with :class:`Demotions`'s)."""
        if not pool:
            return []
        weighted = [c.prob * f for c, f in zip(pool, phi)]
        if all(f == 1.0 for f in phi):
            demoted = [c.prob for c in pool]
        else:
            total = sum(weighted) or 1.0
            demoted = [w / total for w in weighted]
        best = max(range(len(pool)), key=weighted.__getitem__)  # the first of the highest q'
        shown = None
        if self.calibration is not None:
            unknown = [bool(c.unknown_words) for c in pool]
            misses = [misses_hint(c.text, hint, c.display) for c in pool]  # the note "5 letters, hint 6"
            shown = self.calibration.probabilities(demoted, unknown, pool[best], hint, self.kind, self.text, misses)
        probs = demoted if shown is None else shown
        calibrated = {} if shown is None else {"calibrated": True}
        return [pool[i].replace(prob=probs[i], **calibrated) for i in best_first(probs, weighted)]


#: The ranking of a restorer presented without a model folder's settings: the default demotions, no calibration.
DEFAULT_RANKING = Ranking()
