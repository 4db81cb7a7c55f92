"""One suffix-array text index over the normalised training text (docs/design.md, *The text index*).

    from apollo_restore.data.textindex import open_default
    index = open_default()                 # first use: built from the packaged text in seconds
    index.count(index.pattern("καισαρος"))  # occurrences, space-agnostic
    index.doc_ids[index.doc_of(index.occurrences(index.pattern("καισαρος")))[0]]

The package ships the **train** split of every source, normalised (``norm.v1``) and compressed
(``models/corpus/train-text.tsv.xz``, one ``id<TAB>source<TAB>text`` line per document; written by
:func:`pack_train_text`). On first use the index is built from it with a C suffix sorter
(``pydivsufsort``) into the user's cache directory (``$APOLLO_RESTORE_CACHE`` overrides), never
into the source tree, and memory-mapped from there afterwards.

Layout of an index folder (format ``apollo_restore textindex.sa.v2``):

* ``stream.npy`` (uint8, n): every document's letters only — spaces and ``·`` dropped, ς folded
  to σ, ``-`` and ``…`` kept as markers — documents separated by 0 (also first and last).
  Matching on it is space- and punctuation-agnostic, like the evaluation's match.
* ``sa.npy`` (int32, n): the suffix array of the stream; ``sa-reversed.npy`` (int32, n): that of
  the reversed stream (right-to-left counts: position ``q`` there is ``n - 1 - q`` here).
* ``orig.npy`` (uint8) and ``checkpoints.npy`` (int64): the ``norm.v1`` text itself as codes, for
  snippets and readings with their spaces, and the original offset of every 64th stream position.
* ``documents.parquet`` (id, source, split, stream and original start) and ``meta.json``, which
  records every other file's size and xxh3 checksum (:mod:`apollo_restore.data.indexcache`).

Opening verifies every file first (0.06 s of CPU for the packaged text's index, once per process):
a damaged default index in the cache is built again with a warning (``W401``), a damaged index
folder the user named is ``E408`` naming the file. Builds into the cache take a lock (one builder;
others wait, then read its index), write into a hidden folder and move it into place, and remove
what a killed build left.
"""

from __future__ import annotations

import bisect
import functools
import json
import logging
import lzma
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from apollo_restore.data.indexcache import (
    build_lock,
    cache_dir,
    cache_error,
    check_space,
    clean_leftovers,
    file_records,
    verify_files,
)
from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT, NORMALISER, normalise_with_gaps
from apollo_restore.data.outputs import write_atomic
from apollo_restore.errors import Errors, TextIndexError
from apollo_restore.inputs import digest, file_digest

log = logging.getLogger(__name__)

FORMAT = "apollo_restore textindex.sa.v2"
PACKED_FORMAT = "apollo_restore train-text.v1"
INDEXED_SPLITS = ("train",)
PACKED_TEXT = Path(__file__).resolve().parent.parent / "models" / "corpus" / "train-text.tsv.xz"
INDEX_ENV = "APOLLO_RESTORE_INDEX"
STEP = 64  # stream positions per checkpoint

# original text codes: 0 separator, 1..28 letters, then space, ·, -, …
SPACE, DOT, DASH, ELLIPSIS = 29, 30, 31, 32
_ORIG_CHARS = "\0" + GREEK_LETTERS + " " + MIDDLE_DOT + "-…"


class _EncodeTable(dict):
    """``str.translate`` table: alphabet characters → codes, anything else dropped."""

    def __missing__(self, codepoint: int) -> None:
        return None


_ENCODE_TABLE = _EncodeTable({ord(ch): chr(i) for i, ch in enumerate(_ORIG_CHARS) if i})
_DECODE_TABLE = {i: ch for i, ch in enumerate(_ORIG_CHARS)}
# stream codes: letters as in the original but ς → σ, markers - → 29 and … → 30
SIGMA, _FINAL = GREEK_LETTERS.index("σ") + 1, GREEK_LETTERS.index("ς") + 1
S_DASH, S_ELLIPSIS = 29, 30
_STREAM_TABLE = bytes(
    SIGMA if c == _FINAL else S_DASH if c == DASH else S_ELLIPSIS if c == ELLIPSIS else c for c in range(256)
)
STREAM_DELETE = bytes([SPACE, DOT])
_STREAM_CHARS = {i: ch for i, ch in enumerate(_ORIG_CHARS[:29])} | {S_DASH: "-", S_ELLIPSIS: "…"}


