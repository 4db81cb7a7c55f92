"""Cut out of extra text every run it shares with held-out text (docs/design.md, *Splits*).

    from apollo_restore.data.overlap import OverlapMask
    mask = OverlapMask(TextIndex.open("heldout-index"))   # an index over validation + test text
    pieces, masked = mask.pieces(normalise(work_text))  # the work without its shared runs

A corpus added to the text index (e.g. First1KGreek) is not part of the train/validation/test
splits, but it can quote, or be another edition of, a held-out document. Every window of
``min_run`` letters (letters only, σ-folded, as the index matches) that also stands in the
held-out index is found, and the letters it covers are cut out: what is left of the text comes
back as pieces, to be indexed as separate documents, so that no run of ``min_run`` letters is
shared with held-out text any more.

Windows are compared first by a 64-bit polynomial hash (all held-out windows sorted once, each
text window looked up by binary search), then every hit is confirmed in the held-out suffix
array (:func:`~apollo_restore.data.textindex.sa_ranges`): a hash collision never masks text.
"""

from __future__ import annotations

import numpy as np

from apollo_restore.data.textindex import S_DASH, SPACE, TextIndex, decode, encode_text, sa_ranges, to_stream

MIN_RUN = 40  # letters a text must share with another to count as taken from it (here and in provenance)
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of the window hash
_CHUNK = 200_000  # windows confirmed in the suffix array per call


def window_hashes(codes: np.ndarray, width: int) -> np.ndarray:
    """Polynomial hash of every window of ``width`` codes.

    Args:
        codes: ``(n,)`` uint8 stream codes.
        width: window length (letters).

    Returns:
        ``(max(n - width + 1, 0),)`` uint64: the hash of ``codes[i : i + width]`` at ``i``
        (arithmetic modulo 2**64).
    """
    count = len(codes) - width + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    values = codes.astype(np.uint64)
    hashes = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width):
            hashes *= _BASE
            hashes += values[j : j + count]
    return hashes


def clean_windows(codes: np.ndarray, width: int) -> np.ndarray:
    """``(n - width + 1,)`` bool: windows holding letters only (no separator 0, no gap marker)."""
    bad = np.r_[0, np.cumsum((codes == 0) | (codes >= S_DASH), dtype=np.int64)]
    return (bad[width:] - bad[:-width]) == 0


class OverlapMask:
    """Finds and cuts out the runs of ``min_run`` or more letters a text shares with an index.

    Attributes:
        index: the held-out text index.
        min_run: shortest shared run cut out (letters).
    """

    def __init__(self, index: TextIndex, min_run: int = MIN_RUN) -> None:
        if min_run < 1:
            raise ValueError(f"min_run must be at least 1; got {min_run}")
        self.index, self.min_run = index, min_run
        codes = np.asarray(index.codes)
        hashes = window_hashes(codes, min_run)
        self._hashes = np.unique(hashes[clean_windows(codes, min_run)]) if len(hashes) else hashes

    def shared(self, stream: np.ndarray) -> np.ndarray:
        """Which letters of a stream lie inside a run shared with the index.

        Args:
            stream: ``(n,)`` uint8 stream codes of one text (:func:`~apollo_restore.data.textindex.to_stream`).

        Returns:
            ``(n,)`` bool.
        """
        stream = np.asarray(stream, dtype=np.uint8)
        width, covered = self.min_run, np.zeros(len(stream) + 1, dtype=np.int64)
        hashes = window_hashes(stream, width)
        if not len(hashes) or not len(self._hashes):
            return np.zeros(len(stream), dtype=bool)
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        candidates = np.flatnonzero((self._hashes[at] == hashes) & clean_windows(stream, width))
        windows = np.lib.stride_tricks.sliding_window_view(stream, width)
        for first in range(0, len(candidates), _CHUNK):
            starts = candidates[first : first + _CHUNK]
            lo, hi = sa_ranges(
                self.index.codes, self.index.sa, np.ascontiguousarray(windows[starts]), np.full(len(starts), width)
            )
            confirmed = starts[hi > lo]
            np.add.at(covered, confirmed, 1)
            np.add.at(covered, confirmed + width, -1)
        return np.cumsum(covered[:-1]) > 0

    def pieces(self, text: str) -> tuple[list[str], int]:
        """A ``norm.v1`` text without its shared runs.

        Returns:
            ``(pieces, masked)``: the stretches of ``text`` between the shared runs, in order,
            stripped, empty ones dropped (the whole text when nothing is shared); and the number
            of letters cut out.
        """
        orig = np.frombuffer(encode_text(text), np.uint8)
        letters = np.flatnonzero(orig < SPACE)  # original offset of each stream letter
        shared = self.shared(np.frombuffer(to_stream(orig.tobytes()), np.uint8))
        if not shared.any():
            return ([text] if text.strip() else []), 0
        keep = np.ones(len(orig), dtype=bool)
        keep[letters[shared]] = False
        # a stretch of kept codes that follows a cut starts a new piece
        edges = np.flatnonzero(np.diff(np.r_[False, keep, False].astype(np.int8)))
        pieces = [decode(orig[a:b].tobytes()).strip(" ·") for a, b in zip(edges[::2], edges[1::2])]
        return [p for p in pieces if p], int(shared.sum())
