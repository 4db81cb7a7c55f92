"""Stage 3 of the ranking (:mod:`apollo_restore.restoration.ranking`): the factors of doubtful readings.

    flags = [doubts(c, prefix, suffix, hint) for c in pool]   # (truncated, repeats, misses the hint)
    phi = Demotions().factors(pool, flags, hint)               # φ(r) of each reading, in pool order

A reading's probability is multiplied by the factors of its doubts
(:mod:`~apollo_restore.restoration.ranking.doubts`: *truncated* readings, readings that repeat
the context next to the gap, readings that miss an exact hint) — the misses lowered further when
a right-length reading the model rates is in the list (:func:`hold_count`: an exact count holds
the top). The factors, their bounds and defaults are declared once, in
:class:`apollo_restore.schema.folder.Demotions` (``presentation.demotions`` of a model folder);
this module computes the numbers only; :class:`~apollo_restore.restoration.ranking.order.Ranking`
applies them and orders the readings.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from apollo_restore.hint import Hint
from apollo_restore.restoration.ranking.doubts import Doubts
from apollo_restore.schema import folder
from apollo_restore.schema.base import SchemaError, check, folder_error
from apollo_restore.schema.folder import Presentation
from apollo_restore.schema.restoration import Candidate

#: where the most probable reading that misses the count lands when held: this share of the least
#: probable rated right-length reading; far enough below that the calibration's penalty for an
#: unknown word (1.14 at slope 0.35 with an exact hint: a factor of about 0.04) cannot lift it back
HOLD_MARGIN = 0.01
#: ``apollo_restore.json``'s entry of presentation settings (``{"demotions": {...}}``)
PRESENTATION = "presentation"


class Demotions(folder.Demotions):
    """The factors of :class:`apollo_restore.schema.folder.Demotions` (their bounds and defaults
    declared there, once) applied: probability factors (before calibration) of the three
    :func:`~apollo_restore.restoration.ranking.doubts.doubts`; 1 leaves a kind alone.
    ``count_floor``: with an exact hint, the floor of :func:`hold_count` (``None``: factors alone)."""

    def factor(self, flags: Doubts) -> float:
        """The product of the factors of the doubts ``flags`` (as ``doubts`` gives them)."""
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

    def to_json(self) -> dict[str, float | None]:
        """``presentation.demotions`` as a model folder records it (every factor)."""
        return self.model_dump()

    @classmethod
    def of_folder(cls, meta: dict[str, Any], path: Path) -> Demotions:
        """The demotions of a model folder's metadata ``meta`` (read from ``path``, its
        ``apollo_restore.json``): ``presentation.demotions``
        (:class:`~apollo_restore.schema.folder.Demotions`), each factor missing there the default
        (:data:`~apollo_restore.schema.folder.TRUNCATED_FACTOR`, ``REPEAT_FACTOR``,
        ``HINT_MISS_FACTOR``, ``COUNT_FLOOR``; ``count_floor`` may be ``null``: no hold;
        ``presentation`` ``null`` or absent: every default).

        Raises:
            ModelFolderError: what the schema refuses, naming the field (``E505``: a factor that
                is not a number in (0, 1]; ``E522``: a key it does not know).
        """
        try:
            declared = check(Presentation, meta.get(PRESENTATION) or {}, PRESENTATION)  # null: the defaults
        except SchemaError as err:
            raise folder_error(path, err) from None
        return cls(**declared.demotions.model_dump())


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
