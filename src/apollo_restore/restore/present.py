"""What a scholar sees: any gap filler's readings in edition form, flagged and calibrated.

    filler = Presented(load_raw_filler(), forms=default_forms(), calibration=Calibration.load(folder))
    filler.candidates(prefix, suffix, Hint.exact(7))   # display forms, unknown words, calibrated probs

Scoring is untouched: the wrapped filler ranks ``norm.v1`` readings; this layer adds
:attr:`Candidate.display`, :attr:`Candidate.unknown_words` and :attr:`Candidate.notes` (why a
reading may be doubtful: :mod:`apollo_restore.restore.notes`), multiplies the probability of
doubtful readings by the factors of :class:`Demotions` — *truncated* readings (the gap's last word
is not a word the editions spell although the text after the gap starts a new word: ``τραπ``
before a space), readings that repeat the context next to the gap, readings that miss an exact
hint — renormalises and re-ranks, then (with a calibration) calibrates the probabilities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from apollo_restore.data.normalise import GREEK_LETTERS
from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.calibration import Calibration
from apollo_restore.restore.candidates import WHOLE_POOL
from apollo_restore.restore.config import RestoreConfig
from apollo_restore.restore.context import DEFAULT_WINDOW
from apollo_restore.restore.filler import GapFiller, LanguageModel, candidates_many
from apollo_restore.restore.notes import hint_note, notes_for, repeats
from apollo_restore.restore.types import Candidate

#: probability factor of a truncated reading (before calibration), chosen for Top-1 on ddb
#: validation gaps by ``benchmarks/truncation.py`` (BENCHMARKS.md, "Truncated readings")
TRUNCATED_FACTOR = 0.1
#: probability factors of a reading that repeats the context (:func:`~apollo_restore.restore.notes.repeats`)
#: and of one whose letters miss an exact hint, chosen for W.Top-1 on ddb validation gaps by
#: ``benchmarks/list_notes.py`` (BENCHMARKS.md, "Notes and demotions")
REPEAT_FACTOR = 0.3
HINT_MISS_FACTOR = 0.01
_LAST_WORD = re.compile(f"[{GREEK_LETTERS}]+$")


def is_truncated(candidate: Candidate, prefix: str, suffix: str) -> bool:
    """Whether the word a reading ends with (joined with the prefix's partial word when the
    reading has no separator) is one of its :attr:`~Candidate.unknown_words` while the suffix
    starts a new word (a space, ``·`` or the text's end)."""
    if not candidate.unknown_words or suffix[:1] not in ("", " ", "·"):
        return False
    left = _LAST_WORD.search(prefix)
    last = _LAST_WORD.search((left.group() if left else "") + candidate.text)
    return last is not None and last.group() in candidate.unknown_words


def doubts(candidate: Candidate, prefix: str, suffix: str, hint: Hint) -> tuple[bool, bool, bool]:
    """Whether an annotated reading is truncated (:func:`is_truncated`), repeats the context
    (:func:`~apollo_restore.restore.notes.repeats`), and misses an exact hint
    (:func:`~apollo_restore.restore.notes.hint_note`)."""
    missed = hint.is_exact and hint_note(candidate.text, hint, candidate.display) is not None
    return is_truncated(candidate, prefix, suffix), repeats(candidate.text, prefix, suffix) is not None, missed


@dataclass(frozen=True)
class Demotions:
    """Probability factors (before calibration) of the three :func:`doubts`; 1 leaves a kind alone."""

    truncated: float = TRUNCATED_FACTOR
    repeat: float = REPEAT_FACTOR
    hint_miss: float = HINT_MISS_FACTOR

    def factor(self, flags: tuple[bool, bool, bool]) -> float:
        """The product of the factors of the doubts ``flags`` (as :func:`doubts` gives them)."""
        return math.prod(f for f, on in zip((self.truncated, self.repeat, self.hint_miss), flags) if on)


def demote(candidates: list[Candidate], factors: list[float]) -> list[Candidate]:
    """Each reading's probability times its factor, renormalised over the list and re-ranked
    (stable); ``log_score`` unchanged. Factors all 1 change nothing."""
    if all(f == 1.0 for f in factors):
        return candidates
    probs = [c.prob * f for c, f in zip(candidates, factors)]
    total = sum(probs) or 1.0
    order = sorted(range(len(candidates)), key=lambda i: -probs[i])
    return [replace(candidates[i], prob=probs[i] / total) for i in order]


class Presented:
    """A gap filler whose candidates carry display forms and calibrated probabilities.

    Args:
        inner: the filler presented (the neural model or an ensemble: a :class:`GapFiller`
            with search settings ``config``); its name, settings, scores and language model
            are its own.
        forms: the edition-form table (``None``: no display forms, no unknown words).
        calibration: fitted calibration (``None``: the filler's probabilities unchanged).
        demotions: probability factors of doubtful readings (:func:`doubts`).
    """

    def __init__(
        self,
        inner: GapFiller,
        forms: EditionForms | None = None,
        calibration: Calibration | None = None,
        demotions: Demotions = Demotions(),
    ):
        self.inner, self.forms, self.calibration, self.demotions = inner, forms, calibration, demotions

    def around(self, wrap: Callable[[GapFiller], GapFiller]) -> Presented:
        """The same presentation of ``wrap(inner)`` (e.g. the inner filler with parallels'
        readings joining its pool)."""
        return Presented(wrap(self.inner), self.forms, self.calibration, self.demotions)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def config(self) -> RestoreConfig:
        return self.inner.config

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """The wrapped filler's scores (presentation changes no score)."""
        return self.inner.score_readings(prefix, suffix, hint, readings)

    def language_model(self) -> LanguageModel | None:
        return self.inner.language_model()

    def annotate(self, candidates: list[Candidate], prefix: str, suffix: str, hint: Hint = NO_HINT) -> list[Candidate]:
        """Candidates with ``display``, ``unknown_words`` (with edition forms) and ``notes``
        (:func:`~apollo_restore.restore.notes.notes_for`) filled in (order unchanged)."""
        if self.forms is not None:
            candidates = [
                replace(
                    c,
                    display=self.forms.display(c.text, prefix, suffix),
                    unknown_words=self.forms.unknown_words(c.text, prefix, suffix),
                )
                for c in candidates
            ]
        return [replace(c, notes=notes_for(c, prefix, suffix, hint)) for c in candidates]

    def present(self, pool: list[Candidate], prefix: str, suffix: str, hint: Hint) -> list[Candidate]:
        """A gap's whole ranked pool as shown: annotated, doubtful readings demoted, calibrated."""
        cands = self.annotate(pool, prefix, suffix, hint)
        cands = demote(cands, [self.demotions.factor(doubts(c, prefix, suffix, hint)) for c in cands])
        return cands if self.calibration is None else self.calibration.apply(cands, hint)

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The first ``k`` of the wrapped filler's whole ranked pool, annotated, doubtful
        readings demoted and calibrated (:meth:`present`): the pool does not depend on ``k``, nor do the
        probabilities (the calibration's "none of these" included) nor the ranking."""
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` of several gaps ``(prefix, suffix, hint)``, the wrapped filler
        searching them together where it can (:func:`~apollo_restore.restore.filler.candidates_many`).
        Each context is first cut to :data:`~apollo_restore.restore.context.DEFAULT_WINDOW`
        characters next to the gap, as :func:`~apollo_restore.restore.driver.restore_text` cuts
        it: a longer one costs more and changes nothing the model reads."""
        k = k or self.inner.config.k
        gaps = [(prefix[-DEFAULT_WINDOW:], suffix[:DEFAULT_WINDOW], hint) for prefix, suffix, hint in gaps]
        pools = candidates_many(self.inner, gaps, WHOLE_POOL)
        return [self.present(pool, prefix, suffix, hint)[:k] for (prefix, suffix, hint), pool in zip(gaps, pools)]
