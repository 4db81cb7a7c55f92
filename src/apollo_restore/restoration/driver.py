"""The one driver that restores every lacuna of a text, left to right, with any restorer (the
CLI, the Python API and the web all call :func:`restore_text`).

Gaps are filled left to right: for gap *i*, earlier gaps hold their pinned or best reading,
later ones are shown as ``…`` (unknown extent), as in training. A request may ask for some gaps
only (``only``), the earlier ones holding what an earlier request gave them (``fills``): gap *i*
then reads the context it reads in a restoration of the whole text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from apollo_restore.data.document import Document
from apollo_restore.errors import RequestError, RestoreStopped
from apollo_restore.restoration.context import DEFAULT_WINDOW, GapContexts
from apollo_restore.restoration.line_lengths import line_estimates
from apollo_restore.restoration.request import DEFAULT_REQUEST_LIMITS, RequestLimits, RestoreRequest, check_k
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.restoration.types import GapResult, Restoration


def restore_text(
    restorer: Restorer,
    text: str | Document | RestoreRequest,
    hints: Mapping[Any, Any] | None = None,
    pins: Mapping[Any, str] | None = None,
    k: int = 20,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    progress: Callable[[int, int], None] | None = None,
) -> Restoration:
    """Restore every lacuna of a Leiden text, left to right, with any restorer.

    Args:
        restorer: any :class:`Restorer` (its ``name`` is recorded in the result).
        text: Leiden text (``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``, ``???`` ...), a
            parsed :class:`Document`, or a request already validated (then ``hints``,
            ``pins`` and ``k`` are its own).
        hints: per-gap hint overrides (gap number, counted from 1 → a :class:`~apollo_restore.hint.Hint`
            or any form :func:`~.request.parse_hint_value` reads); ``None`` as a value removes
            the hint the text gives.
        pins: per-gap readings fixed by the caller (gap number from 1 → reading); those gaps
            are not searched.
        k: candidates per gap.
        limits: what the request may ask (:class:`RequestLimits`).
        progress: called ``progress(done, total)`` before the first gap (``done = 0``) and
            after each gap (the CLI's progress bar); ``None``: nothing is reported.

    Returns:
        the restoration of the gaps asked (``request.only``, all by default), in their order.

    Raises:
        RequestError: the request is out of limits, not Greek enough, or has no gap; ``E328``
            a gap before the last one asked that is neither asked, pinned nor filled.
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
    missing = request.missing_fill()
    if missing is not None:
        reason = (
            f"it comes before gap {max(request.only) + 1}, asked, and is neither asked, pinned nor filled: "
            'give it its first reading of an earlier request ("" where it had none), or ask for it too'
        )
        raise RequestError("E328", gap=missing + 1, reason=reason)
    spans = [(m.start, m.end) for m in request.markers]
    contexts = GapContexts(request.document.segments)
    window = model_window(restorer)
    estimates = line_estimates(request.document.segments)
    asked = set(request.only)
    fills: list[str] = []
    gaps: list[GapResult] = []
    if progress is not None:
        progress(0, len(asked))
    for i in range(max(request.only) + 1):
        if i not in asked:  # read as an earlier request left it
            fills.append(request.pins[i] if i in request.pins else request.fills[i])
            continue
        if request.should_stop is not None and request.should_stop():
            raise RestoreStopped(f"stopped before gap {i + 1} of {len(contexts)}")
        gap_started = time.perf_counter()
        hint = request.hints[i]
        prefix, suffix = contexts.context(i, fills)
        pinned = request.pins.get(i)
        cands = [] if pinned is not None else restorer.candidates(prefix, suffix, hint, request.k)
        span = spans[i] if i < len(spans) else None
        estimate = None if hint.given else estimates[i]
        reads = tuple(j + 1 for j in contexts.read_by(i, fills, window))
        gap = GapResult(i + 1, hint, prefix, suffix, cands, pinned, span, length_estimate=estimate, reads=reads)
        gap.ms = round((time.perf_counter() - gap_started) * 1000, 1)
        gaps.append(gap)
        fills.append(gap.best)
        if progress is not None:
            progress(len(gaps), len(asked))
    prefix, suffix = GapContexts(request.document.segments, window=None).context(len(fills) - 1, fills)
    ms = round((time.perf_counter() - started) * 1000, 1)
    pins = {i + 1: reading for i, reading in request.pins.items() if i not in asked}
    fingerprint = getattr(restorer, "fingerprint", None)
    return Restoration(
        request.text, gaps, restorer.name, ms, prefix + fills[-1] + suffix, request.warnings,
        pins=pins, model_fingerprint=fingerprint,
    )  # fmt: skip


def model_window(restorer: Restorer) -> int:
    """Characters of context each side the restorer's model reads (its ``config.context_chars``);
    a restorer that declares none reads all it is given
    (:data:`~apollo_restore.restoration.context.DEFAULT_WINDOW`)."""
    chars = getattr(getattr(restorer, "config", None), "context_chars", None)
    return chars if isinstance(chars, int) and chars > 0 else DEFAULT_WINDOW
