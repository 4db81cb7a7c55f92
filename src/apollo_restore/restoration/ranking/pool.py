"""The pool of a gap's readings (stages 1–2 of :mod:`apollo_restore.restoration.ranking`): the
identity of a reading, merging equivalent readings, the union of several proposers' readings,
the weighted mean of the members' scores and scores to probabilities. Every restorer turns its
``(reading, log_score)`` pairs into candidates here.

    readings = merge_equivalent([("και ", -1.2), ("και", -1.5), ("κατα", -2.0)])
    to_candidates(readings)      # two candidates, probabilities normalised over them
    to_candidates(readings, 1)   # the first of them, its probability still over both

A restorer ranks a pool of readings that does not depend on ``k`` (``RestoreConfig.pool``);
``k`` only cuts it, so asking for more readings never changes the best one or its probability.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from apollo_restore.restoration.ranking.order import best_first
from apollo_restore.restoration.restorer import LANGUAGE_MODEL_KINDS
from apollo_restore.schema.restoration import Candidate

_NON_LETTERS = re.compile(r"[\s·.,;:'\"\-…]+")


def match_key(text: str) -> str:
    """Space-agnostic identity of a reading: letters only, final sigma folded to σ."""
    return _NON_LETTERS.sub("", text).replace("ς", "σ")


def merge_equivalent(beams: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Merge readings equal up to spaces and punctuation: probabilities add (log-sum-exp),
    the best-scoring spelling is kept. Input and output are ``(text, log_score)``, best first."""
    merged: dict[str, tuple[str, float]] = {}
    for text, score in beams:
        key = match_key(text)
        if key in merged:
            best_text, total = merged[key]
            merged[key] = (best_text, max(total, score) + math.log1p(math.exp(-abs(total - score))))
        else:
            merged[key] = (text, score)
    return sorted(merged.values(), key=lambda item: -item[1])


def union(proposals: Iterable[tuple[str, Iterable[str]]]) -> tuple[list[str], list[list[str]]]:
    """The readings several proposers give a gap, merged by :func:`match_key`.

    Args:
        proposals: ``(proposer name, its readings)`` pairs.

    Returns:
        ``(readings, origins)``: each reading once, spelled and ordered as first proposed, and
        for each the names of the proposers that gave it (in proposal order).
    """
    first: dict[str, str] = {}
    origins: dict[str, list[str]] = {}
    for name, readings in proposals:
        for text in readings:
            key = match_key(text)
            first.setdefault(key, text)
            origins.setdefault(key, []).append(name)
    return list(first.values()), list(origins.values())


#: ``k`` that asks a restorer for its whole ranked pool (no pool is this large).
WHOLE_POOL = 1_000_000


def to_candidates(readings: list[tuple[str, float]], k: int | None = None) -> list[Candidate]:
    """``(text, log_score)`` pairs, best first → the first ``k`` (default: all) as candidates,
    with probabilities normalised over **all** the pairs (the whole pool), so that they do not
    depend on ``k``."""
    if not readings:
        return []
    top = readings[0][1]
    weights = [math.exp(score - top) for _, score in readings]
    total = sum(weights)
    return [Candidate(text, w / total, score) for (text, score), w in zip(readings[:k], weights)]


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


def ranked_pool(
    readings: Sequence[str], scores: Sequence[float], k: int | None = None, prior: Sequence[float] | None = None
) -> list[Candidate]:
    """Stage 2's pool: the first ``k`` (default: all) readings by ``s`` (:func:`best_first`),
    each with its ``q`` (normalised over all of them) and ``log_score = s``. With ``prior`` (nats,
    one per reading: retrieval's ``w · log(1 + count)`` of a reading found in parallels), the
    order and ``q`` are by ``s + prior``, and ``log_score`` stays ``s``."""
    ranked_by = list(scores) if prior is None else [s + p for s, p in zip(scores, prior)]
    order = best_first(ranked_by)
    cands = to_candidates([(readings[i], ranked_by[i]) for i in order], k)
    for cand, i in zip(cands, order):
        cand.log_score = scores[i]
    return cands
