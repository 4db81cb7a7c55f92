"""Restoration metrics and the two averaging protocols (docs/design.md, *Evaluation*; paper §4.1, §5.6, App. H).

Every comparison is *space-agnostic*: spaces, punctuation, ``·``, digits and gap markers are
removed and final ``ς`` is folded to ``σ`` (:func:`agnostic`), as Cullhed et al. and Ithaca
score. Per gap (:func:`score_gap`):

* **top1** — the first candidate equals the target; **top20** — some candidate among the
  first ``k`` (20) does;
* **cer** — Levenshtein distance between the top candidate and the target over the target's
  length (an empty or missing prediction scores 1.0); **char_acc** — ``max(0, 1 − cer)``;
* **dlen** — letters of the top candidate minus letters of the target.

Aggregates (:func:`summarise`):

* **prior** — unweighted mean over gaps whose target has 1–10 letters (the protocol of prior work);
* **uniform** — mean within each exact letter count, then the mean of those over 1–20 with equal
  weight; lengths without gaps are listed in ``missing`` and skipped;
* **all** — unweighted mean over every gap (App. H's "legacy" T1/T20);
* **per_length** — the per-length means behind the uniform protocol (for the curves).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from apollo_restore.data.normalise import fold

PRIOR_LENGTHS = range(1, 11)
UNIFORM_LENGTHS = range(1, 21)


def agnostic(text: str) -> str:
    """Space-agnostic form: ``norm.v1`` letter folding (case, accents, lunate and final sigma →
    ``σ``), then letters only — spaces, ``·``, punctuation, digits and ``-``/``…`` removed.
    ``agnostic("Καὶ τῆς·") == "καιτησ"``; the same key as
    :func:`~apollo_restore.restoration.ranking.pool.match_key` on normalised text, minus digits."""
    return "".join(ch for ch in fold(text) if ch.isalpha())


def answer_in_context(prefix: str, suffix: str, target: str) -> bool:
    """Whether a gap's answer, or one of its words of ≥ 5 letters, stands in its visible
    context (space-agnostic): the gaps a reader of the document could restore by copying."""
    context = agnostic(prefix + " " + suffix)
    words = [agnostic(w) for w in target.split()]
    return agnostic(target) in context or any(len(w) >= 5 and w in context for w in words)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions all cost 1); two-row DP, O(|a|·|b|)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class GapScore:
    """Scores of one gap's prediction (all space-agnostic).

    Attributes:
        length: letters in the target.
        top1, top20: exact match of the first / of any of the first ``k`` candidates.
        cer: Levenshtein(top candidate, target) / length.
        char_acc: ``max(0, 1 − cer)``.
        dlen: letters(top candidate) − length.
        predicted: whether the system returned any candidate.
    """

    length: int
    top1: bool
    top20: bool
    cer: float
    char_acc: float
    dlen: int
    predicted: bool = True


def score_gap(target: str, candidates: Sequence[str], k: int = 20) -> GapScore:
    """Score ranked candidate texts against the target.

    Raises:
        ValueError: the target has no letters.
    """
    truth = agnostic(target)
    if not truth:
        raise ValueError(f"target {target!r} has no letters")
    keys = [agnostic(c) for c in candidates[:k]]
    top = keys[0] if keys else ""
    cer = levenshtein(top, truth) / len(truth)
    return GapScore(
        length=len(truth), top1=top == truth, top20=truth in keys, cer=cer,
        char_acc=max(0.0, 1.0 - cer), dlen=len(top) - len(truth), predicted=bool(keys),
    )  # fmt: skip


METRICS = ("top1", "top20", "char_acc", "cer", "dlen")


@dataclass
class Summary:
    """Mean metrics over a set of gaps under one protocol.

    Attributes:
        n: gaps counted.
        top1, top20, char_acc, cer, dlen: means (``None`` when ``n == 0``).
        lengths: letter counts that entered the mean (uniform protocol).
        missing: letter counts of the protocol's range without gaps (uniform: skipped).
    """

    n: int = 0
    top1: float | None = None
    top20: float | None = None
    char_acc: float | None = None
    cer: float | None = None
    dlen: float | None = None
    lengths: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_of(scores: Iterable[GapScore]) -> Summary:
    """Unweighted mean of each metric."""
    scores = list(scores)
    if not scores:
        return Summary()
    n = len(scores)
    return Summary(
        n=n,
        **{m: sum(float(getattr(s, m)) for s in scores) / n for m in METRICS},
        lengths=sorted({s.length for s in scores}),
    )


def by_length(scores: Iterable[GapScore]) -> dict[int, Summary]:
    """Mean metrics for each exact letter count, in increasing length."""
    groups: dict[int, list[GapScore]] = {}
    for s in scores:
        groups.setdefault(s.length, []).append(s)
    return {n: mean_of(groups[n]) for n in sorted(groups)}


def prior(scores: Iterable[GapScore], lengths: range = PRIOR_LENGTHS) -> Summary:
    """The prior-work protocol: unweighted mean over gaps of 1–10 letters."""
    out = mean_of(s for s in scores if s.length in lengths)
    out.missing = [n for n in lengths if n not in out.lengths]
    return out


def uniform(scores: Iterable[GapScore], lengths: range = UNIFORM_LENGTHS) -> Summary:
    """The uniform-weighted protocol: mean per exact length, then mean over ``lengths`` with
    equal weight. Lengths with no gaps are skipped and listed in ``missing``; ``n`` counts gaps."""
    table = by_length(s for s in scores if s.length in lengths)
    out = Summary(
        n=sum(t.n for t in table.values()), lengths=list(table), missing=[n for n in lengths if n not in table]
    )
    if table:
        for m in METRICS:
            setattr(out, m, sum(getattr(t, m) for t in table.values()) / len(table))
    return out


def summarise(scores: Iterable[GapScore]) -> dict[str, Any]:
    """All protocols for one group of gaps, JSON-ready:
    ``{"prior", "uniform", "all": Summary dict, "per_length": {n: Summary dict}}``."""
    scores = list(scores)
    return {
        "prior": prior(scores).to_dict(),
        "uniform": uniform(scores).to_dict(),
        "all": mean_of(scores).to_dict(),
        "per_length": {str(n): s.to_dict() for n, s in by_length(scores).items()},
    }


__all__ = [
    "GapScore", "METRICS", "PRIOR_LENGTHS", "Summary", "UNIFORM_LENGTHS", "agnostic", "by_length",
    "ece", "levenshtein", "mean_of", "prior", "score_gap", "summarise", "uniform",
]  # fmt: skip


def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of probabilities ``confidence`` ``(n,)`` against outcomes
    ``correct`` ``(n,)`` (0/1): ``Σ_b (n_b / n) · |accuracy_b − confidence_b|`` over ``bins``
    equal-width bins of [0, 1] (0 = perfectly calibrated; NaN with no events)."""
    if not len(confidence):
        return float("nan")
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.sum() * abs(confidence[inside].mean() - correct[inside].mean())
    return float(total / len(confidence))


