"""Parallel passages on the text index (DESIGN §6, Retrieval).

    apollo-restore parallels "ετους [.5] αντωνινου καισαρος του κυριου"

    from apollo_restore.retrieve.index import ParallelIndex
    index = ParallelIndex.open()          # the default index, built from the packaged text on first use
    index.gap_parallels("… αυτοκρατορος καισαρος ", " σεβαστου …", hint=Hint.span(8, 12)).groups
    index.phrase_parallels("χαιρειν ομολογω")

Only the **train** split is indexed, so a validation or test document never finds itself. The
index itself (stream, suffix arrays, documents) is :class:`~apollo_restore.data.textindex.TextIndex`;
this module adds the searches. ``apollo-restore index --prepared DIR --out DIR`` still builds an
index from a prepared corpus (e.g. other sources), but none is needed: the packaged text is.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from apollo_restore.data.document import Segment
from apollo_restore.data.normalise import normalise
from apollo_restore.data.prepare import load_documents
from apollo_restore.data.readers.leiden import hint_of, parse_leiden_with_gaps
from apollo_restore.data.textindex import (
    INDEXED_SPLITS,
    S_DASH,
    S_ELLIPSIS,
    STREAM_DELETE,
    IndexReport,
    TextIndex,
    build_text_index,
    encode_text,
    stream_str,
    to_stream,
)  # fmt: skip
from apollo_restore.errors import Errors
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.context import context_of
from apollo_restore.retrieve.types import BetweenGroup, GapParallels, PhraseParallels, Snippet

log = logging.getLogger(__name__)

ANCHORS = (16, 12, 8, 6)  # anchor letters tried, longest first (backoff)
MIN_SIDE, MIN_TOTAL = 3, 10  # a shorter context still anchors if both sides hold this much
MAX_BETWEEN = 40  # letters between the anchors
_MAX_PAIRS = 200_000


def build_index(prepared: Path, out: Path, sources: list[str] | None = None) -> IndexReport:
    """Index the **train** split of a prepared corpus (never validation or test).

    Args:
        prepared: folder with ``documents.parquet`` (``apollo-restore prepare``).
        out: index folder to write (replaced).
        sources: corpora to include (default: all).

    Raises:
        FileNotFoundError, ValueError: from :func:`~apollo_restore.data.prepare.load_documents`.
    """
    table = load_documents(Path(prepared), split="train", sources=sources)
    splits = set(table.column("split").to_pylist())
    if not splits <= set(INDEXED_SPLITS):  # load_documents filtered; refuse anything else anyway
        raise ValueError(Errors.E401.format(splits=sorted(splits - set(INDEXED_SPLITS))))
    ids, srcs, texts = (table.column(c).to_pylist() for c in ("id", "source", "text"))
    return build_text_index(ids, srcs, texts, Path(out), origin=str(prepared))


# -- searching ---------------------------------------------------------------------------------


class ParallelIndex(TextIndex):
    """A :class:`~apollo_restore.data.textindex.TextIndex` with parallel-passage searches.

    ``ParallelIndex.open()`` opens the default index (built from the packaged text on first
    use); ``ParallelIndex.open(folder)`` an index folder written by :func:`build_index`.
    """

    def _between_span(self, a: int, b: int) -> tuple[int, int]:
        """Original offsets of the text between stream positions ``a - 1`` and ``b``, outer
        spaces and ``·`` left out."""
        start, end = self.orig_pos(a - 1) + 1, self.orig_pos(b)
        while start < end and self._orig_codes[start] in STREAM_DELETE:
            start += 1
        while end > start and self._orig_codes[end - 1] in STREAM_DELETE:
            end -= 1
        return start, end

    def _snippet(self, doc: int, start: int, end: int, context: int) -> Snippet:
        """Original text ``[start, end)`` of ``doc`` with ``context`` characters each side."""
        d_start, d_end = self.doc_span(doc)
        a, b = max(d_start, start - context), min(d_end, end + context)
        head, mid, tail = (self.orig_text(x, y) for x, y in ((a, start), (start, end), (end, b)))
        head = head.lstrip(" ")
        return Snippet(self.doc_ids[doc], head + mid + tail, len(head), len(head) + len(mid))

    # -- gap parallels --

    def _pairs(self, left: bytes, right: bytes, max_between: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ends, starts)``: each end of ``left`` followed by a start of ``right`` at most
        ``max_between`` codes later, sorted by position."""
        ends = self.occurrences(left) + len(left)
        starts = self.occurrences(right)
        if not len(ends) or not len(starts):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if len(ends) <= len(starts):
            ends.sort()
            lo = np.searchsorted(ends, starts - max_between, side="left")
            hi = np.searchsorted(ends, starts, side="right")
            n = hi - lo
            b = np.repeat(starts, n)
            a = ends[np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))]
        else:
            starts.sort()
            lo = np.searchsorted(starts, ends, side="left")
            hi = np.searchsorted(starts, ends + max_between, side="right")
            n = hi - lo
            a = np.repeat(ends, n)
            b = starts[np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))]
        order = np.argsort(a, kind="stable")
        return a[order][:_MAX_PAIRS], b[order][:_MAX_PAIRS]

    def gap_parallels(
        self,
        prefix: str,
        suffix: str,
        hint: Hint = NO_HINT,
        max_between: int = MAX_BETWEEN,
        anchors: tuple[int, ...] = ANCHORS,
        limit: int = 50,
        docs_per_group: int = 5,
        examples: int = 1,
        context: int = 30,
    ) -> GapParallels:
        """Readings that stand between the gap's contexts in training passages.

        Anchors are the last letters of ``prefix`` and the first of ``suffix`` (spaces and
        ``·`` ignored, stopping at a ``-``/``…`` marker); when no reading is found (after the
        hint filter) shorter anchors are tried, down to ``anchors[-1]`` letters. A context
        shorter than an anchor is used whole if it has at least :data:`MIN_SIDE` letters and
        both anchors together at least :data:`MIN_TOTAL`.

        Args:
            prefix, suffix: ``norm.v1`` context either side of the gap.
            hint: letters in the gap (readings outside its letter budget are left out).
            max_between: most letters between the anchors.
            anchors: anchor lengths tried, longest first.
            limit: most groups returned.
            docs_per_group: document ids kept per group.
            examples: snippets kept per group.
            context: characters of context in each snippet, either side.

        Returns:
            :class:`GapParallels`, groups most frequent first (readings with lost letters
            and empty readings left out).
        """
        left = to_stream(encode_text(prefix))
        right = to_stream(encode_text(suffix))
        left = left[max(left.rfind(bytes([S_DASH])), left.rfind(bytes([S_ELLIPSIS]))) + 1 :]
        cut = [i for i in (right.find(bytes([S_DASH])), right.find(bytes([S_ELLIPSIS]))) if i >= 0]
        right = right[: min(cut)] if cut else right
        tried: set[tuple[int, int]] = set()
        result = GapParallels("", "", 0, hint, [])
        for size in anchors:
            la, lb = min(size, len(left)), min(size, len(right))
            if min(la, lb) < MIN_SIDE or la + lb < MIN_TOTAL or (la, lb) in tried:
                continue
            tried.add((la, lb))
            a, b = self._pairs(left[-la:], right[:lb], max_between)
            result = GapParallels(stream_str(left[-la:]), stream_str(right[:lb]), max(la, lb), hint, [])
            if len(a):
                self._group(a, b, hint, result, limit, docs_per_group, examples, context)
                if result.groups:
                    break
        return result

    def _group(self, a: np.ndarray, b: np.ndarray, hint: Hint, result: GapParallels, limit: int,
               docs_per_group: int, examples: int, context: int) -> None:  # fmt: skip
        """Fill ``result.groups`` from pairs of (left anchor end, right anchor start)."""
        n = b - a
        width = max(1, int(n.max()))
        cols = np.arange(width)
        inside = cols[None, :] < n[:, None]  # (P, W)
        window = self.codes[np.minimum(a[:, None] + cols[None, :], len(self.codes) - 1)]  # (P, W)
        window = np.where(inside, window, 0)
        bad = (inside & ((window == 0) | (window >= S_DASH))).any(axis=1)
        lo, hi = hint.letters(max_letters=width)  # no hint: any count the pairs hold
        keep = ~bad & (n >= lo) & (n <= hi)
        if not keep.any():
            return
        a, b, window = a[keep], b[keep], np.ascontiguousarray(window[keep])
        rows = window.view(np.dtype((np.void, width))).ravel()
        _, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
        by_group = np.argsort(inverse.ravel(), kind="stable")  # members of each group, in position order
        offsets = np.concatenate([[0], np.cumsum(counts)])
        docs = self.doc_of(a)
        result.total = int(len(a))
        for g in sorted(range(len(counts)), key=lambda g: (-counts[g], first[g]))[:limit]:
            members = by_group[offsets[g] : offsets[g + 1]]
            group_docs = list(dict.fromkeys(docs[members].tolist()))
            start, end = self._between_span(int(a[members[0]]), int(b[members[0]]))
            between = self.orig_text(start, end)
            snippets = [
                self._snippet(int(docs[j]), *self._between_span(int(a[j]), int(b[j])), context)
                for j in members[:examples]
            ]
            result.groups.append(
                BetweenGroup(
                    between,
                    int(counts[g]),
                    len(group_docs),
                    [self.doc_ids[d] for d in group_docs[:docs_per_group]],
                    snippets,
                )
            )

    # -- phrase parallels --

    def phrase_parallels(self, phrase: str, limit: int = 20, context: int = 40) -> PhraseParallels:
        """Where a phrase stands in the index (spaces, ``·`` and ς/σ ignored).

        Args:
            phrase: any Greek text; normalised with ``norm.v1`` first.
            limit: documents with a snippet (the first occurrence in each, in corpus order).
            context: characters of context either side of each snippet.

        Raises:
            ValueError: the phrase has fewer than 3 letters.
        """
        text = normalise(phrase)
        pattern = to_stream(encode_text(text))
        if len(pattern) < 3:
            raise ValueError(f"phrase {phrase!r} has fewer than 3 letters; parallels need at least 3")
        found = np.sort(self.occurrences(pattern))
        docs = self.doc_of(found)
        unique_docs, first = np.unique(docs, return_index=True)
        by_source: dict[str, int] = {}
        for d, c in zip(*np.unique(docs, return_counts=True)):
            by_source[self.doc_sources[d]] = by_source.get(self.doc_sources[d], 0) + int(c)
        hits = []
        for i in sorted(first.tolist())[:limit]:
            p = int(found[i])
            start, end = self.orig_pos(p), self.orig_pos(p + len(pattern) - 1) + 1
            hits.append(self._snippet(int(docs[i]), start, end, context))
        return PhraseParallels(text, int(len(found)), int(len(unique_docs)), by_source, hits)


def gap_contexts(segments: list[Segment], index: int) -> tuple[str, str]:
    """Normalised text either side of the ``index``-th lacuna, the other lacunae rendered as
    gap markers (``-``/``…``), so that no anchor reaches across them."""
    return context_of(segments, index, {}, later_unknown=False)


def leiden_gap_parallels(index: ParallelIndex, text: str, **options: Any) -> list[GapParallels]:
    """:meth:`ParallelIndex.gap_parallels` for every gap of a Leiden text, with its hint.

    Raises:
        LeidenError: the text is not well-formed Leiden.
    """
    doc, markers = parse_leiden_with_gaps(text)
    results = []
    for i, marker in enumerate(markers):
        prefix, suffix = gap_contexts(doc.segments, i)
        results.append(index.gap_parallels(prefix, suffix, hint=hint_of(marker.lacuna), **options))
    return results
