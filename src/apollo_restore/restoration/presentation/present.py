"""What a scholar sees: any gap filler's readings in edition form, flagged and calibrated.

    filler = Presented(load_raw_filler(), forms=default_forms(), calibration=Calibration.load(folder))
    filler.candidates(prefix, suffix, Hint.exact(7))   # display forms, unknown words, calibrated probs

Scoring is untouched: the wrapped filler ranks ``norm.v1`` readings; this layer adds
:attr:`Candidate.display`, :attr:`Candidate.unknown_words` and :attr:`Candidate.notes` (why a
reading may be doubtful: :mod:`apollo_restore.restoration.presentation.notes`), multiplies the probability of
doubtful readings by the factors of :class:`Demotions` (the model folder's, or the defaults) —
*truncated* readings (the gap's last word is not a word the editions spell although the text after
the gap starts a new word: ``τραπ`` before a space), readings that repeat the context next to the
gap, readings that miss an exact hint, lowered further when a right-length reading the model rates
is in the list (:func:`hold_count`: an exact count holds the top) — renormalises and re-ranks, then
(with a calibration) calibrates the probabilities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from apollo_restore.data.normalise import GREEK_LETTERS
from apollo_restore.data.orthography import EditionForms
from apollo_restore.errors import RequestError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.context import DEFAULT_WINDOW
from apollo_restore.restoration.filler import GapFiller, LanguageModel, candidates_many
from apollo_restore.restoration.members.candidates import WHOLE_POOL
from apollo_restore.restoration.presentation.calibration import Calibration
from apollo_restore.restoration.presentation.notes import hint_note, notes_for, repeats
from apollo_restore.restoration.types import Candidate
from apollo_restore.schema.base import SchemaError, check, folder_error
from apollo_restore.schema.folder import Presentation

#: probability factors (before calibration) of a truncated reading, of one that repeats the context
#: (:func:`~apollo_restore.restoration.presentation.notes.repeats`) and of one whose letters miss an exact hint, used
#: when a model folder's ``apollo_restore.json`` has no ``presentation.demotions`` entry; a folder's
#: entry is fitted on validation gaps by ``apollo-restore tune --what demotions`` (docs/training.md)
TRUNCATED_FACTOR = 0.1
REPEAT_FACTOR = 0.3
HINT_MISS_FACTOR = 0.01
#: with an exact hint, readings that miss the count go below every right-length reading that leaves
#: no unknown word and holds at least this share of the right-length readings' probability
#: (:func:`hold_count`; ``None``: the hint-miss factor alone), chosen on ddb validation gaps with
#: right and wrong counts by ``benchmarks/exact_count.py`` (BENCHMARKS.md, "An exact count holds the top")
COUNT_FLOOR: float | None = 0.9
#: where the most probable reading that misses the count lands when held: this share of the least
#: probable rated right-length reading; far enough below that the calibration's penalty for an
#: unknown word (1.14 at slope 0.35 with an exact hint: a factor of about 0.04) cannot lift it back
HOLD_MARGIN = 0.01
#: ``apollo_restore.json``'s entry of presentation settings (``{"demotions": {...}}``)
PRESENTATION = "presentation"
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
    (:func:`~apollo_restore.restoration.presentation.notes.repeats`), and misses an exact hint
    (:func:`~apollo_restore.restoration.presentation.notes.hint_note`)."""
    missed = hint.is_exact and hint_note(candidate.text, hint, candidate.display) is not None
    return is_truncated(candidate, prefix, suffix), repeats(candidate.text, prefix, suffix) is not None, missed


@dataclass(frozen=True)
class Demotions:
    """Probability factors (before calibration) of the three :func:`doubts`; 1 leaves a kind alone.
    ``count_floor``: with an exact hint, the floor of :func:`hold_count` (``None``: factors alone)."""

    truncated: float = TRUNCATED_FACTOR
    repeat: float = REPEAT_FACTOR
    hint_miss: float = HINT_MISS_FACTOR
    count_floor: float | None = COUNT_FLOOR

    def factor(self, flags: tuple[bool, bool, bool]) -> float:
        """The product of the factors of the doubts ``flags`` (as :func:`doubts` gives them)."""
        return math.prod(f for f, on in zip((self.truncated, self.repeat, self.hint_miss), flags) if on)

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def of_folder(cls, meta: dict[str, Any], path: Path) -> Demotions:
        """The demotions of a model folder's metadata ``meta`` (read from ``path``, its
        ``apollo_restore.json``): ``presentation.demotions``
        (:class:`~apollo_restore.schema.folder.Demotions`), each factor missing there the default
        (:data:`TRUNCATED_FACTOR`, :data:`REPEAT_FACTOR`, :data:`HINT_MISS_FACTOR`,
        :data:`COUNT_FLOOR`; ``count_floor`` may be ``null``: no hold).

        Raises:
            ModelFolderError: what the schema refuses, naming the field (``E505``: a factor that
                is not a number in (0, 1]; ``E522``: a key it does not know).
        """
        try:
            declared = check(Presentation, meta.get(PRESENTATION, {}), PRESENTATION)
        except SchemaError as err:
            raise folder_error(path, err) from None
        return cls(**declared.demotions.model_dump(exclude_unset=True))


