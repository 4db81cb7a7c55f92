"""One place ranks a gap's readings: the scoring pipeline, stage by stage, and its one order.

    scores = weighted_mean([m.score_readings(p, s, hint, readings) for m in members], weights, kinds)
    pool = ranked_pool(readings, scores)                      # stages 1–2: the restorer's ranked pool
    shown = Ranking(demotions, calibration).rank(annotated_pool, prefix, suffix, hint)   # stages 3–4

Every reading ``r`` of a gap's pool ``U`` goes through four stages (:data:`STAGES`); the first two
give a restorer's ranked pool (an ensemble's, or one restorer's alone), the last two what is shown:

1. **members**: each member ``i`` scores ``r``: ``log pᵢ(r)`` (nats, its ``score_readings``);
   ``U`` is the union of the members' proposals (merged by
   :func:`~apollo_restore.restoration.members.candidates.match_key`, in the order first proposed).
2. **weights** (the ensemble, :func:`weighted_mean` and :func:`ranked_pool`)::

       s(r) = Σᵢ wᵢ · log pᵢ(r) / Σ_{i a language model} wᵢ
       q(r) = exp s(r) / Σ_{r' ∈ U} exp s(r')

   language models being the members of kind ``neural`` or ``classical``; a prior's or a
   document's score counts in the sum only. A restorer on its own (the neural member, retrieval)
   gives ``s`` (its own score) and ``q`` the same way (:func:`~.members.candidates.to_candidates`).
3. **demotions** (:class:`~apollo_restore.restoration.demotions.Demotions`)::

       φ(r)  = Π factors of r's doubts (truncated, repeats the context, misses an exact hint),
               the misses lowered together under an exact count (hold_count)
       q'(r) = q(r) · φ(r) / Σ_{r'} q(r') · φ(r')        (q' = q when every φ is 1)

4. **calibration** (:class:`~apollo_restore.restoration.calibration.Calibration`, per hint
   condition ``a``–``h`` and a shared ``δ``)::

       α    = a · exp(g · log n + h · min(m, M))
       z(r) = α · log q'(r) − δ · [r leaves an unknown word]
       none = b − c · max z + d · log n + e · m + f · s*
       p(r) = exp z(r) / (Σ_{r'} exp z(r') + exp none)

   with the parameters of the gap's kind (a real lacuna, every text's; a synthetic gap) and
   ``n`` (the best reading's letters held within the hint's range: an exact hint's count, no
   hint the reading's; :func:`~.calibration.gap_letters`), ``m`` (the margin
   of the best ``log q'`` over the next, nats), ``M`` (:data:`~.calibration.MARGIN_CAP`, 10 nats:
   the inverse temperature ``α`` moves with ``log n`` and the capped margin) and ``s*`` (``s`` of
   the best reading) read off the reading of highest ``q'`` (the first of them in the stage-2
   order); without a calibration, or for a hint condition it has no parameters for, ``p = q'``.
   ``tests/restoration/test_ranking_formula.py`` evaluates these four lines against the code.

**The order** is by ``p``, best first; ties go by ``q · φ``, then by the stage-2 order (``s``,
then ``U``'s). :func:`best_first` is the one sort: the ensemble's pool (stage 2) and what is shown
(:meth:`Ranking.rank`) are both ordered by it; the stages' modules compute numbers only, and the
presentation (:class:`~apollo_restore.restoration.presentation.present.Presented`) annotates,
calls :meth:`Ranking.rank` and cuts to ``k``. ``apollo-restore tune`` fits the stages with
parameters, :data:`FITTED_STAGES`, by these names and with these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from apollo_restore.hint import Hint
from apollo_restore.restoration.calibration import Calibration
from apollo_restore.restoration.demotions import Demotions, Doubts, doubts
from apollo_restore.restoration.members.candidates import to_candidates
from apollo_restore.restoration.restorer import LANGUAGE_MODEL_KINDS
from apollo_restore.restoration.types import Candidate

#: The stages of the ranking, in order (the module docstring).
STAGES = ("members", "weights", "demotions", "calibration")
#: The stages whose parameters ``apollo-restore tune`` fits on validation gaps, in the order it fits
#: them (each on what the ones before chose): its ``--what``.
FITTED_STAGES = STAGES[1:]


def best_first(*keys: Sequence[float]) -> list[int]:
    """The indices of ``keys[0]`` (all of one length), best first: by the first key, highest
    first, its ties by the next key, and so on; the last ties in index order (a stable sort)."""
    return sorted(range(len(keys[0])), key=lambda i: tuple(-key[i] for key in keys))


def weighted_mean(scores: Sequence[Sequence[float]], weights: Sequence[float], kinds: Sequence[str]) -> list[float]:
    """Stage 2's ``s``: each reading's ``Σ wᵢ · scoreᵢ / Σ_{language models} wᵢ``.

    Args:
        scores: one list per member (in member order) of its scores of the readings.
        weights: each member's weight.
        kinds: each member's :data:`~apollo_restore.restoration.restorer.MemberKind`; only the
            language models' weights form the denominator (1 when there is none).
    """
    totals = [0.0] * len(scores[0])
    for weight, member_scores in zip(weights, scores):
        for i, score in enumerate(member_scores):
            totals[i] += weight * score
    scale = sum(w for w, kind in zip(weights, kinds) if kind in LANGUAGE_MODEL_KINDS) or 1.0
    return [t / scale for t in totals]


def ranked_pool(readings: Sequence[str], scores: Sequence[float], k: int | None = None) -> list[Candidate]:
    """Stage 2's pool: the first ``k`` (default: all) readings by ``s`` (:func:`best_first`),
    each with its ``q`` (normalised over all of them) and ``log_score = s``."""
    return to_candidates([(readings[i], scores[i]) for i in best_first(scores)], k)


@dataclass(frozen=True)
class Ranking:
    """Stages 3 and 4 (a model folder's demotions and calibration) and the order shown.

    Attributes:
        demotions: the factors of doubtful readings (the folder's, or the defaults).
        calibration: the fitted calibration (``None``: ``p = q'``).
        kind: the gaps ranked, whose calibration applies: ``"real"`` lacunae (every text
            restored) or ``"synthetic"`` gaps (a gap set's, :meth:`Presented.for_gap_kind
            <apollo_restore.restoration.presentation.present.Presented.for_gap_kind>`).
    """

    demotions: Demotions = field(default_factory=Demotions)
    calibration: Calibration | None = None
    kind: str = "real"

    def rank(self, pool: list[Candidate], prefix: str, suffix: str, hint: Hint) -> list[Candidate]:
        """A gap's whole annotated pool (stage 2's, in its order: ``prob`` is ``q``,
        ``log_score`` is ``s``; ``display`` and ``unknown_words`` filled in) as shown: best first
        by ``p`` (the module docstring), ``prob`` = ``p``, ``calibrated`` when stage 4 applied."""
        return self.rank_doubted(pool, [doubts(c, prefix, suffix, hint) for c in pool], hint)

    def rank_doubted(self, pool: list[Candidate], flags: list[Doubts], hint: Hint) -> list[Candidate]:
        """:meth:`rank` of a pool whose doubts (:func:`~apollo_restore.restoration.demotions.doubts`)
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
            shown = self.calibration.probabilities(demoted, unknown, pool[best], hint, self.kind)
        probs = demoted if shown is None else shown
        calibrated = {} if shown is None else {"calibrated": True}
        return [replace(pool[i], prob=probs[i], **calibrated) for i in best_first(probs, weighted)]


#: The ranking of a restorer presented without a model folder's settings: the default demotions, no calibration.
DEFAULT_RANKING = Ranking()
