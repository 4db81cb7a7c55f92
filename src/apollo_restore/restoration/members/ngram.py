"""Fill one gap with an n-gram model: beam search over the middle, scored fill-in-the-middle style.

    from apollo_restore.restoration.members.ngram import NgramRestorer
    r = NgramRestorer.load("ddb-8.npz")
    r.candidates("ετους ", " αντωνινου καισαρος", Hint.exact(5))   # list[Candidate], best first

A middle ``m`` scores ``log P(m | prefix) + log P(suffix[:L] | prefix + m)``: the joint
probability of ``prefix + m + suffix[:L]`` up to a constant, so middles of different lengths
compete fairly when there is no hint. With ``L = order - 1`` this ranks exactly like the whole
suffix (later suffix letters see no letter of ``m``); the suffix is cut at its first gap marker,
and an empty suffix scores the end of the document. An empty prefix starts at the document start.

The middle holds letters, spaces and ``·`` (never a gap marker, never two separators in a row,
no separator against a separator of the context). Its letter count obeys the hint: exactly
``n``, within ``(lo, hi)``, or 1..``max_letters`` with none. Beams advance one character a step;
all live beams are scored by one vectorised model call per step, and every beam whose letter
count fits is also closed (suffix scored) into a pool of finished middles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from apollo_restore.data.normalise import GREEK_LETTERS, MIDDLE_DOT
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.ngram.model import B_CODE, PAD, SYMBOLS, NgramModel, encode, is_marker, pack
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restoration.ranking.pool import merge_equivalent, to_candidates
from apollo_restore.schema.folder import NgramOptions
from apollo_restore.schema.restoration import Candidate

_LETTERS = encode(GREEK_LETTERS)
_SEPS = encode(" " + MIDDLE_DOT)
_MIDDLE = np.r_[_LETTERS, _SEPS]  # the symbols a middle may hold
_IS_SEP = np.r_[np.zeros(len(_LETTERS), bool), np.ones(len(_SEPS), bool)]


@dataclass(frozen=True)
class FillConfig:
    """This member's own search widths (``k`` and the longest reading are the shared
    :class:`~apollo_restore.restoration.config.RestoreConfig`'s).

    Attributes:
        beam: live beams kept after each step.
        suffix_chars: suffix characters scored after the middle (None: order - 1, which ranks
            exactly like the whole suffix).
        pool: finished middles kept before merging equivalent spellings; a live beam scoring
            below the pool-th best finished middle is dropped (its extensions only score lower).
    """

    beam: int = 128
    suffix_chars: int | None = None
    pool: int = 100


def _cut_at_markers(ctx: np.ndarray) -> np.ndarray:
    """Blank (PAD) every context position at or before the last gap marker of its row."""
    marks = is_marker(ctx)
    if not marks.any():
        return ctx
    before = np.flip(np.cumsum(np.flip(marks, 1), 1), 1) > 0
    return np.where(before, PAD, ctx).astype(ctx.dtype)


class NgramRestorer:
    """Gap candidates from an :class:`NgramModel` (same interface as
    :meth:`apollo_restore.restoration.members.neural.NeuralMember.candidates`)."""

    kind = "classical"  # an ensemble member whose scores are log-probabilities
    batches = False
    options = NgramOptions  # what a model folder's entry of it may set
    in_words = "letter statistics of the training texts"  # what it is, for people (the model's label)

    def __init__(
        self,
        model: NgramModel,
        config: FillConfig = FillConfig(),
        name: str = "ngram",
        search: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    ):
        self.model, self.config, self.name, self.settings = model, config, name, search
        self.n_ctx = model.order - 1
        self.L = config.suffix_chars if config.suffix_chars is not None else max(1, self.n_ctx)

    @classmethod
    def load(
        cls, path: str | Path, config: FillConfig = FillConfig(), search: RestoreConfig = DEFAULT_RESTORE_CONFIG
    ) -> NgramRestorer:
        return cls(NgramModel.load(path), config, name=Path(path).stem, search=search)

    # ------------------------------------------------------------------ context

    def _prefix_ctx(self, prefix: str) -> np.ndarray:
        """``(N-1,)`` codes ending the prefix (the document start if the prefix is empty)."""
        return self.model.context_codes([prefix], bos=not prefix)[0]

    def _suffix_codes(self, suffix: str) -> np.ndarray:
        """Suffix codes to score: up to the first gap marker, at most ``L``; an empty suffix
        is the end of the document."""
        s = encode(suffix)
        if len(s) == 0:
            return np.array([B_CODE], dtype=np.uint8)
        marks = np.flatnonzero(is_marker(s))
        return s[: min(self.L, marks[0] if len(marks) else len(s))]

    def _seq_logprob(
        self, ctx: np.ndarray, seq: np.ndarray, lengths: np.ndarray | None = None, cache: _Cache | None = None
    ) -> np.ndarray:
        """Log-probability of each row's symbols ``seq[r, :lengths[r]]`` after context ``ctx[r]``.

        Args:
            ctx: ``(R, N-1)`` context codes.
            seq: ``(R, T)`` codes (PAD past each row's length).
            lengths: ``(R,)`` (default: all ``T``).
            cache: probabilities of (context, symbol) events already computed.

        Returns:
            ``(R,)`` sums of log-probabilities.
        """
        r, t = seq.shape
        if t == 0:
            return np.zeros(r)
        full = np.concatenate([ctx, seq], axis=1)  # (R, N-1+T)
        if self.n_ctx:
            win = np.lib.stride_tricks.sliding_window_view(full, self.n_ctx, axis=1)[:, :t]  # (R, T, N-1)
        else:
            win = np.zeros((r, t, 0), dtype=np.uint8)
        win = _cut_at_markers(win.reshape(r * t, self.n_ctx))
        # Beams share most suffix contexts: query each distinct (context, symbol) once, and
        # only those not already in the cache (kept across the steps of one search).
        events = pack(np.concatenate([win, seq.reshape(r * t, 1)], axis=1))
        uniq, first, inverse = np.unique(events, return_index=True, return_inverse=True)
        probs = np.empty(len(uniq))
        known = np.zeros(len(uniq), dtype=bool)
        if cache is not None and len(cache.keys):
            at = np.minimum(np.searchsorted(cache.keys, uniq), len(cache.keys) - 1)
            known = cache.keys[at] == uniq
            probs[known] = cache.values[at[known]]
        todo = first[~known]
        probs[~known] = self.model.probs_codes(win[todo], seq.reshape(r * t, 1)[todo])[:, 0]
        if cache is not None and len(todo):
            cache.add(uniq[~known], probs[~known])
        p = probs[inverse].reshape(r, t)
        with np.errstate(divide="ignore"):  # PAD past a row's end has probability 0
            lp = np.log(p)
        if lengths is not None:
            lp = np.where(np.arange(t)[None, :] < lengths[:, None], lp, 0.0)
        return lp.sum(axis=1)

    # ------------------------------------------------------------------ search

    def search(self, prefix: str, suffix: str, hint: Hint = NO_HINT) -> list[tuple[str, float]]:
        """Finished middles ``(text, log_score)``, best first (up to ``config.pool``, unmerged)."""
        cfg = self.config
        lo, hi = hint.letters(self.settings.max_letters)
        ctx0 = self._prefix_ctx(prefix)
        sfx = self._suffix_codes(suffix)
        prefix_sep = len(prefix) > 0 and prefix[-1] in " " + MIDDLE_DOT
        suffix_sep = len(suffix) > 0 and suffix[0] in " " + MIDDLE_DOT
        max_steps = hi + (hi + 1) // 2 + 2  # letters and the separators between words

        ctx = ctx0[None, :].copy()  # (B, N-1)
        hist = np.zeros((1, 0), dtype=np.uint8)  # (B, t) middle so far
        score = np.zeros(1)
        letters = np.zeros(1, dtype=np.int64)
        last_sep = np.array([prefix_sep])
        pool_text: list[np.ndarray] = []
        pool_score: list[np.ndarray] = []

        cache = _Cache()
        bound = -np.inf  # score of the pool-th best finished middle: nothing below can enter

        def close(rows: np.ndarray) -> None:
            nonlocal bound
            rows = rows[score[rows] > bound]
            if len(rows) == 0:
                return
            seq = np.broadcast_to(sfx, (len(rows), len(sfx)))
            total = score[rows] + self._seq_logprob(ctx[rows], np.ascontiguousarray(seq), cache=cache)
            pool_text.extend(hist[rows])
            pool_score.append(total)
            if sum(len(x) for x in pool_score) >= cfg.pool:
                bound = np.partition(np.concatenate(pool_score), -cfg.pool)[-cfg.pool]

        if lo == 0:
            close(np.array([0]))
        for _ in range(max_steps):
            p = self.model.probs_codes(ctx, np.broadcast_to(_MIDDLE, (len(ctx), len(_MIDDLE))))
            cand = score[:, None] + np.log(p)  # (B, K)
            ok = np.ones_like(cand, dtype=bool)
            ok[:, _IS_SEP] &= ~last_sep[:, None]
            ok[:, ~_IS_SEP] &= (letters < hi)[:, None]
            # Scores only fall as a middle grows, so a beam already below the bound is dead.
            cand = np.where(ok & (cand > bound), cand, -np.inf)
            flat = cand.ravel()
            live = int(np.isfinite(flat).sum())
            if live == 0:
                break
            keep = min(cfg.beam, live)
            top = np.argpartition(-flat, keep - 1)[:keep] if keep < len(flat) else np.arange(len(flat))
            top = top[np.isfinite(flat[top])]
            rows, cols = np.divmod(top, len(_MIDDLE))
            sym = _MIDDLE[cols].astype(np.uint8)
            ctx = np.concatenate([ctx[rows, 1:], sym[:, None]], axis=1) if self.n_ctx else ctx[rows]
            hist = np.concatenate([hist[rows], sym[:, None]], axis=1)
            score = flat[top]
            letters = letters[rows] + ~_IS_SEP[cols]
            last_sep = _IS_SEP[cols]
            done = (letters >= lo) & (letters <= hi) & ~(last_sep & (suffix_sep | (len(suffix) == 0)))
            close(np.flatnonzero(done))
        if not pool_score:
            return []
        scores = np.concatenate(pool_score)
        order = np.argsort(-scores, kind="stable")[: cfg.pool]
        return [(_decode(pool_text[i]), float(scores[i])) for i in order]

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap (``norm.v1`` context; other gaps as ``-``/``…``).

        Returns:
            Up to ``k`` candidates, best first, equivalent spellings merged, probabilities
            normalised over the search's whole pool (so that they do not depend on ``k``).
        """
        k = k or self.settings.k
        readings = merge_equivalent([(text.strip(), s) for text, s in self.search(prefix, suffix, hint)])
        return to_candidates(readings, k)

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``log P(m | prefix) + log P(suffix[:L] | prefix + m)`` for each reading ``m`` (nats),
        the quantity :meth:`search` ranks by. ``hint`` is not used (the model cannot see it)."""
        if not readings:
            return []
        ctx0 = self._prefix_ctx(prefix)
        sfx = self._suffix_codes(suffix)
        seqs = [np.r_[encode(r), sfx].astype(np.uint8) for r in readings]
        width = max(len(s) for s in seqs)
        seq = np.zeros((len(seqs), width), dtype=np.uint8)
        for i, s in enumerate(seqs):
            seq[i, : len(s)] = s
        lengths = np.array([len(s) for s in seqs])
        ctx = np.broadcast_to(ctx0, (len(seqs), len(ctx0)))
        return [float(x) for x in self._seq_logprob(np.ascontiguousarray(ctx), seq, lengths)]

    def language_model(self) -> None:
        """None: a count model, no neural language model to report bits per character for."""
        return None


class _Cache:
    """Probabilities of packed (context, symbol) events: sorted keys and their values."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.uint64)
        self.values = np.zeros(0)

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Add new keys (sorted, none present yet)."""
        at = np.searchsorted(self.keys, keys)
        self.keys, self.values = np.insert(self.keys, at, keys), np.insert(self.values, at, values)


def _decode(codes: np.ndarray) -> str:
    return "".join(SYMBOLS[c - 1] for c in codes)


class ReversedRestorer:
    """A right-to-left n-gram model as a restorer: the gap is filled from its right edge,
    the suffix read backwards as the context and the prefix as what must follow. Combined
    with the forward model, each side of the gap gets a full n-gram context."""

    kind = "classical"
    batches = False

    def __init__(self, restorer: NgramRestorer):
        self.restorer, self.name = restorer, restorer.name

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        cands = self.restorer.candidates(suffix[::-1], prefix[::-1], hint, k)
        for cand in cands:
            cand.text = cand.text[::-1]
        return cands

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        return self.restorer.score_readings(suffix[::-1], prefix[::-1], hint, [r[::-1] for r in readings])

    def language_model(self) -> None:
        """None: a count model, no neural language model to report bits per character for."""
        return None


def load_ngram(
    path: str | Path, config: FillConfig = FillConfig(), search: RestoreConfig = DEFAULT_RESTORE_CONFIG
) -> NgramRestorer | ReversedRestorer:
    """The restorer of an n-gram file: forward, or wrapped in :class:`ReversedRestorer` when
    it was counted right to left."""
    restorer = NgramRestorer.load(path, config, search)
    return ReversedRestorer(restorer) if restorer.model.meta.get("direction") == "backward" else restorer
