"""A character n-gram language model with interpolated modified Kneser-Ney smoothing, in numpy.

    from apollo_restore.ngram.model import NgramModel
    lm = NgramModel.build(texts, order=8)             # texts: norm.v1 strings
    lm.save("ddb-8.npz"); lm = NgramModel.load("ddb-8.npz")
    lp = lm.logprobs_next(["και τ", "στρατηγ"])       # (2, V) log-probabilities

Symbols are small integer codes (``PAD`` = 0 means "no symbol"); an n-gram is packed into one
``uint64`` with 6 bits per symbol, first symbol in the highest bits, so for every order the
sorted keys group n-grams by context and one ``np.searchsorted`` finds any n-gram. Orders up
to 10 fit in 64 bits.

Each document is counted as ``^ text ^`` (``^`` the boundary symbol: start and end). Gap markers
``-`` and ``…`` are predicted like any symbol (an n-gram may *end* in one), but an n-gram with a
marker anywhere else is never counted: the letters after a lacuna are not evidence for what
follows the letters before it. At query time a context is cut after its last marker, so it
backs off to the letters that follow the lacuna.

Smoothing (Chen & Goodman's interpolated modified Kneser-Ney): the highest order uses raw
counts, lower orders continuation counts (distinct left neighbours; raw counts for n-grams
that start with ``^``), three discounts per order; the unigram distribution is interpolated
with the uniform one, so every symbol has a nonzero probability and each row sums to 1, also
after ``min_count`` pruning (the pruned mass goes to the backoff weight).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from apollo_restore.data.normalise import GAP_CHAR, GREEK_LETTERS, MIDDLE_DOT, NORMALISER, UNKNOWN_GAP
from apollo_restore.data.textindex import expand_ranges

log = logging.getLogger(__name__)

FORMAT = "apollo_restore ngram.v1"
BOUNDARY = "^"
#: Predicted symbols; symbol ``SYMBOLS[i]`` has code ``i + 1`` (code 0 is "no symbol").
SYMBOLS = BOUNDARY + GAP_CHAR + UNKNOWN_GAP + GREEK_LETTERS + " " + MIDDLE_DOT
PAD = 0
BITS = 6
MAX_ORDER = 64 // BITS
SMOOTHING = "interpolated modified Kneser-Ney"
_DENSE = 3  # orders up to this are precomputed for all contexts (64**2 rows)

_CODE = {ch: i + 1 for i, ch in enumerate(SYMBOLS)}
_LUT = np.zeros(0x2100, dtype=np.uint8)  # code point → code; unknown characters → 0 (dropped)
for _ch, _c in _CODE.items():
    _LUT[ord(_ch)] = _c
B_CODE, GAP_CODE, UNKNOWN_CODE = _CODE[BOUNDARY], _CODE[GAP_CHAR], _CODE[UNKNOWN_GAP]
assert len(SYMBOLS) < 2**BITS


def encode(text: str) -> np.ndarray:
    """Codes (uint8) of the characters of ``text``; characters outside :data:`SYMBOLS` are dropped."""
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    cps = cps[cps < len(_LUT)]
    codes = _LUT[cps]
    return codes[codes != PAD]


def is_marker(codes: np.ndarray) -> np.ndarray:
    """True where the code is a gap marker (``-`` or ``…``)."""
    return (codes == GAP_CODE) | (codes == UNKNOWN_CODE)


def pack(windows: np.ndarray) -> np.ndarray:
    """Pack ``(..., n)`` codes into uint64 keys, first symbol in the highest bits."""
    key = np.zeros(windows.shape[:-1], dtype=np.uint64)
    for j in range(windows.shape[-1]):
        key = (key << np.uint64(BITS)) | windows[..., j].astype(np.uint64)
    return key


@dataclass
class OrderTable:
    """Everything one order ``n`` needs.

    Attributes:
        keys: sorted packed n-grams (uint64).
        counts: their (adjusted) counts, uint32.
        ctx: sorted packed contexts (the first ``n - 1`` symbols; one key 0 for unigrams).
        ctx_total: summed counts of each context (before pruning), float64 (saved as uint32).
        ctx_gamma: backoff weight of each context (mass not given to kept n-grams), float64
            holding float32 values (saved as float32).
    """

    keys: np.ndarray
    counts: np.ndarray
    ctx: np.ndarray
    ctx_total: np.ndarray
    ctx_gamma: np.ndarray

    def __post_init__(self) -> None:
        # Offsets of each context's block of n-grams in ``keys`` (derived, not saved).
        ck = self.keys >> np.uint64(BITS)
        starts = np.flatnonzero(np.r_[True, ck[1:] != ck[:-1]]) if len(ck) else np.zeros(0, np.int64)
        assert len(starts) == len(self.ctx), "contexts and n-gram blocks disagree"
        self.ctx_start = np.r_[starts, len(ck)].astype(np.int64)


def _corpus_codes(texts: Iterable[str]) -> np.ndarray:
    """All texts as one uint8 array ``^ t1 ^ t2 ^ ... ^``."""
    parts = [np.array([B_CODE], dtype=np.uint8)]
    sep = parts[0]
    for text in texts:
        parts.append(encode(text))
        parts.append(sep)
    return np.concatenate(parts)


def _count_order(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and raw counts of the countable n-grams of ``codes``.

    Countable: no gap marker except in the last position, no boundary except in the first
    or last position.
    """
    t = len(codes) - n + 1
    if t <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    bad_marker = is_marker(codes)
    bad_boundary = codes == B_CODE
    ok = np.ones(t, dtype=bool)
    for j in range(n - 1):
        ok &= ~bad_marker[j : j + t]
        if j > 0:
            ok &= ~bad_boundary[j : j + t]
    idx = np.flatnonzero(ok)
    key = np.zeros(len(idx), dtype=np.uint64)
    for j in range(n):
        key = (key << np.uint64(BITS)) | codes[idx + j].astype(np.uint64)
    return np.unique(key, return_counts=True)


