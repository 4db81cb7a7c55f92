"""An unbounded-order character model on a suffix array (infini-gram style, Liu et al. 2024).

    from apollo_restore.data.textindex import TextIndex
    from apollo_restore.ngram.infini import InfiniGram
    index = TextIndex.open()
    lm = InfiniGram.forward(index)                   # or InfiniGram.backward(index): right to left
    state = lm.start([lm.encode("αυτοκρατορος καισαρος")])
    probs, counts = lm.distribution(state)           # (1, K): P(next code | context)

Symbols are the text index's *stream* codes: letters only, ς folded to σ (spaces and ``·`` are not
modelled: the restoration match ignores them, and a context of letters reaches further back),
``0`` the document boundary, ``-``/``…`` the gap markers. ``K`` = 31 codes.

Counts: for a context ``c`` (its last ``ℓ`` codes, ``ℓ = 0..max_context``) the suffixes of the
text starting with ``c`` form one suffix-array range; the code that follows ``c`` in each of them
is sorted within it, so one range per ``(context, next code)``. A state holds, per beam, the range
of every context length, and advancing by a code narrows each range to the sub-range of that code
(a lookup in the counts already computed): counts for contexts of any length cost the same.

Smoothing: interpolated absolute discounting over every context length that occurs, from the
uniform distribution up (a long match that recurs at many lengths is trusted the more for it;
measured on ddb validation against interpolating only where the count changes, and Witten–Bell):
``P_ℓ(x) = (c_ℓ(x) − D(c_ℓ(x))) / n_ℓ + (Σ_y D(c_ℓ(y)) / n_ℓ) · P_{ℓ−1}(x)``, with ``n_ℓ`` the
context's count; the discount depends on the count as in modified Kneser–Ney (Chen & Goodman
1998): ``D(0) = 0``, ``D(1) = D₁``, ``D(2) = D₂``, ``D(c ≥ 3) = D₃`` (one ``D`` for all counts
is plain absolute discounting, where the back-off weight is ``D · T_ℓ / n_ℓ``, ``T_ℓ`` the
number of distinct continuations). Every row sums to 1.

A context is cut after its last gap marker (the letters after a lacuna are not evidence for what
follows the letters before it), and a pattern never spans a document boundary except where the
context starts with the boundary itself (a document start).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apollo_restore.data.textindex import (
    S_DASH,
    S_ELLIPSIS,
    TextIndex,
    encode_text,
    expand_ranges,
    sa_ranges,
    to_stream,
)
from apollo_restore.errors import Errors

K = 31  # stream codes 0..30
BOUNDARY = 0
_SMALL = 512  # ranges up to this many rows are counted by reading them; larger ones by binary search
_CACHE_LIMIT = 500_000


@dataclass
class State:
    """Suffix-array ranges of every context length, per beam.

    Attributes:
        lo, hi: ``(B, max_context + 1)`` int64; ``[lo, hi)`` is the range of the beam's last
            ``ℓ`` codes (column ``ℓ``); empty (``lo == hi``) where that context never occurs or
            reaches past a marker.
    """

    lo: np.ndarray
    hi: np.ndarray

    def take(self, rows: np.ndarray) -> State:
        return State(self.lo[rows], self.hi[rows])


class InfiniGram:
    """Counts and smoothed next-code probabilities for contexts of any length up to
    ``max_context`` codes.

    Args:
        text: ``(n,)`` uint8 stream codes (forward, or reversed for right-to-left).
        sa: ``(n,)`` its suffix array (int32, may be memory-mapped).
        max_context: longest context used (codes).
        discount: ``D`` of the absolute discounting, in (0, 1); or ``(D₁, D₂, D₃)``, the
            discounts of continuations seen once, twice and more often (``0 < D₁ ≤ 1``,
            ``0 ≤ D₂ ≤ 2``, ``0 ≤ D₃ ≤ 3``). Default ``(0.6, 1.0, 1.3)``: chosen on ddb validation
            (BENCHMARKS.md, "Unbounded-order members and n-grams").
        reverse: whether ``text`` runs right to left (then :meth:`encode` reverses too).
    """

    def __init__(
        self,
        text: np.ndarray,
        sa: np.ndarray,
        max_context: int = 40,
        discount: float | tuple[float, float, float] | list[float] = (0.6, 1.0, 1.3),
        reverse: bool = False,
    ):
        text = np.asarray(text, dtype=np.uint8)
        # reads past the end must find a 0: an index's stream ends with one either way round (used
        # as it is, memory-mapped); another text gets one appended (a copy)
        self.text = text if len(text) and text[-1] == 0 else np.r_[text, np.zeros(1, np.uint8)]
        self._last = len(self.text) - 1  # reads are clamped here
        # a plain ndarray view of a memory map: indexing skips np.memmap's per-call wrapping
        self.sa, self.n = np.asarray(sa), len(text)
        self.max_context, self.reverse = max_context, reverse
        d = (float(discount),) * 3 if np.isscalar(discount) else tuple(float(x) for x in discount)
        if len(d) != 3 or not (0 < d[0] <= 1 and 0 <= d[1] <= 2 and 0 <= d[2] <= 3):
            raise ValueError(Errors.E407.format(discount=discount))
        self.discount = d
        # D(c) for c = 0, 1, 2, 3+ as a lookup table
        self._discount_of = np.array([0.0, *d], dtype=np.float64)
        self._cache: dict[int, np.ndarray] = {}  # lo · (max_context + 1) + depth → counts

    @classmethod
    def forward(cls, index: TextIndex, **options) -> InfiniGram:
        """Left to right over ``index``'s stream."""
        return cls(index.codes, index.sa, **options)

    @classmethod
    def backward(cls, index: TextIndex, **options) -> InfiniGram:
        """Right to left: the reversed stream and its suffix array."""
        return cls(index.codes[::-1], index.sa_reversed, reverse=True, **options)

    def encode(self, text: str) -> np.ndarray:
        """``norm.v1`` text → stream codes (uint8), reversed for a right-to-left model."""
        codes = np.frombuffer(to_stream(encode_text(text)), np.uint8)
        return codes[::-1].copy() if self.reverse else codes.copy()

    # -- counts --

    def counts(self, lo: np.ndarray, hi: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """Next-code counts of suffix-array ranges.

        Args:
            lo, hi, depth: ``(U,)``: ranges ``[lo, hi)`` whose suffixes share their first
                ``depth`` codes (``depth ≤ max_context``).

        Returns:
            ``(U, K)`` int64: rows of the range followed by each code at offset ``depth``.
        """
        out = np.zeros((len(lo), K), dtype=np.int64)
        size = hi - lo
        small = np.flatnonzero((size > 0) & (size <= _SMALL))
        if len(small):  # every row of the small ranges, one after another
            sizes = size[small]
            owner, rows = expand_ranges(lo[small], sizes)  # (N,) each: the range each row is in, the row
            ch = self.text[np.minimum(self.sa[rows].astype(np.int64) + depth[small][owner], self._last)]
            out[small] = np.bincount(owner * K + ch, minlength=len(small) * K).reshape(len(small), K)
        large = np.flatnonzero(size > _SMALL)
        if not len(large):
            return out
        keys = (lo[large] * (self.max_context + 1) + depth[large]).tolist()  # one int per (range, depth)
        get = self._cache.get
        hits = [get(key) for key in keys]
        known = [j for j, hit in enumerate(hits) if hit is not None]
        if known:
            out[large[known]] = np.stack([hits[j] for j in known])
        todo = [j for j, hit in enumerate(hits) if hit is None]
        if todo:
            rows = large[todo]
            found = self._search(lo[rows], hi[rows], depth[rows])
            out[rows] = found
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            self._cache.update(zip((keys[j] for j in todo), found))
        return out

    def _search(self, lo: np.ndarray, hi: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """Counts of large ranges by a vectorised binary search for each code's first row."""
        codes = np.arange(1, K)[None, :]  # (1, K-1)
        left = np.repeat(lo[:, None], K - 1, axis=1)  # (U, K-1)
        right = np.repeat(hi[:, None], K - 1, axis=1)
        while True:
            active = left < right
            if not active.any():
                break
            mid = (left + right) // 2
            pos = self.sa[np.minimum(mid, self.n - 1)].astype(np.int64)
            ch = self.text[np.minimum(pos + depth[:, None], self._last)]
            go_right = active & (ch < codes)
            left = np.where(go_right, mid + 1, left)
            right = np.where(active & ~go_right, mid, right)
        bounds = np.concatenate([lo[:, None], left, hi[:, None]], axis=1)  # (U, K+1)
        return np.diff(bounds, axis=1)

    # -- states --

    def empty_state(self, beams: int = 1) -> State:
        """The empty context: only length 0 (the whole text) is defined."""
        lo = np.zeros((beams, self.max_context + 1), dtype=np.int64)
        hi = np.zeros_like(lo)
        hi[:, 0] = self.n
        return State(lo, hi)

    def start(self, contexts: list[np.ndarray]) -> State:
        """The states after each context (codes, oldest first; cut after its last marker)."""
        state = self.empty_state(len(contexts))
        for i, ctx in enumerate(contexts):
            ctx = _after_marker(np.asarray(ctx, dtype=np.uint8))[-self.max_context :]
            m = len(ctx)
            if m:
                patterns = np.zeros((m, m), dtype=np.uint8)  # row ℓ-1: the context's last ℓ codes
                for ell in range(1, m + 1):
                    patterns[ell - 1, :ell] = ctx[-ell:]
                lo, hi = sa_ranges(self.text, self.sa, patterns, np.arange(1, m + 1))
                state.lo[i, 1 : m + 1], state.hi[i, 1 : m + 1] = lo, hi
        return state

    def distribution(self, state: State, probs: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
        """Next-code probabilities and the counts behind them.

        Returns:
            ``(probs, counts)``: ``(B, K)`` float64 rows summing to 1 (``None`` when ``probs``
            is false), and ``(B, max_context + 1, K)`` int64 counts per context length.
        """
        b, width = state.lo.shape
        depth = np.broadcast_to(np.arange(width), (b, width))
        nonempty = state.hi > state.lo
        key = state.lo * (width + 1) + depth
        flat = np.flatnonzero(nonempty.ravel())
        counts = np.zeros((b * width, K), dtype=np.int64)
        if len(flat):
            uniq, first, inverse = np.unique(key.ravel()[flat], return_index=True, return_inverse=True)
            rows = flat[first]
            counts[flat] = self.counts(state.lo.ravel()[rows], state.hi.ravel()[rows], depth.ravel()[rows])[
                inverse.ravel()
            ]
        counts = counts.reshape(b, width, K)
        return (self._smooth(counts[:, : _used(state)]) if probs else None), counts

    def _weights(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interpolation as a sum: ``P(x) = Σ_ℓ a_ℓ(x) · R_ℓ + R_{−1} / K``.

        Returns:
            ``(a, R)``: ``(B, L+1, K)`` discounted relative counts (0 at unused lengths) and
            ``(B, L+2)`` the product of the back-off weights of all longer used lengths
            (column 0 is ``R_{−1}``, the uniform distribution's weight).
        """
        n = counts.sum(axis=2)  # (B, L+1)
        use = n > 0
        safe = np.where(use, n, 1).astype(np.float64)[:, :, None]
        d = self._discount_of[np.minimum(counts, 3)]  # (B, L+1, K): D(c)
        a = np.where(use[:, :, None], (counts - d) / safe, 0.0)
        backoff = np.where(use, d.sum(axis=2) / safe[:, :, 0], 1.0)  # (B, L+1)
        # R_ℓ = Π_{j > ℓ} backoff_j, for ℓ = −1 .. L
        tail = np.cumprod(backoff[:, ::-1], axis=1)[:, ::-1]  # (B, L+1): Π_{j ≥ ℓ}
        r = np.concatenate([tail, np.ones((len(n), 1))], axis=1)  # (B, L+2): column ℓ+1 is Π_{j > ℓ}
        return a, r

    def _smooth(self, counts: np.ndarray) -> np.ndarray:
        """``(B, K)`` probabilities from ``(B, L+1, K)`` counts (see the module doc)."""
        a, r = self._weights(counts)
        return (a * r[:, 1:, None]).sum(axis=1) + r[:, :1] / K

    def _prob_of(self, counts: np.ndarray, symbols: np.ndarray) -> np.ndarray:
        """``(B,)`` probabilities of one code per beam (:meth:`_smooth` at those codes only)."""
        a, r = self._weights(counts)
        rows = np.arange(len(symbols))
        return (a[rows, :, symbols] * r[:, 1:]).sum(axis=1) + r[:, 0] / K

    def advance(self, state: State, counts: np.ndarray, symbols: np.ndarray) -> State:
        """States after appending one code to each beam.

        Args:
            state: ``B`` beams; counts: their ``(B, L+1, K)`` counts (from :meth:`distribution`).
            symbols: ``(B,)`` codes appended.

        Returns:
            The new ``B`` states: length ``ℓ`` is the old length ``ℓ − 1``'s sub-range of the code
            (a marker empties every length but 0).
        """
        b, width = state.lo.shape
        u = min(_used(state), width - 1)  # lengths ≥ u are empty in every beam, so stay empty one longer
        rows = np.arange(b)
        counts = counts[:, :u]
        before = np.cumsum(counts, axis=2) - counts  # (B, u, K): rows before each code
        start = state.lo[:, :u] + before[rows, :, symbols]
        size = counts[rows, :, symbols]
        lo = np.zeros_like(state.lo)
        hi = np.zeros_like(state.hi)
        hi[:, 0] = self.n
        lo[:, 1 : u + 1], hi[:, 1 : u + 1] = start, start + size
        marker = (symbols == S_DASH) | (symbols == S_ELLIPSIS)
        lo[marker, 1:] = hi[marker, 1:] = 0
        return State(lo, hi)

    def score(self, state: State, seqs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Log-probability (nats) of each row's codes ``seqs[r, :lengths[r]]`` after ``state[r]``.

        Args:
            state: ``R`` states; seqs: ``(R, T)`` codes; lengths: ``(R,)``.

        Returns:
            ``(R,)`` float64.
        """
        total = np.zeros(len(seqs))
        for t in range(seqs.shape[1] if len(seqs) else 0):
            live = np.flatnonzero(lengths > t)
            if not len(live):
                break
            sub = state.take(live)
            _, counts = self.distribution(sub, probs=False)
            sym = seqs[live, t]
            total[live] += np.log(self._prob_of(counts[:, : _used(sub)], sym))
            stepped = self.advance(sub, counts, sym)
            state.lo[live], state.hi[live] = stepped.lo, stepped.hi
        return total


def _used(state: State) -> int:
    """``W``: the context lengths ``0 .. W − 1`` hold every non-empty range of ``state`` (the
    longer ones are empty in every beam, so the smoothing and the stepping may skip them)."""
    deep = np.flatnonzero((state.hi > state.lo).any(axis=0))
    return int(deep[-1]) + 1 if len(deep) else 1


def _after_marker(codes: np.ndarray) -> np.ndarray:
    marks = np.flatnonzero((codes == S_DASH) | (codes == S_ELLIPSIS))
    return codes[marks[-1] + 1 :] if len(marks) else codes
