"""Fill one gap with the unbounded-order model: beam search over the middle's letters.

    from apollo_restore.restoration.members.infini import load_infini
    fwd, bwd = load_infini("forward"), load_infini("backward")   # the packaged text index
    fwd.candidates("ετους ", " αντωνινου καισαρος", Hint.exact(5))       # list[Candidate], best first

A middle ``m`` scores ``log P(m | prefix) + log P(suffix[:L] | prefix + m)`` (the backward model:
the same with the text read right to left, the suffix as context and the prefix as what must
follow), so middles of different lengths compete fairly. The model sees letters only
(σ-folded); the suffix is cut at its first gap marker, and an empty one scores the end of the
document.

Each step adds one letter to every beam, so all live beams hold the same letter count: at the
counts the hint allows, the ``close`` best beams of the step are closed (their suffix scored, all
steps' closings in one batch at the end). A reading is shown in the
spelling of its first occurrence in the training text (spaces, final sigma) when it has one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np

from apollo_restore.data.normalise import GREEK_LETTERS
from apollo_restore.data.textindex import SIGMA, TextIndex, stream_str
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.ngram.infini import BOUNDARY, InfiniGram, State
from apollo_restore.restoration.config import DEFAULT_RESTORE_CONFIG, RestoreConfig
from apollo_restore.restoration.ranking.pool import to_candidates
from apollo_restore.schema.folder import BACKWARD, InfiniOptions
from apollo_restore.schema.restoration import Candidate

# stream codes a middle may hold: the letters, ς excepted (folded to σ)
_LETTERS = np.array([i + 1 for i, ch in enumerate(GREEK_LETTERS) if ch != "ς"], dtype=np.uint8)


@dataclass(frozen=True)
class InfiniConfig:
    """This member's own search widths (``k`` and the longest reading are the shared
    :class:`~apollo_restore.restoration.config.RestoreConfig`'s).

    Attributes:
        beam: live beams kept after each step.
        suffix_chars: suffix letters scored after the middle.
        pool: finished middles kept.
        close: beams closed (suffix scored) per step, best first; more when fewer letter counts
            are allowed, so that the closings can fill the pool.
    """

    beam: int = 32
    suffix_chars: int = 16
    pool: int = 60
    close: int = 12


class InfiniMember:
    """Gap candidates and reading scores from an :class:`InfiniGram` (a
    :class:`~apollo_restore.restoration.restorer.Restorer`).

    Args:
        model: forward or backward (``model.reverse``) model.
        index: the text index, for the spelling of readings.
    """

    kind = "classical"  # an ensemble member whose scores are log-probabilities
    batches = False
    options = InfiniOptions  # what a model folder's entry of it may set
    in_words = "letter statistics of the training texts"  # what it is, for people (the model's label)

    def __init__(
        self,
        model: InfiniGram,
        index: TextIndex,
        config: InfiniConfig = InfiniConfig(),
        search: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    ):
        self.model, self.index, self.config, self.settings = model, index, config, search
        self.name = f"infini{BACKWARD}" if model.reverse else "infini"  # its label in the folder
        # the last search's finished middles: (prefix, suffix) and reading codes → score, so that
        # an ensemble re-scoring the union of candidates does not score these again (replaced
        # whole, read once: a score found under the gap's own context is right whatever thread
        # searched it)
        self._scored: tuple[tuple[str, str], dict[bytes, float]] = (("", ""), {})

    def _context(self, prefix: str, suffix: str) -> tuple[np.ndarray, np.ndarray]:
        """``(context, tail)`` codes in the model's direction: what comes before the middle
        (the document start if empty) and what must follow it (cut at its first marker, at
        most ``suffix_chars``; the document end if empty)."""
        before, after = (suffix, prefix) if self.model.reverse else (prefix, suffix)
        ctx = self.model.encode(before) if before else np.array([BOUNDARY], np.uint8)
        if not after:
            return ctx, np.array([BOUNDARY], np.uint8)
        tail = self.model.encode(after)
        marks = np.flatnonzero(tail >= 29)
        return ctx, tail[: min(self.config.suffix_chars, marks[0] if len(marks) else len(tail))]

    def search(self, prefix: str, suffix: str, hint: Hint = NO_HINT) -> list[tuple[np.ndarray, float]]:
        """Finished middles ``(codes in reading order, log_score)``, best first (up to ``pool``)."""
        cfg = self.config
        lo, hi = hint.letters(self.settings.max_letters)
        ctx, tail = self._context(prefix, suffix)
        state = self.model.start([ctx])
        hist = np.zeros((1, 0), dtype=np.uint8)
        score = np.zeros(1)
        # beams to close, collected step by step and scored with the tail in one batch at the end
        closing: list[tuple[State, list[np.ndarray], np.ndarray]] = []
        per_step = max(cfg.close, -(-cfg.pool // (hi - max(lo, 1) + 1)))  # enough to fill the pool

        def close(state: State, hist: np.ndarray, score: np.ndarray) -> None:
            rows = np.argsort(-score, kind="stable")[:per_step]
            closing.append((state.take(rows), list(hist[rows]), score[rows]))

        if lo == 0:
            close(state, hist, score)
        for step in range(hi):
            p, counts = self.model.distribution(state)
            flat = (score[:, None] + np.log(p[:, _LETTERS])).ravel()  # (B * M,)
            keep = min(cfg.beam, len(flat))
            top = np.argpartition(-flat, keep - 1)[:keep]
            rows, cols = np.divmod(top, len(_LETTERS))
            sym = _LETTERS[cols]
            state = self.model.advance(state.take(rows), counts[rows], sym)
            hist = np.concatenate([hist[rows], sym[:, None]], axis=1)
            score = flat[top]
            if step + 1 >= lo:
                close(state, hist, score)
        if not closing:
            return []
        states = State(np.concatenate([c[0].lo for c in closing]), np.concatenate([c[0].hi for c in closing]))
        middles = [m for c in closing for m in c[1]]
        total = np.concatenate([c[2] for c in closing])
        seqs = np.broadcast_to(tail, (len(middles), len(tail)))
        total = total + self.model.score(states, seqs, np.full(len(middles), len(tail)))
        order = np.argsort(-total, kind="stable")[: cfg.pool]
        self._scored = ((prefix, suffix), {middles[i].tobytes(): float(total[i]) for i in order})
        flip = -1 if self.model.reverse else 1
        return [(middles[i][::flip], float(total[i])) for i in order]

    def spell(self, codes: np.ndarray) -> str:
        """A reading's text: one occurrence in the training text (spaces, final sigma),
        else its letters (a final σ written ς)."""
        lo, hi = self.index.sa_range(codes.tobytes()) if len(codes) else (0, 0)
        if hi > lo:  # the first suffix-array row's occurrence (not all of them: "και" has 10⁵)
            p = int(self.index.sa[lo])
            return self.index.orig_text(self.index.orig_pos(p), self.index.orig_pos(p + len(codes) - 1) + 1)
        text = stream_str(codes.tobytes())
        return text[:-1] + "ς" if len(codes) and codes[-1] == SIGMA else text

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """Ranked readings for one gap (``norm.v1`` context; other gaps as ``-``/``…``).

        Returns:
            Up to ``k`` candidates, best first, probabilities normalised over the search's
            whole pool (so that they do not depend on ``k``).
        """
        k = k or self.settings.k
        return to_candidates([(self.spell(codes), s) for codes, s in self.search(prefix, suffix, hint)], k)

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """``log P(m | prefix) + log P(suffix[:L] | prefix + m)`` for each reading ``m`` (nats;
        the backward model reads right to left): the quantity :meth:`search` ranks by."""
        if not readings:
            return []
        codes = [self.model.encode(r) for r in readings]
        context, known = self._scored  # one read: another thread may replace it (a whole tuple) meanwhile
        known = known if context == (prefix, suffix) else {}
        scores = [known.get(c.tobytes()) for c in codes]
        todo = [i for i, s in enumerate(scores) if s is None]
        if todo:
            ctx, tail = self._context(prefix, suffix)
            seqs = [np.r_[codes[i], tail].astype(np.uint8) for i in todo]
            width = max(len(s) for s in seqs)
            seq = np.zeros((len(seqs), width), dtype=np.uint8)
            for j, s in enumerate(seqs):
                seq[j, : len(s)] = s
            start = self.model.start([ctx])
            state = State(np.repeat(start.lo, len(seqs), axis=0), np.repeat(start.hi, len(seqs), axis=0))
            for i, score in zip(todo, self.model.score(state, seq, np.array([len(s) for s in seqs])).tolist()):
                scores[i] = score
        return scores

    def language_model(self) -> None:
        """None: a count model, no neural language model to report bits per character for."""
        return None


def load_infini(
    direction: Literal["forward", "backward"],
    index: TextIndex | None = None,
    config: InfiniConfig = InfiniConfig(),
    search: RestoreConfig = DEFAULT_RESTORE_CONFIG,
    **options,
) -> InfiniMember:
    """The unbounded-order restorer over ``index`` (default: the packaged text index, built in the
    user cache on first use) in one direction.

    ``options`` are :class:`InfiniGram` arguments (``discount``, ``max_context``) or
    :class:`InfiniConfig` fields, which replace ``config``'s (so that a model folder's
    ``"infini"`` entry can set both).
    """
    index = index or TextIndex.shared()
    fields = {f.name for f in dataclasses.fields(InfiniConfig)}
    config = dataclasses.replace(config, **{k: v for k, v in options.items() if k in fields})
    model_options = {k: v for k, v in options.items() if k not in fields}
    model = (
        InfiniGram.forward(index, **model_options)
        if direction == "forward"
        else InfiniGram.backward(index, **model_options)
    )
    return InfiniMember(model, index, config, search)