def _discounts(counts: np.ndarray) -> np.ndarray:
    """Modified KN discounts ``[0, D1, D2, D3+]`` from counts-of-counts (Chen & Goodman)."""
    nk = np.bincount(np.minimum(counts, 5).astype(np.int64), minlength=6)[1:5].astype(np.float64)
    n1, n2, n3, n4 = np.maximum(nk, 1.0)
    y = n1 / (n1 + 2 * n2)
    d = np.array([0.0, 1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3])
    # Degenerate counts-of-counts (tiny corpora) can give discounts outside (0, k].
    return np.clip(d, [0.0, 0.05, 0.1, 0.15], [0.0, 1.0, 2.0, 3.0])


def _discount_of(counts: np.ndarray, d: np.ndarray) -> np.ndarray:
    return d[np.minimum(counts, 3).astype(np.int64)]


class NgramModel:
    """Character n-gram LM over :data:`SYMBOLS` (see the module docstring).

    Attributes:
        order: the highest order N.
        tables: ``tables[n - 1]`` is the :class:`OrderTable` of order ``n``.
        discounts: ``discounts[n - 1]`` = ``[0, D1, D2, D3+]`` of order ``n``.
        meta: JSON-ready build settings and statistics.
    """

    symbols = SYMBOLS
    V = len(SYMBOLS)

    def __init__(self, order: int, tables: list[OrderTable], discounts: np.ndarray, meta: dict):
        self.order, self.tables, self.discounts, self.meta = order, tables, discounts, meta
        self._dense: np.ndarray | None = None  # see _dense_start

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, texts: Iterable[str], order: int = 8, min_count: int = 1, prune_from: int = 3) -> NgramModel:
        """Count and smooth.

        Args:
            texts: ``norm.v1`` documents (gap markers allowed).
            order: highest order N (2–10).
            min_count: n-grams of order ≥ ``prune_from`` seen fewer times than this are dropped;
                their probability mass goes to the lower orders.
            prune_from: lowest order that is pruned.
        """
        if not 2 <= order <= MAX_ORDER:
            raise ValueError(f"order must be 2..{MAX_ORDER}, got {order}")
        started = time.perf_counter()
        codes = _corpus_codes(texts)
        raw = [_count_order(codes, n) for n in range(1, order + 1)]
        tables, discounts = [], []
        for n in range(1, order + 1):
            keys, raw_counts = raw[n - 1]
            counts = cls._continuation_counts(keys, raw_counts, raw[n][0], n) if n < order else raw_counts
            d = _discounts(counts)
            ctx_keys = keys >> np.uint64(BITS)
            starts = np.flatnonzero(np.r_[True, ctx_keys[1:] != ctx_keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
            ctx = ctx_keys[starts]
            total = np.add.reduceat(counts.astype(np.float64), starts) if len(keys) else np.zeros(0)
            keep = raw_counts >= min_count if (min_count > 1 and n >= prune_from) else np.ones(len(keys), bool)
            kept_mass = np.maximum(counts - _discount_of(counts, d), 0.0) * keep
            gamma = 1.0 - np.add.reduceat(kept_mass, starts) / total if len(keys) else np.zeros(0)
            has_kept = np.add.reduceat(keep.astype(np.int64), starts) > 0 if len(keys) else np.zeros(0, bool)
            # gamma is kept as float32 (as saved), so a loaded model scores exactly like this one
            gamma = np.maximum(gamma[has_kept], 0.0).astype(np.float32).astype(np.float64)
            tables.append(OrderTable(keys[keep], counts[keep].astype(np.uint32), ctx[has_kept], total[has_kept], gamma))
            discounts.append(d)
        meta = {
            "format": FORMAT,
            "normaliser": NORMALISER,
            "order": order,
            "symbols": SYMBOLS,
            "bits": BITS,
            "smoothing": SMOOTHING,
            "min_count": min_count,
            "prune_from": prune_from,
            "characters": int(len(codes)),
            "ngrams": [int(len(t.keys)) for t in tables],
            "build_seconds": round(time.perf_counter() - started, 1),
        }
        log.info("built %d-gram model on %d characters in %.1f s", order, len(codes), meta["build_seconds"])
        return cls(order, tables, np.array(discounts), meta)

    @staticmethod
    def _continuation_counts(keys: np.ndarray, raw: np.ndarray, higher: np.ndarray, n: int) -> np.ndarray:
        """Distinct left neighbours of each n-gram (from the unique (n+1)-grams); n-grams
        that start with the boundary, or are only ever seen after a marker, keep raw counts."""
        tails, cont = np.unique(higher & np.uint64((1 << (BITS * n)) - 1), return_counts=True)
        pos = np.minimum(np.searchsorted(tails, keys), max(len(tails) - 1, 0))
        found = (tails[pos] == keys) if len(tails) else np.zeros(len(keys), bool)
        starts_b = (keys >> np.uint64(BITS * (n - 1))) == B_CODE
        return np.where(found & ~starts_b, cont[pos] if len(tails) else 0, raw).astype(np.int64)

    # ------------------------------------------------------------------ queries

    def context_codes(self, contexts: list[str], bos: bool = False) -> np.ndarray:
        """``(B, N-1)`` left-padded codes of the last N-1 usable symbols of each context
        (cut after the last gap marker; ``bos`` prepends the document boundary)."""
        out = np.zeros((len(contexts), self.order - 1), dtype=np.uint8)
        for i, text in enumerate(contexts):
            c = encode(text)
            if bos:
                c = np.r_[np.uint8(B_CODE), c]
            marks = np.flatnonzero(is_marker(c))
            if len(marks):
                c = c[marks[-1] + 1 :]
            c = c[len(c) - (self.order - 1) :] if self.order > 1 else c[:0]
            if len(c):
                out[i, -len(c) :] = c
        return out

    def probs_codes(self, ctx: np.ndarray, nxt: np.ndarray | None = None) -> np.ndarray:
        """Probabilities of next symbols given ``(B, N-1)`` context codes.

        Args:
            ctx: left-padded context codes (0 = none; a context must not contain markers).
            nxt: ``(B, K)`` codes of the symbols wanted, or None for all ``V`` symbols.

        Returns:
            ``(B, K)`` (or ``(B, V)``) probabilities.

        Orders 1–3 come from a table precomputed for every context; each higher order looks up
        the rows' contexts by binary search, only among rows whose shorter context was found.
        """
        if nxt is not None and nxt.shape[1] <= 2:
            return self._probs_sparse(ctx, nxt.astype(np.uint64))
        p, first = self._dense_start(ctx)
        rows, prepared = None, self._prepare(ctx)
        for n in range(first, self.order + 1):
            t = self.tables[n - 1]
            rows, ci = self._find_contexts(t, prepared, n, rows)
            if len(rows) == 0:
                break
            p[rows] = self._interpolate(t, n, ci, p[rows])
        if nxt is None:
            return p[:, 1:]
        return np.take_along_axis(p, nxt.astype(np.int64), axis=1)

    @staticmethod
    def _prepare(ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Packed key of each whole context row and how many symbols end it without a PAD."""
        key = pack(ctx)
        known = np.argmax(np.flip(ctx == PAD, 1), axis=1)
        known = np.where(np.any(ctx == PAD, axis=1), known, ctx.shape[1])
        return key, known

    @staticmethod
    def _find_contexts(
        t: OrderTable, prepared: tuple[np.ndarray, np.ndarray], n: int, among: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows (only those in ``among``, if given) whose last ``n - 1`` symbols are a known
        context of order ``n``, and the contexts' indices in ``t.ctx``.

        Known contexts are suffix-closed (if ``hw`` is counted so is ``h[1:]w``, and pruning by
        raw count keeps it too), so a row unknown at order ``n`` is unknown above: callers pass
        the rows found at ``n - 1`` as ``among``.
        """
        key, known = prepared
        rows = np.arange(len(key)) if among is None else among
        if len(t.ctx) == 0:
            return rows[:0], rows[:0]
        if n == 1:
            return rows, np.zeros(len(rows), dtype=np.int64)
        ck = key[rows] & np.uint64((1 << (BITS * (n - 1))) - 1)  # the last n - 1 symbols
        ci = np.minimum(np.searchsorted(t.ctx, ck), len(t.ctx) - 1)
        hit = (known[rows] >= n - 1) & (t.ctx[ci] == ck)
        return rows[hit], ci[hit]

    def _dense_start(self, ctx: np.ndarray) -> tuple[np.ndarray, int]:
        """``(B, V+1)`` probabilities (column = code) up to the lowest orders, from a table
        precomputed for every context of up to :data:`_DENSE` - 1 symbols, and the next order."""
        k = min(_DENSE, self.order)
        if self._dense is None:
            grid = np.indices((2**BITS,) * (k - 1), dtype=np.uint8).reshape(k - 1, -1).T
            grid = np.concatenate([np.zeros((len(grid), self.order - k), np.uint8), grid], axis=1)
            self._dense = np.full((len(grid), self.V + 1), 1.0 / self.V)
            self._dense[:, PAD] = 0.0
            for n in range(1, k + 1):
                t = self.tables[n - 1]
                rows, ci = self._find_contexts(t, self._prepare(grid), n)
                self._dense[rows] = self._interpolate(t, n, ci, self._dense[rows])
        idx = pack(ctx[:, ctx.shape[1] - (k - 1) :]).astype(np.int64) if k > 1 else np.zeros(len(ctx), np.int64)
        return self._dense[idx], k + 1

    def _interpolate(self, t: OrderTable, n: int, ci: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """Order-``n`` probabilities ``(len(ci), V+1)`` of contexts ``ci`` over the lower-order
        ones. The n-grams of context ``ci`` are ``keys[ctx_start[ci]:ctx_start[ci + 1]]``;
        they are gathered into a dense count matrix."""
        lo, hi = t.ctx_start[ci], t.ctx_start[ci + 1]
        lens = hi - lo
        owner, pos = expand_ranges(lo, lens)
        cnt = np.zeros((len(ci), self.V + 1), dtype=np.int64)
        cnt[owner, (t.keys[pos] & np.uint64(2**BITS - 1)).astype(np.int64)] = t.counts[pos]
        mass = np.maximum(cnt - self.discounts[n - 1][np.minimum(cnt, 3)], 0.0) / t.ctx_total[ci][:, None]
        return mass + t.ctx_gamma[ci][:, None] * lower

    def _probs_sparse(self, ctx: np.ndarray, nxt: np.ndarray) -> np.ndarray:
        """:meth:`probs_codes` for a few symbols per row: binary search instead of gathering."""
        p, first = self._dense_start(ctx)
        p = np.take_along_axis(p, nxt.astype(np.int64), axis=1)
        rows, prepared = None, self._prepare(ctx)
        for n in range(first, self.order + 1):
            t = self.tables[n - 1]
            rows, ci = self._find_contexts(t, prepared, n, rows)
            if len(rows) == 0:
                break
            # Scan each context's block of n-grams (few at high orders) for the wanted symbols.
            lo, hi = t.ctx_start[ci], t.ctx_start[ci + 1]
            lens = hi - lo
            owner, pos = expand_ranges(lo, lens)
            sym = t.keys[pos] & np.uint64(2**BITS - 1)
            cnt = np.zeros((len(rows), nxt.shape[1]), dtype=np.int64)
            for j in range(nxt.shape[1]):
                hit = sym == nxt[rows[owner], j]
                cnt[owner[hit], j] = t.counts[pos[hit]]
            mass = np.maximum(cnt - self.discounts[n - 1][np.minimum(cnt, 3)], 0.0) / t.ctx_total[ci][:, None]
            p[rows] = mass + t.ctx_gamma[ci][:, None] * p[rows]
        return p

    def logprobs_next(self, contexts: list[str], bos: bool = False) -> np.ndarray:
        """``(B, V)`` log-probabilities (nats) of every symbol of :data:`SYMBOLS` following each
        context (column ``i`` is ``SYMBOLS[i]``)."""
        return np.log(self.probs_codes(self.context_codes(contexts, bos=bos)))

    def logprob(self, text: str, context: str = "", bos: bool = False) -> float:
        """Log-probability of ``text`` following ``context`` (chain rule; slow path, for tests)."""
        total = 0.0
        for i, ch in enumerate(text):
            lp = self.logprobs_next([context + text[:i]], bos=bos)[0]
            total += float(lp[SYMBOLS.index(ch)])
        return total

    # ------------------------------------------------------------------ files

    def save(self, path: str | Path) -> int:
        """Write one ``.npz`` (arrays + JSON metadata); returns the file size in bytes."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {"discounts": self.discounts}
        for n, t in enumerate(self.tables, start=1):
            arrays[f"keys{n}"] = t.keys
            arrays[f"counts{n}"] = t.counts
            arrays[f"ctx{n}"] = t.ctx
            arrays[f"ctx_total{n}"] = t.ctx_total.astype(np.uint32)
            arrays[f"ctx_gamma{n}"] = t.ctx_gamma.astype(np.float32)
        arrays["meta"] = np.frombuffer(json.dumps(self.meta, ensure_ascii=False).encode(), dtype=np.uint8)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(path)
        return path.stat().st_size

    @classmethod
    def load(cls, path: str | Path) -> NgramModel:
        """Read a file written by :meth:`save`.

        Raises:
            ValueError: another format, alphabet or normaliser.
        """
        with np.load(Path(path), allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if meta.get("format") != FORMAT or meta.get("symbols") != SYMBOLS or meta.get("normaliser") != NORMALISER:
                raise ValueError(f"{path}: not an {FORMAT} model for {NORMALISER} with this alphabet")
            order = meta["order"]
            tables = [
                OrderTable(
                    z[f"keys{n}"],
                    z[f"counts{n}"],
                    z[f"ctx{n}"],
                    z[f"ctx_total{n}"].astype(np.float64),
                    z[f"ctx_gamma{n}"].astype(np.float64),
                )
                for n in range(1, order + 1)
            ]
            return cls(order, tables, z["discounts"], meta)