def encode_text(text: str) -> bytes:
    """``norm.v1`` text → original codes (characters outside the alphabet dropped)."""
    return text.translate(_ENCODE_TABLE).encode("latin-1")


def to_stream(codes: bytes) -> bytes:
    """Original codes → stream codes: letters only, σ-folded, markers kept."""
    return codes.translate(_STREAM_TABLE, STREAM_DELETE)


def decode(codes: bytes) -> str:
    """Original codes → text."""
    return codes.decode("latin-1").translate(_DECODE_TABLE)


def stream_str(codes: bytes) -> str:
    """Stream codes → text (letters σ-folded, no spaces)."""
    return "".join(_STREAM_CHARS[c] for c in codes)


def suffix_array(codes: np.ndarray) -> np.ndarray:
    """The suffix array of ``codes`` (uint8), by ``pydivsufsort`` (libdivsufsort, C).

    Returns:
        int32 array of shape ``(n,)``: positions sorted by the suffixes that start there.
    """
    from pydivsufsort import divsufsort

    return divsufsort(np.array(codes, dtype=np.uint8)).astype(
        np.int32, copy=False
    )  # a writable copy: the C side needs one


# -- the packaged text ---------------------------------------------------------------------------


def pack_train_text(ids: list[str], sources: list[str], texts: list[str], splits: list[str], out: Path) -> int:
    """Write the training documents as one xz file of ``id<TAB>source<TAB>text`` lines.

    Args:
        ids, sources, texts, splits: one entry per document (``norm.v1`` text).
        out: file to write (atomically).

    Returns:
        bytes written.

    Raises:
        ValueError: a document is not from the train split (E401), a text not in the normal form
            (E412, :func:`check_normal_form`), or an id holds a tab.
    """
    held_out = sorted({s for s in splits if s not in INDEXED_SPLITS})
    if held_out:
        raise ValueError(Errors.E401.format(splits=held_out))
    for doc_id, text in zip(ids, texts):
        check_normal_form(doc_id, text)
    lines = [f"# {PACKED_FORMAT} {NORMALISER}\n"]
    for doc_id, source, text in zip(ids, sources, texts):
        if "\t" in doc_id or "\n" in doc_id:
            raise ValueError(f"document id {doc_id!r} holds a tab or newline")
        lines.append(f"{doc_id}\t{source}\t{text.replace(chr(10), ' ')}\n")
    data = lzma.compress("".join(lines).encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)
    write_atomic(Path(out), data)
    return len(data)


def check_normal_form(doc_id: str, text: str) -> None:
    """Refuse a document whose ``text`` is not a fixed point of
    :func:`~apollo_restore.data.normalise.normalise_with_gaps` (the one normal form the model, the
    index and every door's contexts share).

    Raises:
        ValueError: ``E412``, naming the document and the first character that differs.
    """
    expected = normalise_with_gaps(text)
    if expected != text:
        at = next((i for i, (a, b) in enumerate(zip(text, expected)) if a != b), min(len(text), len(expected)))
        found, wanted = text[max(0, at - 10) : at + 10], expected[max(0, at - 10) : at + 10]
        raise ValueError(Errors.E412.format(doc=doc_id, at=at, found=found, expected=wanted))