def reliability(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> dict[str, Any]:
    """Expected calibration error and the reliability table of probabilities vs outcomes.

    Args:
        confidence: the probability shown for each event (e.g. a gap's top-1 reading).
        correct: whether each event came true (e.g. the top-1 reading is the target).
        bins: equal-width bins over [0, 1].

    Returns:
        ``{"n", "ece", "bins": [{"lo", "hi", "n", "confidence", "accuracy"}]}``: ``ece`` is
        ``Σ_b (n_b / n) · |accuracy_b − confidence_b|`` (0 = perfectly calibrated; ``None``
        with no events); empty bins are left out.
    """
    rows: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for p, ok in zip(confidence, correct):
        rows[min(int(p * bins), bins - 1)].append((p, bool(ok)))
    n = sum(len(r) for r in rows)
    table = []
    for b, row in enumerate(rows):
        if not row:
            continue
        conf = sum(p for p, _ in row) / len(row)
        acc = sum(ok for _, ok in row) / len(row)
        table.append(
            {
                "lo": b / bins,
                "hi": (b + 1) / bins,
                "n": len(row),
                "confidence": round(conf, 4),
                "accuracy": round(acc, 4),
            }
        )
    error = ece(np.asarray(confidence, float), np.asarray(correct, float), bins) if n else None
    return {"n": n, "ece": round(error, 4) if error is not None else None, "bins": table}
