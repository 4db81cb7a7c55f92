"""A log-linear ensemble of restorers, its members (e.g. the neural member, the unbounded-order
and document members, the length prior).

Each member proposes candidates; the union (merged by
:func:`~apollo_restore.restoration.ranking.pool.match_key`) is re-scored by every member,
and readings are ranked by the weighted mean of their scores: stages 1 and 2 of
:mod:`apollo_restore.restoration.ranking`, whose functions compute and order them. The weights are
chosen on the validation split (``apollo-restore tune``), never on test gaps.

    from apollo_restore.restoration.members.ensemble import Ensemble
    ens = Ensemble([(neural, 1.0), (infini, 0.6)])
    ens.candidates(prefix, suffix, Hint.exact(7))
"""

from __future__ import annotations

from collections.abc import Callable

from apollo_restore.data.normalise import letter_count
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig, hint_slack
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.ranking.pool import ranked_pool, union, weighted_mean
from apollo_restore.restoration.restorer import LanguageModel, Restorer, candidates_many, member_kind
from apollo_restore.schema.folder import NoOptions
from apollo_restore.schema.restoration import Candidate


class LengthPrior:
    """A soft length hint as an ensemble member: each reading scores minus the number of
    letters by which it misses the hinted count or range (0 with no hint). It proposes no
    candidates; its weight in the ensemble sets how firmly hints are followed."""

    name = "length-prior"
    kind = "prior"  # its score is no log-probability: its weight stays out of the mean's denominator
    batches = False
    options = NoOptions  # what a model folder's entry of it may set
    in_words = "gap lengths"  # what it is, for people (the model's label)

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        return []

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        return [-float(hint.distance(n)) for n in map(letter_count, readings)]

    def language_model(self) -> None:
        return None


class Ensemble:
    """Weighted product of experts over restorers.

    Args:
        members: ``(restorer, weight)`` pairs; weights multiply each member's log-score.
        name: shown in results.
        config: the search settings: ``k`` (candidates returned by default), ``pool`` (readings
            each member proposes) and ``hint_slack`` (letters beyond the hint either side every
            member searches; the :class:`LengthPrior` member then decides how firmly the hint
            holds). The neural member searches the slack itself (its own settings, the same
            ones when loaded from a folder), paying ``config.HINT_PENALTY`` nats a letter outside
            the hint, so that its ``pool`` readings favour the hinted length as the ranking will;
            the other members are given the hint widened by the slack (:meth:`Hint.widen`).
        neural: the folder's neural model, for reports, whether or not it is a member; or a
            function that loads it when first asked (a member weighted 0 is never loaded
            for restoring, which spares importing torch).

    Each member's ``kind`` (:data:`~apollo_restore.restoration.restorer.MemberKind`) says how it takes part: the
    ``neural`` one is given the hint as it is; only language models (``neural``,
    ``classical``) weigh in the denominator of the mean.

    Raises:
        ValueError: no member.
        TypeError: a member that declares no kind (:func:`~apollo_restore.restoration.restorer.member_kind`).
    """

    batches = True  # candidates_many: the members that batch search the gaps together

    def __init__(
        self,
        members: list[tuple[Restorer, float]],
        name: str = "ensemble",
        config: RestoreConfig = DEFAULT_RESTORE_CONFIG,
        neural: NeuralMember | Callable[[], NeuralMember] | None = None,
    ):
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members, self.name, self.config = members, name, config
        self.kinds = [member_kind(restorer) for restorer, _ in members]
        self._neural = neural

    @property
    def neural(self) -> NeuralMember | None:
        """The model folder's neural member, whether or not it takes part in the ensemble; loaded on
        first use."""
        if callable(self._neural):
            self._neural = self._neural()
        return self._neural

    def language_model(self) -> LanguageModel | None:
        """The folder's neural language model (bits per character is reported for it)."""
        return None if self.neural is None else self.neural.language_model()

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``Σ wᵢ · log pᵢ(reading) / Σ wᵢ`` for each reading (the language models' weights in
        the denominator; members of other kinds only in the sum): the weighted mean
        (:func:`~apollo_restore.restoration.ranking.pool.weighted_mean`), on the scale of one model's
        log-probability, and the ``log_score`` of :meth:`candidates`."""
        scores = [restorer.score_readings(prefix, suffix, hint, readings) for restorer, _ in self.members]
        return weighted_mean(scores, [w for _, w in self.members], self.kinds)

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The first ``k`` of the union of the members' candidates, re-ranked by the weighted score.

        Each member proposes ``config.pool`` readings whatever ``k``, so the ranked union and its
        probabilities (normalised over the whole union) do not depend on ``k``; ``log_score`` is
        the weighted mean ``Σ wᵢ log pᵢ / Σ wᵢ`` (language models' weights in the denominator).
        """
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` of several gaps ``(prefix, suffix, hint)``: the members that can
        search them together do (:func:`~apollo_restore.restoration.restorer.candidates_many`)."""
        k = k or self.config.k
        widened = [
            (prefix, suffix, hint.widen(hint_slack(hint, self.config))) for prefix, suffix, hint in gaps
        ]  # a wrong hint is survived (not under exact_length)
        # member → gap → candidates: each member proposes its whole pool, whatever k; the neural
        # member searches beyond the hint itself, with a penalty per letter outside it
        proposals = [
            candidates_many(restorer, gaps if kind == "neural" else widened, self.config.pool)
            for (restorer, _), kind in zip(self.members, self.kinds)
        ]
        names = [restorer.name for restorer, _ in self.members]
        out = []
        for g, (prefix, suffix, hint) in enumerate(gaps):
            readings, _ = union((name, [c.text for c in member[g]]) for name, member in zip(names, proposals))
            # every reading is scored (the probabilities are normalised over the whole union, whatever
            # k; the neural member reuses its search's scores); weighted mean rather than sum: the
            # same ranking, and the probabilities of a geometric mean rather than of a product,
            # which would be overconfident
            out.append(ranked_pool(readings, self.score_readings(prefix, suffix, hint, readings), k))
        return out
