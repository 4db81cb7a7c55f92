"""Parallel passages on the text index (docs/design.md, *The text index*).

    apollo-restore parallels "ετους [.5] αντωνινου καισαρος του κυριου"

    from apollo_restore.retrieve.parallels import ParallelIndex
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

import numpy as np

from apollo_restore.data.normalise import normalise
from apollo_restore.data.orthography import default_forms
from apollo_restore.data.prepare import load_documents
from apollo_restore.data.textchecks import check_no_machine_reading
from apollo_restore.data.textindex import (
    DOT,
    INDEXED_SPLITS,
    S_DASH,
    S_ELLIPSIS,
    SPACE,
    STREAM_DELETE,
    IndexReport,
    TextIndex,
    build_text_index,
    encode_text,
    expand_ranges,
    stream_str,
    to_stream,
)  # fmt: skip
from apollo_restore.errors import Errors
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.retrieve.links import edition_label, edition_url
from apollo_restore.retrieve.noise import is_noise
from apollo_restore.retrieve.types import BetweenGroup, GapParallels, PhraseParallels, Snippet

log = logging.getLogger(__name__)

ANCHORS = (16, 12, 8, 6)  # anchor letters tried, longest first (backoff)
MIN_SIDE, MIN_TOTAL = 3, 10  # a shorter context still anchors if both sides hold this much
MAX_BETWEEN = 40  # letters between the anchors
MIN_ONE_SIDED = 8  # shortest anchor searched alone
_MAX_PAIRS = 200_000
_MAX_ONE_SIDED = 20_000  # anchor occurrences read by a one-sided search
_WORD_EDGES = ("", " ", "\n", "·")  # what stands at a word's edge in norm.v1 context
_WORD_SEPARATORS = (0, SPACE, DOT)  # the same in the index's original codes (0: a document's edge)


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
        doc_id = self.doc_ids[doc]
        url = edition_url(doc_id, self.doc_sources[doc])
        return Snippet(doc_id, head + mid + tail, len(head), len(head) + len(mid), url)

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
            owner, at = expand_ranges(lo, hi - lo)
            a, b = ends[at], starts[owner]
        else:
            starts.sort()
            lo = np.searchsorted(starts, ends, side="left")
            hi = np.searchsorted(starts, ends + max_between, side="right")
            owner, at = expand_ranges(lo, hi - lo)
            a, b = ends[owner], starts[at]
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
        """Readings that stand between the gap's contexts in training passages, each in edition
        form with links to its documents' editions.

        Anchors are the last letters of ``prefix`` and the first of ``suffix`` (spaces and
        ``·`` ignored, stopping at a ``-``/``…`` marker); when no reading is found (after the
        hint filter) shorter anchors are tried, down to ``anchors[-1]`` letters. A context
        shorter than an anchor is used whole if it has at least :data:`MIN_SIDE` letters and
        both anchors together at least :data:`MIN_TOTAL`. When no two-sided parallel is found
        (a gap at the start or end of the text, a misspelt context) and the hint gives the
        gap's letters, one side alone anchors (see :meth:`_one_sided`); the other anchor is
        then ``""``.

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
            :class:`GapParallels`, groups most frequent first (readings with lost letters,
            empty readings and noise — mostly numerals: :mod:`~apollo_restore.retrieve.noise` — left out).
        """
        result = self._search(prefix, suffix, hint, max_between, anchors, (limit, docs_per_group, examples, context))
        result.prefix, result.suffix = prefix, suffix
        forms = default_forms()  # the package's table (None where it is not shipped)
        for group in result.groups:
            group.display = forms.display(group.between, prefix, suffix) if forms else group.between
        return result

    def _search(
        self, prefix: str, suffix: str, hint: Hint, max_between: int, anchors: tuple[int, ...], shown: tuple[int, ...]
    ) -> GapParallels:
        """:meth:`gap_parallels` before display: two-sided anchors, then one-sided ones."""
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
                self._group(a, b, hint, result, *shown)
                if result.groups:
                    return result
        if hint.lo is None:
            return result
        for size in (n for n in anchors if n >= MIN_ONE_SIDED):
            for is_left, anchor in ((True, left[-size:]), (False, right[:size])):
                if len(anchor) < size:
                    continue
                open_side = suffix[:1] if is_left else prefix[-1:]  # the gap's side without an anchor
                a, b = self._one_sided(anchor, is_left, hint, open_side in _WORD_EDGES, max_between)
                anchors_used = (stream_str(anchor), "") if is_left else ("", stream_str(anchor))
                found = GapParallels(*anchors_used, size, hint, [])
                if len(a):
                    self._group(a, b, hint, found, *shown)
                    if found.groups:
                        return found
        return result

    def _one_sided(
        self, anchor: bytes, is_left: bool, hint: Hint, word_edge: bool, max_between: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ends)`` stream spans of the readings next to one anchor: the ``n`` letters
        after a left anchor (before a right one) for each ``n`` the hint allows; where the gap's
        open side is a word edge (``word_edge``), only spans whose open side is one too, so that
        readings are whole words; elsewhere only an exact hint is searched (a range inside a word
        has no edge to cut at), and never more than ``max_between`` letters. At most
        :data:`_MAX_ONE_SIDED` occurrences (corpus order)."""
        lo, hi = hint.letters(max_letters=max_between)
        hi = min(hi, max_between)
        if lo > hi or (not word_edge and lo != hi):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        found = np.sort(self.occurrences(anchor))[:_MAX_ONE_SIDED]
        at = found + len(anchor) if is_left else found
        spans = [(at, at + n) if is_left else (at - n, at) for n in range(lo, hi + 1)]
        a = np.concatenate([s for s, _ in spans])
        b = np.concatenate([e for _, e in spans])
        inside = (a >= 1) & (b < len(self.codes))
        a, b = a[inside], b[inside]
        if word_edge:
            edge = [self._ends_word(int(p)) for p in b] if is_left else [self._starts_word(int(p)) for p in a]
            keep = np.array(edge, bool)
            a, b = a[keep], b[keep]
        return a, b

    def _starts_word(self, p: int) -> bool:
        """Whether the letter at stream position ``p`` begins a word: a space, ``·`` or the
        document's start before it (not a lost letter: that word's start is unknown)."""
        return int(self._orig_codes[self.orig_pos(p) - 1]) in _WORD_SEPARATORS

    def _ends_word(self, p: int) -> bool:
        """Whether the letter at stream position ``p - 1`` ends a word (a space, ``·`` or the
        document's end after it)."""
        return int(self._orig_codes[self.orig_pos(p - 1) + 1]) in _WORD_SEPARATORS

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
        forms = default_forms()
        for g in sorted(range(len(counts)), key=lambda g: (-counts[g], first[g])):
            if len(result.groups) >= limit:
                break
            members = by_group[offsets[g] : offsets[g + 1]]
            start, end = self._between_span(int(a[members[0]]), int(b[members[0]]))
            between = self.orig_text(start, end)
            if is_noise(between, forms):  # numerals and stray letters of accounts, not text
                continue
            group_docs = list(dict.fromkeys(docs[members].tolist()))
            snippets = [
                self._snippet(int(docs[j]), *self._between_span(int(a[j]), int(b[j])), context)
                for j in members[:examples]
            ]
            kept = group_docs[:docs_per_group]
            urls = [edition_url(self.doc_ids[d], self.doc_sources[d]) for d in kept]
            labels = [edition_label(self.doc_ids[d], self.doc_sources[d]) for d in kept]
            docs_kept = [self.doc_ids[d] for d in kept]
            group = BetweenGroup(
                between, int(counts[g]), len(group_docs), docs_kept, snippets, urls=urls, labels=labels
            )
            result.groups.append(group)

    # -- phrase parallels --

    def phrase_parallels(self, phrase: str, limit: int = 20, context: int = 40) -> PhraseParallels:
        """Where a phrase stands in the index (spaces, ``·`` and ς/σ ignored).

        Args:
            phrase: any Greek text; normalised with ``norm.v1`` first.
            limit: documents with a snippet (the first occurrence in each, in corpus order).
            context: characters of context either side of each snippet.

        Raises:
            ValueError: the phrase has fewer than 3 letters; a :class:`~apollo_restore.errors.RequestError`
                (``E312``) when it holds a machine reading ``⁅…⁆``.
        """
        check_no_machine_reading(phrase)
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
