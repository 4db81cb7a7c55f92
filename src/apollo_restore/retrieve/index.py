"""Parallel passages: a suffix-array index over the training split (DESIGN §6, Retrieval).

    apollo-restore index --prepared data/prepared --out data/index
    apollo-restore parallels "ετους [.5] αντωνινου καισαρος του κυριου"

    from apollo_restore.retrieve.index import ParallelIndex
    index = ParallelIndex.open("data/index")
    index.gap_parallels("… αυτοκρατορος καισαρος ", " σεβαστου …", hint=(8, 12)).groups
    index.phrase_parallels("χαιρειν ομολογω")

Only the **train** split is indexed, so a validation or test document never finds itself.
The engine was picked by measurement against SQLite FTS5 trigram (``benchmarks/retrieval.py``).

Layout of an index folder (format ``apollo_restore retrieve.sa.v1``):

* ``stream.npy`` (uint8, n): every document's letters only — spaces and ``·`` dropped, ς
  folded to σ, ``-`` and ``…`` kept as markers — documents separated by 0. Matching on it is
  space- and punctuation-agnostic, like :func:`~apollo_restore.restore.engine.match_key`.
* ``sa.npy`` (int32, n): stream positions sorted by the :data:`DEPTH` codes that follow them
  (prefix doubling in NumPy; ties beyond that depth in arbitrary order, so longer patterns
  are verified after the binary search).
* ``orig.npy`` (uint8) and ``checkpoints.npy`` (int64): the ``norm.v1`` text itself, for
  snippets and readings with their spaces, and the original offset of every 64th stream
  position.
* ``documents.parquet`` (id, source, split, stream and original start) and ``meta.json``
  (format, normaliser, splits, counts, build time).
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from apollo_restore.data.document import Segment
from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT, NORMALISER, normalise
from apollo_restore.data.prepare import load_documents
from apollo_restore.data.readers.leiden import hint_of, parse_leiden_with_gaps
from apollo_restore.fim.examples import Hint
from apollo_restore.retrieve.types import BetweenGroup, GapParallels, PhraseParallels, Snippet

log = logging.getLogger(__name__)

DEFAULT_INDEX = Path(__file__).resolve().parent.parent / "models" / "index"
INDEX_ENV = "APOLLO_RESTORE_INDEX"

FORMAT = "apollo_restore retrieve.sa.v1"
INDEXED_SPLITS = ("train",)
DEPTH = 48  # codes each suffix is sorted by; 4 doubling rounds from 12 packed codes
ANCHORS = (16, 12, 8, 6)  # anchor letters tried, longest first (backoff)
MIN_SIDE, MIN_TOTAL = 3, 10  # a shorter context still anchors if both sides hold this much
MAX_BETWEEN = 40  # letters between the anchors
_STEP = 64  # stream positions per checkpoint
_MAX_PAIRS = 200_000

# original text codes: 0 separator, 1..28 letters, then space, ·, -, …
_SPACE, _DOT, _DASH, _ELLIPSIS = 29, 30, 31, 32
_ORIG_CHARS = "\0" + GREEK_LETTERS + " " + MIDDLE_DOT + "-…"


class _EncodeTable(dict):
    """``str.translate`` table: alphabet characters → codes, anything else dropped."""

    def __missing__(self, codepoint: int) -> None:
        return None


_ENCODE_TABLE = _EncodeTable({ord(ch): chr(i) for i, ch in enumerate(_ORIG_CHARS) if i})
_DECODE_TABLE = {i: ch for i, ch in enumerate(_ORIG_CHARS)}
# stream codes: letters as in the original but ς → σ, markers - → 29 and … → 30
_SIGMA, _FINAL = GREEK_LETTERS.index("σ") + 1, GREEK_LETTERS.index("ς") + 1
_S_DASH, _S_ELLIPSIS = 29, 30
_STREAM_TABLE = bytes(
    _SIGMA if c == _FINAL else _S_DASH if c == _DASH else _S_ELLIPSIS if c == _ELLIPSIS else c for c in range(256)
)
_STREAM_DELETE = bytes([_SPACE, _DOT])
_STREAM_CHARS = {i: ch for i, ch in enumerate(_ORIG_CHARS[:29])} | {_S_DASH: "-", _S_ELLIPSIS: "…"}


def encode_text(text: str) -> bytes:
    """``norm.v1`` text → original codes (characters outside the alphabet dropped)."""
    return text.translate(_ENCODE_TABLE).encode("latin-1")


def to_stream(codes: bytes) -> bytes:
    """Original codes → stream codes: letters only, σ-folded, markers kept."""
    return codes.translate(_STREAM_TABLE, _STREAM_DELETE)


def _decode(codes: bytes) -> str:
    return codes.decode("latin-1").translate(_DECODE_TABLE)


def _stream_str(codes: bytes) -> str:
    return "".join(_STREAM_CHARS[c] for c in codes)


@dataclass
class IndexReport:
    """What :func:`build_index` wrote."""

    path: str
    documents: int
    letters: int
    seconds: float
    megabytes: float
    sources: dict[str, int]


# -- building ----------------------------------------------------------------------------------


def suffix_array(codes: np.ndarray, depth: int = DEPTH) -> np.ndarray:
    """Positions of ``codes`` (uint8, values < 32) sorted by their next ``depth`` codes.

    Prefix doubling: pack 12 codes of 5 bits into a uint64, sort, then combine the ranks of
    ``i`` and ``i + h`` until ``h`` reaches ``depth``. Peak memory ≈ 40 bytes per position.

    Returns:
        int32 array of shape ``(n,)``.
    """
    n = len(codes)
    padded = np.zeros(n + 12, dtype=np.uint64)
    padded[:n] = codes
    key = np.zeros(n, dtype=np.uint64)
    for j in range(12):
        key <<= np.uint64(5)
        key |= padded[j : j + n]
    del padded
    h = 12
    while True:
        order = np.argsort(key, kind="quicksort")  # (n,) int64
        sorted_key = key[order]
        del key
        fresh = np.empty(n, dtype=bool)
        fresh[:1] = True
        np.not_equal(sorted_key[1:], sorted_key[:-1], out=fresh[1:])
        del sorted_key
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.cumsum(fresh, dtype=np.int64)  # 1-based, 0 = past the end
        unique = bool(fresh.all())
        del fresh
        if h >= depth or unique:
            return order.astype(np.int32)
        del order
        key = rank << np.int64(32)
        key[: n - h] |= rank[h:]
        del rank
        h *= 2


def build_index(prepared: Path, out: Path, sources: list[str] | None = None) -> IndexReport:
    """Index the **train** split of a prepared corpus (never validation or test).

    Args:
        prepared: folder with ``documents.parquet`` (``apollo-restore prepare``).
        out: index folder to write (created; files replaced).
        sources: corpora to include (default: all).

    Raises:
        FileNotFoundError, ValueError: from :func:`~apollo_restore.data.prepare.load_documents`.
    """
    started = time.perf_counter()
    table = load_documents(Path(prepared), split="train", sources=sources)
    splits = set(table.column("split").to_pylist())
    if not splits <= set(INDEXED_SPLITS):  # load_documents filtered; refuse anything else anyway
        raise ValueError(f"refusing to index splits {sorted(splits - set(INDEXED_SPLITS))}")
    ids, srcs, texts = (table.column(c).to_pylist() for c in ("id", "source", "text"))
    orig = b"\0" + b"\0".join(encode_text(t) for t in texts) + b"\0"
    stream = to_stream(orig)
    orig_arr, stream_arr = np.frombuffer(orig, np.uint8), np.frombuffer(stream, np.uint8)
    orig_starts = np.flatnonzero(orig_arr == 0)[:-1] + 1
    stream_starts = np.flatnonzero(stream_arr == 0)[:-1] + 1
    kept = np.flatnonzero((orig_arr != _SPACE) & (orig_arr != _DOT))
    assert len(kept) == len(stream) and len(orig_starts) == len(ids)
    checkpoints = kept[::_STEP].astype(np.int64)
    del kept
    log.info("indexing %d documents, %d stream codes", len(ids), len(stream))
    sa = suffix_array(stream_arr)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, arr in (("stream", stream_arr), ("orig", orig_arr), ("checkpoints", checkpoints), ("sa", sa)):
        np.save(out / f"{name}.npy", arr)
    docs = pa.table(
        {"id": ids, "source": srcs, "split": ["train"] * len(ids),
         "stream_start": stream_starts.astype(np.int64), "orig_start": orig_starts.astype(np.int64)}
    )  # fmt: skip
    pq.write_table(docs, out / "documents.parquet", compression="zstd")
    by_source: dict[str, int] = {}
    for s in srcs:
        by_source[s] = by_source.get(s, 0) + 1
    seconds = round(time.perf_counter() - started, 1)
    megabytes = round(sum(f.stat().st_size for f in out.iterdir() if f.is_file()) / 2**20, 1)
    meta = {
        "format": FORMAT, "normaliser": NORMALISER, "splits": list(INDEXED_SPLITS), "sources": by_source,
        "documents": len(ids), "stream_codes": len(stream), "depth": DEPTH, "prepared": str(prepared),
        "built": time.strftime("%Y-%m-%dT%H:%M:%S"), "build_seconds": seconds,
    }  # fmt: skip
    (out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
    letters = int(np.count_nonzero((stream_arr > 0) & (stream_arr < _S_DASH)))
    return IndexReport(str(out), len(ids), letters, seconds, megabytes, by_source)


# -- searching ---------------------------------------------------------------------------------


def _hint_ok(n: np.ndarray, hint: Hint) -> np.ndarray:
    if hint is None:
        return n >= 1
    lo, hi = hint if isinstance(hint, tuple) else (hint, hint)
    return (n >= max(1, lo)) & (n <= hi)


class ParallelIndex:
    """An opened index folder; arrays are memory-mapped, the two texts held as bytes.

    Raises (from :meth:`open`):
        FileNotFoundError: no index there.
        ValueError: another format or normaliser.
    """

    def __init__(self, path: Path, meta: dict[str, Any], docs: pa.Table) -> None:
        self.path, self.meta = path, meta
        self.doc_ids: list[str] = docs.column("id").to_pylist()
        self.doc_sources: list[str] = docs.column("source").to_pylist()
        self.splits: list[str] = docs.column("split").to_pylist()
        self._stream_starts = docs.column("stream_start").to_numpy()
        self._orig_starts = docs.column("orig_start").to_numpy()
        self._stream = np.load(path / "stream.npy").tobytes()
        self._orig = np.load(path / "orig.npy").tobytes()
        self._codes = np.frombuffer(self._stream, np.uint8)
        self._orig_codes = np.frombuffer(self._orig, np.uint8)
        self._checkpoints = np.load(path / "checkpoints.npy", mmap_mode="r")
        self._sa = np.load(path / "sa.npy", mmap_mode="r")
        self.depth = int(meta["depth"])

    @classmethod
    def open(cls, path: str | Path) -> "ParallelIndex":
        """Open an index folder written by :func:`build_index`."""
        path = Path(path)
        if not (path / "meta.json").exists():
            raise FileNotFoundError(f"no index in {path}: run `apollo-restore index --prepared DIR --out {path}`")
        meta = json.loads((path / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path} holds index format {meta.get('format')!r}, this code reads {FORMAT!r}")
        if meta.get("normaliser") != NORMALISER:
            raise ValueError(f"{path} was built with normaliser {meta.get('normaliser')!r}, this code uses {NORMALISER!r}")
        return cls(path, meta, pq.read_table(path / "documents.parquet"))

    # -- low level --

    def occurrences(self, pattern: bytes) -> np.ndarray:
        """Stream positions where ``pattern`` (stream codes) starts, in suffix-array order."""
        head = pattern[: self.depth]
        text, sa, m = self._stream, self._sa, len(head)

        def key(i: int) -> bytes:
            p = int(sa[i])
            return text[p : p + m]

        lo = bisect.bisect_left(range(len(sa)), head, key=key)
        hi = bisect.bisect_right(range(lo, len(sa)), head, key=key) + lo
        found = np.asarray(sa[lo:hi], dtype=np.int64)
        if len(pattern) > m:
            found = np.array([p for p in found if text[p : p + len(pattern)] == pattern], dtype=np.int64)
        return found

    def count(self, pattern: bytes) -> int:
        """Occurrences of ``pattern`` (stream codes)."""
        return len(self.occurrences(pattern))

    def _doc_of(self, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._stream_starts, positions, side="right") - 1

    def _orig_pos(self, p: int) -> int:
        """Offset in the original text of stream position ``p``."""
        k, r = divmod(p, _STEP)
        o = int(self._checkpoints[k])
        if r == 0:
            return o
        width = 4 * _STEP
        while True:
            chunk = self._orig_codes[o : o + width]
            kept = np.flatnonzero((chunk != _SPACE) & (chunk != _DOT))
            if len(kept) > r or o + width >= len(self._orig_codes):
                return o + int(kept[r])
            width *= 2

    def _between_span(self, a: int, b: int) -> tuple[int, int]:
        """Original offsets of the text between stream positions ``a - 1`` and ``b``, outer
        spaces and ``·`` left out."""
        start, end = self._orig_pos(a - 1) + 1, self._orig_pos(b)
        while start < end and self._orig[start] in _STREAM_DELETE:
            start += 1
        while end > start and self._orig[end - 1] in _STREAM_DELETE:
            end -= 1
        return start, end

    def _snippet(self, doc: int, start: int, end: int, context: int) -> Snippet:
        """Original text ``[start, end)`` of ``doc`` with ``context`` characters each side."""
        d_start = int(self._orig_starts[doc])
        d_end = int(self._orig_starts[doc + 1]) - 1 if doc + 1 < len(self._orig_starts) else len(self._orig) - 1
        a, b = max(d_start, start - context), min(d_end, end + context)
        head, mid, tail = (_decode(self._orig[x:y]) for x, y in ((a, start), (start, end), (end, b)))
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
        hint: Hint = None,
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
            hint: letters in the gap: exact ``int``, range ``(lo, hi)`` or ``None``.
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
        left = left[max(left.rfind(bytes([_S_DASH])), left.rfind(bytes([_S_ELLIPSIS]))) + 1 :]
        cut = [i for i in (right.find(bytes([_S_DASH])), right.find(bytes([_S_ELLIPSIS]))) if i >= 0]
        right = right[: min(cut)] if cut else right
        tried: set[tuple[int, int]] = set()
        result = GapParallels("", "", 0, hint, [])
        for size in anchors:
            la, lb = min(size, len(left)), min(size, len(right))
            if min(la, lb) < MIN_SIDE or la + lb < MIN_TOTAL or (la, lb) in tried:
                continue
            tried.add((la, lb))
            a, b = self._pairs(left[-la:], right[:lb], max_between)
            result = GapParallels(_stream_str(left[-la:]), _stream_str(right[:lb]), max(la, lb), hint, [])
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
        window = self._codes[np.minimum(a[:, None] + cols[None, :], len(self._codes) - 1)]  # (P, W)
        window = np.where(inside, window, 0)
        bad = (inside & ((window == 0) | (window >= _S_DASH))).any(axis=1)
        keep = ~bad & _hint_ok(n, hint)
        if not keep.any():
            return
        a, b, window = a[keep], b[keep], np.ascontiguousarray(window[keep])
        rows = window.view(np.dtype((np.void, width))).ravel()
        _, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
        by_group = np.argsort(inverse.ravel(), kind="stable")  # members of each group, in position order
        offsets = np.concatenate([[0], np.cumsum(counts)])
        docs = self._doc_of(a)
        result.total = int(len(a))
        for g in sorted(range(len(counts)), key=lambda g: (-counts[g], first[g]))[:limit]:
            members = by_group[offsets[g] : offsets[g + 1]]
            group_docs = list(dict.fromkeys(docs[members].tolist()))
            start, end = self._between_span(int(a[members[0]]), int(b[members[0]]))
            between = _decode(self._orig[start:end])
            snippets = [self._snippet(int(docs[j]), *self._between_span(int(a[j]), int(b[j])), context) for j in members[:examples]]
            result.groups.append(
                BetweenGroup(between, int(counts[g]), len(group_docs), [self.doc_ids[d] for d in group_docs[:docs_per_group]], snippets)
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
        docs = self._doc_of(found)
        unique_docs, first = np.unique(docs, return_index=True)
        by_source: dict[str, int] = {}
        for d, c in zip(*np.unique(docs, return_counts=True)):
            by_source[self.doc_sources[d]] = by_source.get(self.doc_sources[d], 0) + int(c)
        hits = []
        for i in sorted(first.tolist())[:limit]:
            p = int(found[i])
            start, end = self._orig_pos(p), self._orig_pos(p + len(pattern) - 1) + 1
            hits.append(self._snippet(int(docs[i]), start, end, context))
        return PhraseParallels(text, int(len(found)), int(len(unique_docs)), by_source, hits)


def report_dict(report: IndexReport) -> dict[str, Any]:
    """Plain dict of an :class:`IndexReport`."""
    return asdict(report)


def default_index_path() -> Path:
    """``$APOLLO_RESTORE_INDEX`` if set, else the index folder inside the package."""
    return Path(os.environ.get(INDEX_ENV) or DEFAULT_INDEX)


def gap_contexts(segments: list[Segment], index: int) -> tuple[str, str]:
    """Normalised text either side of the ``index``-th lacuna, the other lacunae rendered as
    gap markers (``-``/``…``), so that no anchor reaches across them."""
    from apollo_restore.restore.common import context_of

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