def read_packed(path: Path) -> tuple[list[str], list[str], list[str]]:
    """``(ids, sources, texts)`` of a file written by :func:`pack_train_text`.

    Raises:
        FileNotFoundError: no such file (E402). ValueError: another format or normaliser (E403).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(Errors.E402.format(path=path))
    lines = lzma.decompress(path.read_bytes()).decode("utf-8").split("\n")
    if lines[0] != f"# {PACKED_FORMAT} {NORMALISER}":
        raise ValueError(Errors.E403.format(path=path, found=lines[0][:80], expected=f"{PACKED_FORMAT} {NORMALISER}"))
    ids, sources, texts = [], [], []
    for line in lines[1:]:
        if line:
            doc_id, source, text = line.split("\t", 2)
            ids.append(doc_id)
            sources.append(source)
            texts.append(text)
    return ids, sources, texts


# -- building ------------------------------------------------------------------------------------


@dataclass
class IndexReport:
    """What :func:`build_text_index` wrote."""

    path: str
    documents: int
    letters: int
    seconds: float
    megabytes: float
    sources: dict[str, int]


def build_text_index(ids: list[str], sources: list[str], texts: list[str], out: Path, origin: str = "") -> IndexReport:
    """Build an index folder over documents (all of them are indexed: pass the train split only).

    The folder is written next to ``out`` (hidden, ``.NAME.*``) and moved into place at the end,
    so a reader never sees half an index; ``meta.json`` records every file's size and checksum.

    Args:
        ids, sources, texts: one entry per document (``norm.v1`` text).
        out: index folder (replaced if present).
        origin: where the documents came from, recorded in ``meta.json``.
    """
    started = time.perf_counter()
    orig = b"\0" + b"\0".join(encode_text(t) for t in texts) + b"\0"
    stream = to_stream(orig)
    orig_arr, stream_arr = np.frombuffer(orig, np.uint8), np.frombuffer(stream, np.uint8)
    orig_starts = np.flatnonzero(orig_arr == 0)[:-1] + 1
    stream_starts = np.flatnonzero(stream_arr == 0)[:-1] + 1
    kept = np.flatnonzero((orig_arr != SPACE) & (orig_arr != DOT))
    assert len(kept) == len(stream) and len(orig_starts) == len(ids)
    checkpoints = kept[::STEP].astype(np.int64)
    del kept
    log.info("indexing %d documents, %d stream codes", len(ids), len(stream))
    # the two sorts run side by side: ctypes releases the GIL while libdivsufsort works
    with ThreadPoolExecutor(max_workers=2) as pool:
        forward, backward = pool.map(suffix_array, (stream_arr, stream_arr[::-1]))
    arrays = {
        "stream": stream_arr,
        "orig": orig_arr,
        "checkpoints": checkpoints,
        "sa": forward,
        "sa-reversed": backward,
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", arr)
        docs = pa.table(
            {"id": ids, "source": sources, "split": ["train"] * len(ids),
             "stream_start": stream_starts.astype(np.int64), "orig_start": orig_starts.astype(np.int64)}
        )  # fmt: skip
        pq.write_table(docs, tmp / "documents.parquet", compression="zstd")
        files = file_records(tmp, [f"{name}.npy" for name in arrays] + ["documents.parquet"])
        by_source: dict[str, int] = {}
        for s in sources:
            by_source[s] = by_source.get(s, 0) + 1
        seconds = round(time.perf_counter() - started, 1)
        meta = {
            "format": FORMAT, "normaliser": NORMALISER, "splits": list(INDEXED_SPLITS), "sources": by_source,
            "documents": len(ids), "stream_codes": len(stream), "origin": origin,
            "built": time.strftime("%Y-%m-%dT%H:%M:%S"), "build_seconds": seconds, "files": files,
        }  # fmt: skip
        (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
        aside = None
        if out.exists() or out.is_symlink():  # moved aside, then away: os.replace cannot replace a full folder
            aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent)) / "index"
            os.replace(out, aside)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if aside is not None:
        shutil.rmtree(aside.parent, ignore_errors=True)
    _VERIFIED.add(_signature(out))
    megabytes = round(sum(f.stat().st_size for f in out.iterdir() if f.is_file()) / 2**20, 1)
    letters = int(np.count_nonzero((stream_arr > 0) & (stream_arr < S_DASH)))
    return IndexReport(str(out), len(ids), letters, seconds, megabytes, by_source)


# -- the cache -----------------------------------------------------------------------------------


def default_index_path(packed: Path | None = None) -> Path:
    """``$APOLLO_RESTORE_INDEX`` if set, else the cache folder of the index over ``packed``
    (named by the packed file's content hash, so a new package version gets a new index)."""
    if os.environ.get(INDEX_ENV):
        return Path(os.environ[INDEX_ENV])
    packed = Path(packed or PACKED_TEXT)
    if not packed.exists():
        return cache_dir() / "textindex-missing"
    stat = packed.stat()
    return cache_dir() / f"textindex-{_content_digest(packed, stat.st_size, stat.st_mtime_ns)}"


@functools.lru_cache(maxsize=8)
def _content_digest(path: Path, size: int, mtime_ns: int) -> str:
    """The fingerprint of ``path`` (:func:`~apollo_restore.inputs.file_digest`), hashed once per process for one
    (size, modification time): both text members ask for the index path."""
    return file_digest(path)


def ensure_index(packed: Path | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """The default index folder, verified, built from ``packed`` first if it is not there yet or
    is damaged (``W401``: the damaged file is named). ``$APOLLO_RESTORE_INDEX`` is returned as
    it is (a folder the user named: verified when opened, ``E408`` when damaged).

    One process builds; others wait for its lock (:func:`~apollo_restore.data.indexcache.build_lock`)
    and then read its index.

    Args:
        packed: the packed text (default: the packaged one, :data:`PACKED_TEXT`).
        progress: called with a one-line message before and after a build (default: a
            ``logging`` warning, which the CLI shows).

    Raises:
        FileNotFoundError, ValueError: from :func:`read_packed`. TextIndexError: the cache
            folder cannot be used (``E409``, ``E410``), another build held it too long (``E411``).
    """
    packed = Path(packed or PACKED_TEXT)
    path = default_index_path(packed)
    if os.environ.get(INDEX_ENV):
        return path
    say = progress or log.warning
    if _damage(path) is None:  # the common case: there and whole, no lock taken
        return path
    with build_lock(path, say):
        damage = _damage(path)  # again: another process may have built it while this one waited
        if damage is None:
            return path
        if damage.code == "W401":
            say(str(damage))
        try:
            clean_leftovers(path)
            documents = read_packed(packed)
            check_space(path, sum(len(text) for text in documents[2]) + len(documents[2]) + 1)
            say(f"building the text index from {Path(packed).name} into {path} (first use only, about 20 s)…")
            report = build_text_index(*documents, out=path, origin=str(packed))
        except FileNotFoundError as err:
            if err.filename is None:  # E402 (no packaged text): not a cache failure
                raise
            raise cache_error(err, path.parent) from err
        except OSError as err:
            raise cache_error(err, path.parent) from err
    say(
        f"text index built: {report.documents:,} documents, {report.letters:,} letters "
        f"in {report.seconds} s ({report.megabytes} MB)"
    )
    return path


class _Missing:
    code = "missing"


def _damage(path: Path) -> TextIndexError | _Missing | None:
    """What is wrong with the default index at ``path``: nothing (``None``), not there, or the
    ``W401`` warning naming the damaged file."""
    try:
        read_verified(path)
    except FileNotFoundError:
        return _Missing()
    except TextIndexError as err:
        if err.code != "E408":
            raise
        return TextIndexError("W401", err.path, reason=err.fields["reason"])
    except ValueError as err:  # E405: another format or normaliser under this code's cache name
        return TextIndexError("W401", path / "meta.json", reason=f"is not this code's: {err}")
    except OSError as err:
        raise cache_error(err, path) from err
    return None


_VERIFIED: set[tuple] = set()  # folders verified in this process (see _signature)


def _signature(path: Path) -> tuple:
    """``path`` with the inode, size and modification time of every file in it: a folder
    rebuilt, replaced or written to since it was verified is verified again (a few ``stat``s)."""
    with os.scandir(path) as entries:
        stats = sorted((e.name, e.inode(), e.stat().st_size, e.stat().st_mtime_ns) for e in entries)
    return (str(path.resolve()), tuple(stats))


def read_verified(path: Path) -> dict[str, Any]:
    """``meta.json`` of the index folder ``path`` after every file it records is verified (once
    per process and folder: 0.06 s of CPU for the packaged text's 549 MB in the page cache).

    Raises:
        FileNotFoundError: no ``meta.json`` there (E404).
        ValueError: another format or normaliser (E405).
        TextIndexError: a damaged file (E408, naming it).
    """
    meta_path = path / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(Errors.E404.format(path=path))
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TextIndexError("E408", meta_path, folder=path, reason=f"is not readable JSON ({err})") from err
    if not isinstance(meta, dict):
        raise TextIndexError("E408", meta_path, folder=path, reason="is not a JSON object")
    found = (meta.get("format"), meta.get("normaliser"))
    if found != (FORMAT, NORMALISER):
        raise ValueError(Errors.E405.format(path=path, found=found, expected=(FORMAT, NORMALISER)))
    signature = _signature(path)
    if signature not in _VERIFIED:
        verify_files(path, meta.get("files"))
        _VERIFIED.add(signature)
    return meta


def packed_fingerprint(packed: Path | None = None) -> str:
    """The :func:`corpus_fingerprint` of the index built from ``packed`` (default: the packaged
    training text), read from the packed text itself (no index is built)."""
    ids, sources, _ = read_packed(Path(packed or PACKED_TEXT))
    return corpus_fingerprint(ids, sources)


# -- reading -------------------------------------------------------------------------------------


def corpus_fingerprint(ids: list[str], sources: list[str]) -> str:
    """The identity of an index's corpus: :func:`~apollo_restore.inputs.digest` of its documents'
    ``source<TAB>id`` lines, in corpus order (as :func:`pack_train_text` writes them and the index
    holds them). Labels joined to the index by id (the attribution folder's ``documents.tsv.xz``)
    carry it, so that labels made for another corpus are refused rather than joined to the wrong
    documents."""
    return digest("".join(f"{s}\t{i}\n" for s, i in zip(sources, ids)))


_OPENED: list[TextIndex] = []  # indexes opened by TextIndex.shared()


class TextIndex:
    """An opened index folder: suffix arrays and texts memory-mapped.

    Attributes:
        doc_ids, doc_sources: per document, in corpus order.
        codes: the stream, ``(n,)`` uint8 stream codes (memory-mapped).
        sa, sa_reversed: memory-mapped int32 suffix arrays.
    """

    def __init__(self, path: Path, meta: dict[str, Any], docs: pa.Table) -> None:
        self.path, self.meta = path, meta
        self.doc_ids: list[str] = docs.column("id").to_pylist()
        self.doc_sources: list[str] = docs.column("source").to_pylist()
        self.splits: list[str] = docs.column("split").to_pylist()
        # via lists, not Arrow's to_numpy (which imports pandas: ≈ 0.2 s of a CLI call, for 76k ints)
        self._stream_starts = np.array(docs.column("stream_start").to_pylist(), dtype=np.int64)
        self._orig_starts = np.array(docs.column("orig_start").to_pylist(), dtype=np.int64)
        # memory-mapped, as plain ndarrays (np.memmap wraps every lookup): a CLI call reads the
        # pages it touches instead of copying two 54 MB files (≈ 0.1 s); both start and end with 0
        self.codes = np.asarray(np.load(path / "stream.npy", mmap_mode="r"))
        self._orig_codes = np.asarray(np.load(path / "orig.npy", mmap_mode="r"))
        self._checkpoints = np.load(path / "checkpoints.npy", mmap_mode="r")
        self.sa = np.load(path / "sa.npy", mmap_mode="r")
        self.sa_reversed = np.load(path / "sa-reversed.npy", mmap_mode="r")

    @functools.cached_property
    def fingerprint(self) -> str:
        """The :func:`corpus_fingerprint` of its documents (what labels joined to it by id must carry)."""
        return corpus_fingerprint(self.doc_ids, self.doc_sources)

    @classmethod
    def open(cls, path: str | Path | None = None, progress: Callable[[str], None] | None = None) -> TextIndex:
        """Open an index folder; with no ``path``, the default one (built on first use).

        Every file is verified first (:func:`read_verified`).

        Raises:
            FileNotFoundError: no index there (E404).
            ValueError: another format or normaliser (E405).
            TextIndexError: a damaged file (E408, naming it); from the default one's build,
                a cache folder that cannot be used (E409–E411).
        """
        path = Path(path) if path else ensure_index(progress=progress)
        meta = read_verified(path)
        # one file: ParquetFile reads it without importing pyarrow.dataset and pandas (≈ 0.4 s of a CLI call)
        return cls(path, meta, pq.ParquetFile(path / "documents.parquet").read())

    @classmethod
    def shared(cls, progress: Callable[[str], None] | None = None) -> TextIndex:
        """The default index, opened once per process (built on first use). An instance of a
        subclass already opened (e.g. the parallel-passage index) is shared too."""
        path = ensure_index(progress=progress)
        for opened in _OPENED:
            if isinstance(opened, cls) and opened.path == path:
                return opened
        _OPENED.append(cls.open(path))
        return _OPENED[-1]

    @staticmethod
    def pattern(text: str) -> bytes:
        """``norm.v1`` text → the stream codes it is searched as."""
        return to_stream(encode_text(text))

    def occurrences(self, pattern: bytes) -> np.ndarray:
        """Stream positions where ``pattern`` (stream codes) starts, in suffix-array order
        (int64, shape ``(count,)``)."""
        lo, hi = self.sa_range(pattern)
        return np.asarray(self.sa[lo:hi], dtype=np.int64)

    def sa_range(self, pattern: bytes) -> tuple[int, int]:
        """``[lo, hi)``: the suffix-array rows whose suffixes start with ``pattern``."""
        codes, sa, m = self.codes, self.sa, len(pattern)

        def key(i: int) -> bytes:
            p = int(sa[i])
            return codes[p : p + m].tobytes()

        lo = bisect.bisect_left(range(len(sa)), pattern, key=key)
        hi = bisect.bisect_right(range(lo, len(sa)), pattern, key=key) + lo
        return lo, hi

    def count(self, pattern: bytes) -> int:
        """Occurrences of ``pattern`` (stream codes)."""
        lo, hi = self.sa_range(pattern)
        return hi - lo

    def doc_of(self, positions: np.ndarray) -> np.ndarray:
        """Document index of each stream position."""
        return np.searchsorted(self._stream_starts, positions, side="right") - 1

    def orig_pos(self, p: int) -> int:
        """Offset in the original text of stream position ``p``."""
        k, r = divmod(p, STEP)
        o = int(self._checkpoints[k])
        if r == 0:
            return o
        width = 4 * STEP
        while True:
            chunk = self._orig_codes[o : o + width]
            kept = np.flatnonzero((chunk != SPACE) & (chunk != DOT))
            if len(kept) > r or o + width >= len(self._orig_codes):
                return o + int(kept[r])
            width *= 2

    def orig_text(self, start: int, end: int) -> str:
        """The ``norm.v1`` text at original offsets ``[start, end)``."""
        return decode(self._orig_codes[start:end].tobytes())

    def doc_span(self, doc: int) -> tuple[int, int]:
        """Original offsets ``[start, end)`` of document ``doc``."""
        start = int(self._orig_starts[doc])
        end = int(self._orig_starts[doc + 1]) - 1 if doc + 1 < len(self._orig_starts) else len(self._orig_codes) - 1
        return start, end


def expand_ranges(lo: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every index of the ranges ``[lo[i], lo[i] + sizes[i])``, range after range, without a loop.

    Args:
        lo, sizes: ``(U,)`` int: each range's first index and its length (``0`` for none).

    Returns:
        ``(owner, index)``, each ``(sizes.sum(),)`` int64: the range each index belongs to, and
        the index.
    """
    owner = np.repeat(np.arange(len(sizes)), sizes)
    return owner, np.arange(len(owner)) + np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)


def sa_ranges(
    text: np.ndarray, sa: np.ndarray, patterns: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Suffix-array ranges of many patterns at once (a vectorised binary search).

    Args:
        text: uint8 codes ending with a 0 (an index's stream does, either way round; reads past
            the end stop there); sa: its suffix array.
        patterns: ``(P, m)`` codes, row ``i`` left-aligned; lengths: ``(P,)`` codes used per row.

    Returns:
        ``(lo, hi)``, each ``(P,)`` int64: the rows of ``sa`` whose suffixes start with each pattern.
    """
    n, last = len(sa), len(text) - 1
    count, m = patterns.shape
    cols = np.arange(m)
    rows = np.arange(count)
    pat = patterns.astype(np.int16)
    inside = cols[None, :] < lengths[:, None]  # (P, m)
    bounds = []
    for upper in (False, True):
        left, right = np.zeros(count, dtype=np.int64), np.full(count, n, dtype=np.int64)
        while (left < right).any():
            active = left < right
            mid = (left + right) // 2
            pos = np.asarray(sa[np.minimum(mid, n - 1)], dtype=np.int64)
            chunk = text[np.minimum(pos[:, None] + cols[None, :], last)].astype(np.int16)  # (P, m)
            diff = (chunk != pat) & inside
            first = diff.argmax(axis=1)
            differs = diff.any(axis=1)
            less = differs & (chunk[rows, first] < pat[rows, first])
            # lower bound: move right past suffixes < pattern; upper bound: also past those equal to it
            go_right = active & (less | (~differs if upper else False))
            left = np.where(go_right, mid + 1, left)
            right = np.where(active & ~go_right, mid, right)
        bounds.append(left)
    return bounds[0], bounds[1]
