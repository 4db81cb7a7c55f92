"""Stage 3 of the ranking (:mod:`apollo_restore.restoration.ranking`): the factors of doubtful readings.

    flags = [doubts(c, prefix, suffix, hint) for c in pool]   # (truncated, repeats, misses the hint)
    phi = Demotions().factors(pool, flags, hint)               # φ(r) of each reading, in pool order

A reading's probability is multiplied by the factors of its doubts — *truncated* readings (a
word at the gap's edge is not a word the editions spell: ``τραπ`` before a space, where the text
starts a new word, or ``παντοςτου`` where it says the word goes on, ``[.6]του``; ``χ`` after
a space at its start), readings that repeat the context next to the gap, readings that miss an
exact hint — the misses lowered further when a right-length reading the model rates is in the
list (:func:`hold_count`: an exact count holds the top). This module computes the numbers only;
:class:`~apollo_restore.restoration.ranking.Ranking` applies them and orders the readings.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from apollo_restore.data.normalise import GREEK_LETTERS
from apollo_restore.hint import Hint
from apollo_restore.restoration.presentation.notes import hint_note, repeats
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
_WORD = re.compile(f"[{GREEK_LETTERS}]+")

#: A reading's doubts: truncated, repeats the context, misses an exact hint (:func:`doubts`).
Doubts = tuple[bool, bool, bool]


def is_truncated(candidate: Candidate, prefix: str, suffix: str) -> bool:
    """Whether a word the reading makes at an edge of the gap is one of its
    :attr:`~Candidate.unknown_words`: the word it ends with, joined with the prefix's partial word
    when the reading has no separator and with the suffix's partial word when the text goes on
    with letters (the word runs across the edge: ``[.6]του``), else ending where the suffix starts
    a new word (``τραπ`` before a space); and likewise the word it begins with. A reading that
    contradicts the word boundary the text gives at the gap's edge makes such a word."""
    if not candidate.unknown_words:
        return False
    left, right = _LAST_WORD.search(prefix), _WORD.match(suffix)
    words = _WORD.findall((left.group() if left else "") + candidate.text + (right.group() if right else ""))
    return bool(words) and (words[0] in candidate.unknown_words or words[-1] in candidate.unknown_words)


def doubts(candidate: Candidate, prefix: str, suffix: str, hint: Hint) -> Doubts:
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

    def factor(self, flags: Doubts) -> float:
        """The product of the factors of the doubts ``flags`` (as :func:`doubts` gives them)."""
        return math.prod(f for f, on in zip((self.truncated, self.repeat, self.hint_miss), flags) if on)

    def factors(self, pool: list[Candidate], flags: list[Doubts], hint: Hint) -> list[float]:
        """φ of each reading of an annotated ``pool`` (in its order; ``prob``: its ``q``) whose
        doubts are ``flags``: the product of its doubts' factors, and with an exact hint the
        misses held below the rated right-length readings (:func:`hold_count`, unless
        ``count_floor`` is ``None``)."""
        phi = [self.factor(f) for f in flags]
        if hint.is_exact and self.count_floor is not None:
            phi = hold_count(pool, phi, [f[2] for f in flags], self.count_floor)
        return phi

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def of_folder(cls, meta: dict[str, Any], path: Path) -> Demotions:
        """The demotions of a model folder's metadata ``meta`` (read from ``path``, its
        ``apollo_restore.json``): ``presentation.demotions``
        (:class:`~apollo_restore.schema.folder.Demotions`), each factor missing there the default
        (:data:`TRUNCATED_FACTOR`, :data:`REPEAT_FACTOR`, :data:`HINT_MISS_FACTOR`,
        :data:`COUNT_FLOOR`; ``count_floor`` may be ``null``: no hold; ``presentation`` ``null``
        or absent: every default).

        Raises:
            ModelFolderError: what the schema refuses, naming the field (``E505``: a factor that
                is not a number in (0, 1]; ``E522``: a key it does not know).
        """
        try:
            declared = check(Presentation, meta.get(PRESENTATION) or {}, PRESENTATION)  # null: the defaults
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
