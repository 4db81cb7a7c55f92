"""The one driver that restores every lacuna of a text, left to right, with any restorer (the
CLI, the Python API and the web all call :func:`restore_text`).

Gaps are filled left to right: for gap *i*, earlier gaps of given extent hold their pinned or
best reading, later ones are shown as ``…`` (unknown extent), as in training. A guess that no
count bounds never feeds the next gaps (:meth:`~apollo_restore.schema.restoration.GapResult.context_fill`): lost lines
(``lost.?lin``) are not searched at all (``lost lines: not restored``), and a gap of unknown extent
is searched at any length (its line-length estimate shown beside it: searched at the estimate, the
validation cut lines' W.Top-1 fell 0.212 → 0.137), its reading shown but left out of later contexts
(both stay ``…`` there). A request may ask for some gaps only
(``only``), the earlier ones holding what an earlier request gave them (``fills``): gap *i* then
reads the context it reads in a restoration of the whole text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from apollo_restore.data.document import Document, Lacuna
from apollo_restore.data.normalise import UNKNOWN_GAP
from apollo_restore.data.textindex import TextIndex
from apollo_restore.errors import RequestError, RestoreStopped
from apollo_restore.restoration.answer import gap_result, restoration_of
from apollo_restore.restoration.context import DEFAULT_WINDOW, GapContexts
from apollo_restore.restoration.line_lengths import line_estimates
from apollo_restore.restoration.request import CheckedRequest, validate, with_document
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.restoration.text_kind import read_kind
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS, RequestLimits
from apollo_restore.schema.restoration import GapResult, Restoration, RestoreRequest


def restore_text(
    restorer: Restorer,
    text: str | Document | RestoreRequest | CheckedRequest,
    hints: Mapping[Any, Any] | None = None,
    pins: Mapping[Any, str] | None = None,
    k: int = 20,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    progress: Callable[[int, int], None] | None = None,
    kind: str | None = None,
) -> Restoration:
    """Restore every lacuna of a Leiden text, left to right, with any restorer.

    Args:
        restorer: any :class:`Restorer` (its ``name`` is recorded in the result).
        text: Leiden text (``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``, ``???`` ...), a
            parsed :class:`Document`, or a request (:class:`RestoreRequest`, checked against
            ``limits``, or a :class:`~.request.CheckedRequest`: then ``hints``, ``pins``, ``k``
            and ``kind`` are its own).
        hints: per-gap hint overrides (gap number, counted from 1 → a :class:`~apollo_restore.hint.Hint`
            or any form :func:`~.request.parse_hint_value` reads); ``None`` as a value removes
            the hint the text gives.
        pins: per-gap readings fixed by the caller (gap number from 1 → reading); those gaps
            are not searched.
        k: candidates per gap.
        limits: what the request may ask (:class:`RequestLimits`).
        progress: called ``progress(done, total)`` before the first gap (``done = 0``) and
            after each gap (the CLI's progress bar); ``None``: nothing is reported.
        kind: the kind of text (``documentary``, ``literary``, ``inscription``) whose calibration
            the gaps take; ``None``: the request's, else read from the text (:func:`text_kind`).

    Returns:
        the restoration of the gaps asked (``request.only``, all by default), in their order.

    Raises:
        RequestError: the request is out of limits, not Greek enough, or has no gap; ``E328``
            a gap before the last one asked that is neither asked, pinned nor filled.
        LeidenError: the text is not well-formed Leiden.
        RestoreStopped: the request's ``should_stop`` answered true before a gap.
    """
    started = time.perf_counter()
    if isinstance(text, CheckedRequest):
        request = text
    elif isinstance(text, Document):
        request = with_document(RestoreRequest(text.id, hints, pins, k, kind=kind), text, [], limits)
    else:
        request = validate(
            text if isinstance(text, RestoreRequest) else RestoreRequest(text, hints, pins, k, kind=kind), limits
        )
    missing = request.missing_fill()
    if missing is not None:
        reason = (
            f"it comes before gap {max(request.only) + 1}, asked, and is neither asked, pinned nor filled: "
            'give it its first reading of an earlier request ("" where it had none), or ask for it too'
        )
        raise RequestError("E328", gap=missing + 1, reason=reason)
    kind, kind_read = text_kind(restorer, request)
    if kind is not None:
        restorer = restorer.for_text_kind(kind)
    spans = [(m.start, m.end) for m in request.markers]
    contexts = GapContexts(request.document.segments)
    window = model_window(restorer)
    estimates = line_estimates(request.document.segments)
    lacunae = [seg for seg in request.document.segments if isinstance(seg, Lacuna)]
    asked = set(request.only)
    fills: list[str | None] = []
    gaps: list[GapResult] = []
    if progress is not None:
        progress(0, len(asked))
    for i in range(max(request.only) + 1):
        hint, pinned = request.hints[i], request.pins.get(i)
        if i not in asked:  # read as an earlier request left it, as a whole restoration would
            fill = pinned if pinned is not None else request.fills[i]
            fills.append(fill if pinned is not None or hint.given else None)
            continue
        if request.should_stop is not None and request.should_stop():
            raise RestoreStopped(f"stopped before gap {i + 1} of {len(contexts)}")
        gap_started = time.perf_counter()
        prefix, suffix = contexts.context(i, fills)
        lost_lines = lacunae[i].line_unit and not hint.given and pinned is None
        estimate = None if hint.given or lost_lines else estimates[i]
        if pinned is not None or lost_lines:
            cands = []
        else:
            cands = restorer.candidates(prefix, suffix, hint, request.k)
        span = spans[i] if i < len(spans) else None
        reads = tuple(j + 1 for j in contexts.read_by(i, fills, window))
        gap = gap_result(
            i + 1, hint, prefix, suffix, cands, pinned, span,
            length_estimate=estimate, lost_lines=lost_lines, reads=reads,
        )  # fmt: skip
        gap.ms = round((time.perf_counter() - gap_started) * 1000, 1)
        gaps.append(gap)
        fills.append(gap.context_fill())
        if progress is not None:
            progress(len(gaps), len(asked))
    whole = GapContexts(request.document.segments, window=None)
    last = len(fills) - 1
    prefix, suffix = whole.context(last, fills)
    middle = fills[last] if fills[last] is not None else UNKNOWN_GAP  # the last gap as later gaps read it
    ms = round((time.perf_counter() - started) * 1000, 1)
    pins = {i + 1: reading for i, reading in request.pins.items() if i not in asked}
    fingerprint = getattr(restorer, "fingerprint", None)
    return restoration_of(
        request.text, gaps, restorer.name, ms, prefix + middle + suffix, request.warnings,
        pins=pins, model_fingerprint=fingerprint, kind=kind, kind_read=kind_read, gaps_in_text=len(request.hints),
    )  # fmt: skip


def text_kind(restorer: Restorer, request: CheckedRequest) -> tuple[str | None, bool]:
    """The kind of text whose calibration the gaps take and whether it was read from the text:
    the request's, else read (:func:`~apollo_restore.restoration.text_kind.read_kind`, over the
    text index) where the restorer's calibration has parameters by kind of text; ``(None, False)``
    for a restorer without them (its probabilities do not depend on it)."""
    if not getattr(restorer, "text_kinds", False):
        return request.kind if hasattr(restorer, "for_text_kind") else None, False
    if request.kind is not None:
        return request.kind, False
    from_text = GapContexts(request.document.segments, window=None).context(0, [])
    return read_kind(" ".join(from_text), TextIndex.shared()), True


def model_window(restorer: Restorer) -> int:
    """Characters of context each side the restorer's model reads (its ``config.context_chars``);
    a restorer that declares none reads all it is given
    (:data:`~apollo_restore.restoration.context.DEFAULT_WINDOW`)."""
    chars = getattr(getattr(restorer, "config", None), "context_chars", None)
    return chars if isinstance(chars, int) and chars > 0 else DEFAULT_WINDOW
