"""The torch-free half of restoration: search settings, candidate algebra and the driver that
fills a text's gaps left to right with any filler (importing it loads no model library).

Gaps are filled left to right: for gap *i*, earlier gaps hold their pinned or best reading,
later ones are shown as ``…`` (unknown extent), as in training.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

from apollo_restore.data.document import Document
from apollo_restore.errors import RestoreStopped
from apollo_restore.fim.examples import Hint
from apollo_restore.restore.context import GapContexts, context_of  # noqa: F401  (re-exported)
from apollo_restore.restore.request import DEFAULT_REQUEST_LIMITS, RequestLimits, RestoreRequest, check_k
from apollo_restore.restore.types import Candidate, GapResult, Restoration

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"
_NON_LETTERS = re.compile(r"[\s·.,;:'\"\-…]+")


@dataclass(frozen=True)
class RestoreConfig:
    """Search settings.

    Attributes:
        k: candidates per gap.
        context_chars: characters of prefix and of suffix given to the model, each side
            (the model was trained on windows of about 500 characters in all).
        max_chars: longest middle searched when there is no hint (characters, spaces included).
        exact_length: force candidates to the hinted letter count (only for exact hints);
            for comparisons with systems that need the gap length.
        hint_slack: letters beyond the hint still searched, so a wrong hint is survived.
        hint_penalty: nats charged per letter outside the hint.
        join_chars: suffix characters scored after the middle (at most the layout's; ``None``:
            the layout's).
    """

    k: int = 20
    context_chars: int = 250
    max_chars: int = 40
    exact_length: bool = False
    hint_slack: int = 2
    hint_penalty: float = 3.0
    join_chars: int | None = None


#: The search settings used when a caller gives none.
DEFAULT_RESTORE_CONFIG = RestoreConfig()


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


def restore_text(
    filler,
    text: str | Document | RestoreRequest,
    hints: dict[int, Hint] | None = None,
    pins: dict[int, str] | None = None,
    k: int = 20,
    name: str = "",
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
) -> Restoration:
    """Restore every lacuna of a Leiden text, left to right, with any gap filler.

    Args:
        filler: anything with ``candidates(prefix, suffix, hint, k)`` (the neural
            :class:`Restorer`, an ensemble, retrieval-augmented search).
        text: Leiden text (``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``, ``???`` ...), a
            parsed :class:`Document`, or a request already validated (then ``hints``,
            ``pins`` and ``k`` are its own).
        hints: per-gap hint overrides (0-based gap index → hint); ``None`` as a value
            removes the hint the text gives.
        pins: per-gap readings fixed by the caller; those gaps are not searched.
        k: candidates per gap.
        name: model name recorded in the result.
        limits: what the request may ask (:class:`RequestLimits`).

    Raises:
        RequestError: the request is out of limits, not Greek enough, or has no gap.
        LeidenError: the text is not well-formed Leiden.
        RestoreStopped: the request's ``should_stop`` answered true before a gap.
    """
    started = time.perf_counter()
    if isinstance(text, RestoreRequest) and text.document is not None:
        request = text
    elif isinstance(text, Document):
        request = RestoreRequest(text.id, hints, pins, k).with_document(text, [], check_k(k, limits), limits)
    else:
        request = RestoreRequest(text, hints, pins, k).validate(limits)
    spans = [(m.start, m.end) for m in request.markers]
    contexts = GapContexts(request.document.segments)
    fills: list[str] = []
    gaps: list[GapResult] = []
    for i in range(len(contexts)):
        if request.should_stop is not None and request.should_stop():
            raise RestoreStopped(f"stopped before gap {i + 1} of {len(contexts)}")
        gap_started = time.perf_counter()
        hint = request.hints[i]
        prefix, suffix = contexts.context(i, fills)
        pinned = request.pins.get(i)
        cands = [] if pinned is not None else filler.candidates(prefix, suffix, hint, request.k)
        gap = GapResult(i, hint, prefix, suffix, cands, pinned, spans[i] if i < len(spans) else None)
        gap.ms = round((time.perf_counter() - gap_started) * 1000, 1)
        gaps.append(gap)
        fills.append(gap.best)
    prefix, suffix = GapContexts(request.document.segments, window=None).context(len(fills) - 1, fills)
    ms = round((time.perf_counter() - started) * 1000, 1)
    return Restoration(request.text, gaps, name, ms, prefix + fills[-1] + suffix, request.warnings)


def to_candidates(readings: list[tuple[str, float]]) -> list[Candidate]:
    """``(text, log_score)`` pairs, best first → candidates with probabilities normalised
    over the list."""
    if not readings:
        return []
    top = readings[0][1]
    weights = [math.exp(score - top) for _, score in readings]
    total = sum(weights)
    return [Candidate(text, w / total, score) for (text, score), w in zip(readings, weights)]
