"""The one protocol every restorer implements (:class:`Restorer`: proposes and scores the readings
of one gap): the ensemble members (the neural
:class:`~apollo_restore.restoration.members.neural.NeuralMember`, the unbounded-order, n-gram and
document members, the length prior), the :class:`~apollo_restore.restoration.members.ensemble.Ensemble`
itself, retrieval-augmented search, the presentation layer and the vLLM backend.

    restorer.candidates(prefix, suffix, Hint.exact(7), k=20)   # ranked readings of one gap
    restorer.score_readings(prefix, suffix, hint, ["και", "κατα"])   # log-probabilities (nats)
    restorer.language_model()   # (model, tokenizer) for bits per character, or None
    candidates_many(restorer, gaps, k)   # several gaps: together when the restorer declares it batches

``candidates`` proposes; ``score_readings`` scores readings proposed by anyone, on the scale the
restorer ranks by, which is what an ensemble multiplies (a restorer that cannot score, e.g. a length
prior proposing nothing, still answers both). ``language_model`` gives evaluation the neural
model behind a restorer — an ensemble answers with its neural member's, a classical restorer with
``None`` — so that bits per character is reported, or plainly skipped, without guessing.

What a restorer can do is declared, never guessed: ``batches`` (a class attribute) says whether it
has ``candidates_many`` (several gaps searched together), and an ensemble member declares its
``kind`` (:data:`MemberKind`); :func:`member_kind` refuses a member that declares none.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Protocol, get_args, runtime_checkable

from apollo_restore.hint import Hint
from apollo_restore.schema.restoration import Candidate

#: What a restorer is as an ensemble member (its ``kind`` attribute): the neural FIM model; a
#: classical language model (its scores are log-probabilities of the reading, like the neural
#: one's); evidence from the gap's own document; a prior (a score that is neither). The weights
#: of the first two form the denominator of the ensemble's weighted mean
#: (:func:`~apollo_restore.restoration.ranking.pool.weighted_mean`).
MemberKind = Literal["neural", "classical", "document", "prior"]
MEMBER_KINDS: tuple[str, ...] = get_args(MemberKind)
LANGUAGE_MODEL_KINDS: frozenset[str] = frozenset({"neural", "classical"})


def member_kind(restorer: object) -> MemberKind:
    """The member kind ``restorer`` declares (its ``kind`` attribute).

    Raises:
        TypeError: it declares none, or one that is not a :data:`MemberKind` (a member's kind
            decides whether its weight counts in the ensemble's denominator: never guessed).
    """
    kind = getattr(restorer, "kind", None)
    if kind not in MEMBER_KINDS:
        name = getattr(restorer, "name", type(restorer).__name__)
        raise TypeError(
            f"ensemble member {name!r} ({type(restorer).__name__}) declares kind {kind!r}: "
            f"declare a class attribute kind, one of {', '.join(MEMBER_KINDS)}"
        )
    return kind


class LanguageModel(NamedTuple):
    """A causal language model over characters and its tokenizer (torch module, ``CharTokenizer``
    or a Hugging Face tokenizer), as :func:`apollo_restore.evaluate.harness.bpc_by_period` reads them."""

    model: Any
    tokenizer: Any


@runtime_checkable
class Restorer(Protocol):
    """Ranked readings for one gap, and scores for given readings.

    Attributes:
        name: shown in results (the model folder, or the restorer's kind).
        batches: whether it has a ``candidates_many(gaps, k)`` method searching several gaps
            together (:func:`candidates_many` calls it), each gap getting what :meth:`candidates`
            gives it alone; a class attribute every restorer declares.
    """

    name: str
    batches: bool

    def candidates(self, prefix: str, suffix: str, hint: Hint, k: int | None = None) -> list[Candidate]:
        """Up to ``k`` readings (default: the restorer's own ``k``), best first: the first ``k`` of a
        ranked pool that does not depend on ``k``, probabilities normalised over the whole pool
        (:func:`~.candidates.to_candidates`), so that ``k`` only cuts the list. (Not yet for
        the vLLM backend, which still searches ``k``.)

        Args:
            prefix, suffix: ``norm.v1`` text either side of the gap (other gaps as ``-``/``…``).
            hint: letters in the gap.
        """
        ...

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """One log-score (nats) per reading, in order: the quantity :meth:`candidates` ranks by."""
        ...

    def language_model(self) -> LanguageModel | None:
        """The neural language model behind this restorer, or ``None`` when there is none."""
        ...


def candidates_many(
    restorer: Restorer, gaps: list[tuple[str, str, Hint]], k: int | None = None
) -> list[list[Candidate]]:
    """:meth:`Restorer.candidates` of each gap ``(prefix, suffix, hint)``: searched together by a
    restorer that declares it ``batches`` (its ``candidates_many``: the neural model batches its
    search over the gaps), else one gap at a time. Each gap's candidates are those it gets alone."""
    if restorer.batches:
        return restorer.candidates_many(gaps, k)
    return [restorer.candidates(prefix, suffix, hint, k) for prefix, suffix, hint in gaps]