def hold_count(
    candidates: list[Candidate],
    factors: list[float],
    missed: list[bool],
    floor: float,
    of_count: bool = True,
    known: bool = True,
) -> list[float]:
    """``factors`` with those of the readings that miss an exact count (``missed``) lowered
    together (their order among themselves kept), so that the most probable of them (after its
    factor) lands at :data:`HOLD_MARGIN` times the least probable *rated* right-length reading.

    A right-length reading is rated when its probability ``prob`` is at least ``floor``: its share
    of the right-length readings' probability (``of_count``: how likely the model finds it if the
    count is right), or else its share of the whole pool. Unchanged when no right-length reading is
    rated or the misses already lie below: a count may be wrong, and the model's reading then leads.
    With ``known`` (the default), only readings that leave no unknown word are rated.
    """
    right = sum(c.prob for c, miss in zip(candidates, missed) if not miss) if of_count else 1.0
    held = [
        c.prob * f
        for c, f, miss in zip(candidates, factors, missed)
        if not miss and right > 0 and c.prob / right >= floor and not (known and c.unknown_words)
    ]
    misses = [c.prob * f for c, f, miss in zip(candidates, factors, missed) if miss]
    if not held or not misses or max(misses) <= 0 or max(misses) < HOLD_MARGIN * min(held):
        return factors
    scale = HOLD_MARGIN * min(held) / max(misses)
    return [f * scale if miss else f for f, miss in zip(factors, missed)]


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

    batches = True  # candidates_many: the wrapped filler searches the gaps together where it can

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
        (:func:`~apollo_restore.restoration.presentation.notes.notes_for`) filled in (order unchanged)."""
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
        """A gap's whole ranked pool as shown: annotated, doubtful readings demoted, calibrated.

        Raises:
            RequestError: ``E317`` a probability that is not a finite number (weights that overflow).
        """
        cands = self.annotate(pool, prefix, suffix, hint)
        flags = [doubts(c, prefix, suffix, hint) for c in cands]
        factors = [self.demotions.factor(f) for f in flags]
        if hint.is_exact and self.demotions.count_floor is not None:
            factors = hold_count(cands, factors, [f[2] for f in flags], self.demotions.count_floor)
        cands = demote(cands, factors)
        shown = cands if self.calibration is None else self.calibration.apply(cands, hint)
        bad = [c for c in shown if not math.isfinite(c.prob)]
        if bad:  # never NaN (invalid JSON) or null where a probability belongs, at any door
            raise RequestError("E317", shown=", ".join(f"{c.text} {c.prob}" for c in bad[:3]))
        return shown

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The first ``k`` of the wrapped filler's whole ranked pool, annotated, doubtful
        readings demoted and calibrated (:meth:`present`): the pool does not depend on ``k``, nor do the
        probabilities (the calibration's "none of these" included) nor the ranking."""
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` of several gaps ``(prefix, suffix, hint)``, the wrapped filler
        searching them together where it can (:func:`~apollo_restore.restoration.filler.candidates_many`).
        Each context is first cut to :data:`~apollo_restore.restoration.context.DEFAULT_WINDOW`
        characters next to the gap, as :func:`~apollo_restore.restoration.driver.restore_text` cuts
        it: a longer one costs more and changes nothing the model reads."""
        k = k or self.inner.config.k
        gaps = [(prefix[-DEFAULT_WINDOW:], suffix[:DEFAULT_WINDOW], hint) for prefix, suffix, hint in gaps]
        pools = candidates_many(self.inner, gaps, WHOLE_POOL)
        return [self.present(pool, prefix, suffix, hint)[:k] for (prefix, suffix, hint), pool in zip(gaps, pools)]
