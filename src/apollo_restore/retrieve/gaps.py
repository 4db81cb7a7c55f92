"""The parallels of a text's gaps: one result per gap, the one every interface shows.

    request = validate(RestoreRequest("Κόμων Μουσαίου [.4] χαίρειν", hints={1: 4}))
    for gap in text_parallels(ParallelIndex.shared(), request):
        print(gap.gap, [(g.display, g.count, g.urls) for g in gap.groups])

The CLI (``apollo-restore parallels``, its ``--json``), the web API (``POST /api/parallels``)
and so the page and the quickstart all call :func:`text_parallels` on a validated
:class:`~apollo_restore.restoration.request.CheckedRequest`: the same contexts (earlier gaps filled
by the request's pins, later ones as gap markers, so that no anchor reaches across them), the
same hints (the text's, or the request's overrides), the same edition forms and links.
"""

from __future__ import annotations

from collections.abc import Iterable

from apollo_restore.restoration.context import context_of
from apollo_restore.restoration.request import CheckedRequest
from apollo_restore.retrieve.parallels import MAX_BETWEEN, ParallelIndex
from apollo_restore.retrieve.types import GapParallels


def text_parallels(
    index: ParallelIndex,
    request: CheckedRequest,
    gaps: Iterable[int] | None = None,
    limit: int = 10,
    max_between: int = MAX_BETWEEN,
) -> list[GapParallels]:
    """:meth:`ParallelIndex.gap_parallels` for gaps of a validated request.

    Args:
        index: the text index.
        request: a request checked (:func:`~apollo_restore.restoration.request.validate`: its
            document, hints, pins).
        gaps: gap numbers, counted from 1 (default: every gap), each checked by the request's
            rules already (an API caller names one; see the web route).
        limit: readings kept per gap (most frequent first).
        max_between: most letters between the two contexts in a parallel.

    Returns:
        One :class:`GapParallels` per gap asked for, in that order, ``gap`` set.
    """
    segments = request.document.segments
    numbers = list(gaps) if gaps is not None else [i + 1 for i in range(len(request.hints))]
    results = []
    for number in numbers:
        prefix, suffix = context_of(segments, number - 1, request.pins, later_unknown=False)
        found = index.gap_parallels(prefix, suffix, request.hints[number - 1], max_between=max_between, limit=limit)
        found.gap = number
        results.append(found)
    return results
