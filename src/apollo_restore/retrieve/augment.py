"""Retrieval-augmented restoration: readings found in parallel passages join the beam.

    from apollo_restore.hint import Hint
    from apollo_restore.restoration.members.neural import NeuralMember
    from apollo_restore.retrieve.augment import RetrievalAugmented
    from apollo_restore.retrieve.parallels import ParallelIndex

    rag = RetrievalAugmented(NeuralMember.load(), ParallelIndex.open("data/index"))
    for c in rag.candidates("ετους δευτερου αυτοκρατορος καισαρος ", " σεβαστου", Hint.exact(8)):
        print(c.text, c.prob, c.origin, c.citations)

The model still decides: each reading found between the gap's contexts in the training
corpus is scored by the model
(:meth:`~apollo_restore.restoration.members.neural.NeuralMember.score_readings`, the same
log-probability beam search ranks by) and merged with the beams by :func:`match_key`. An optional prior
``count_weight · log(1 + count)`` favours frequent parallels (default 0: pure model score).
Like every restorer, it ranks a pool that does not depend on ``k`` (the model's whole pool and the
parallels' readings), probabilities normalised over all of it; ``k`` only cuts.

What a scholar sees wraps it (:func:`with_parallels`): the presentation (edition forms, flags,
calibration) applies to the merged pool, so a reading found only in a parallel is shown and
calibrated like the model's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.ranking.pool import WHOLE_POOL, match_key, ranked_pool
from apollo_restore.restoration.restorer import LanguageModel, Restorer
from apollo_restore.retrieve.parallels import MAX_BETWEEN, ParallelIndex
from apollo_restore.retrieve.types import BetweenGroup, GapParallels
from apollo_restore.schema.restoration import Candidate


@dataclass
class _Entry:
    text: str
    log_score: float  # the model's
    origin: list[str]
    citations: list[str] = field(default_factory=list)
    count: int = 0


class RetrievalAugmented:
    """A restorer whose beams are joined by readings from parallel passages.

    Args:
        restorer: the model: any :class:`Restorer` with search settings ``config`` (the
            neural :class:`~apollo_restore.restoration.members.neural.NeuralMember`, the default ensemble).
        index: the parallel-passage index (training split only).
        enabled: ``False`` returns exactly the restorer's candidates.
        max_parallels: most distinct readings taken from the parallels (most frequent first).
        count_weight: weight ``w`` of the prior ``w · log(1 + count)`` added to the model's
            log-score of a reading found ``count`` times (0: none). Candidates keep the
            model's ``log_score``; ``prob`` is normalised over the adjusted scores.
        max_between: most letters between the contexts in a parallel.
        docs_per_reading: document ids cited per reading.
    """

    batches = False  # one gap at a time: the parallels are looked up per gap

    def __init__(
        self,
        restorer: Restorer,
        index: ParallelIndex,
        enabled: bool = True,
        max_parallels: int = 20,
        count_weight: float = 0.0,
        max_between: int = MAX_BETWEEN,
        docs_per_reading: int = 5,
    ) -> None:
        self.restorer, self.index, self.enabled = restorer, index, enabled
        self.max_parallels, self.count_weight = max_parallels, count_weight
        self.max_between, self.docs_per_reading = max_between, docs_per_reading

    @property
    def name(self) -> str:
        return f"{self.restorer.name}+parallels" if self.enabled else self.restorer.name

    def parallels(self, prefix: str, suffix: str, hint: Hint = NO_HINT) -> GapParallels:
        """The parallel passages of one gap (to show beside the candidates)."""
        return self.index.gap_parallels(
            prefix,
            suffix,
            hint,
            max_between=self.max_between,
            limit=self.max_parallels,
            docs_per_group=self.docs_per_reading,
        )

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap: the model's beams merged with scored parallels.

        Args:
            prefix, suffix: ``norm.v1`` context either side of the gap.
            hint: letters in the gap.
            k: candidates wanted (default: the restorer's).

        Returns:
            Up to ``k`` candidates, best first, probabilities over the whole merged pool;
            ``origin`` holds ``"model"`` and/or ``"parallel"``, ``citations`` the documents
            of the parallels.
        """
        if not self.enabled:
            return self.restorer.candidates(prefix, suffix, hint, k)
        k = k or self.restorer.config.k
        beams = self.restorer.candidates(prefix, suffix, hint, WHOLE_POOL)
        groups = self.index.gap_parallels(
            prefix, suffix, hint, max_between=self.max_between, limit=self.max_parallels,
            docs_per_group=self.docs_per_reading, examples=0,
        ).groups  # fmt: skip
        return self.merge(prefix, suffix, hint, beams, groups, k)

    def merge(
        self, prefix: str, suffix: str, hint: Hint, beams: list[Candidate], groups: list[BetweenGroup], k: int
    ) -> list[Candidate]:
        """Score the parallels' readings the beams lack, merge by :func:`match_key`, normalise over
        the whole merged pool, and return its first ``k``."""
        entries: dict[str, _Entry] = {
            match_key(c.text): _Entry(c.text, c.log_score, list(c.origin), list(c.citations)) for c in beams
        }
        fresh: dict[str, BetweenGroup] = {}
        for group in groups:
            key = match_key(group.between)
            if not key:
                continue
            if key in entries:
                entry = entries[key]
                if "parallel" not in entry.origin:
                    entry.origin.append("parallel")
                entry.citations += [d for d in group.docs if d not in entry.citations]
                entry.count += group.count
            elif key in fresh:
                fresh[key].count += group.count
            else:
                fresh[key] = BetweenGroup(group.between, group.count, group.n_docs, list(group.docs))
        scores = self.restorer.score_readings(prefix, suffix, hint, [g.between for g in fresh.values()])
        for (key, group), score in zip(fresh.items(), scores):
            entries[key] = _Entry(group.between, score, ["parallel"], group.docs, group.count)
        pool = list(entries.values())  # one reading a match key: one a text
        prior = [self.count_weight * math.log1p(e.count) for e in pool]
        cands = ranked_pool([e.text for e in pool], [e.log_score for e in pool], k, prior)  # the ranking's stage 2
        by_text = {e.text: e for e in pool}
        for cand in cands:
            cand.origin, cand.citations = by_text[cand.text].origin, by_text[cand.text].citations
        return cands

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """The model's scores (the quantity parallels are ranked by, before the count prior)."""
        return self.restorer.score_readings(prefix, suffix, hint, readings)

    def language_model(self) -> LanguageModel | None:
        return self.restorer.language_model()


def with_parallels(restorer: Restorer, index: ParallelIndex, **options) -> Restorer:
    """``restorer`` with the readings of parallel passages joining its pool: inside its
    presentation when it has one (a :class:`~apollo_restore.restoration.presentation.present.Presented`, as
    ``load_restorer`` returns), so that display forms, flags and calibration cover the parallels'
    readings too; ``options`` go to :class:`RetrievalAugmented`."""
    if isinstance(restorer, Presented):
        return restorer.around(lambda presented: RetrievalAugmented(presented, index, **options))
    return RetrievalAugmented(restorer, index, **options)
