"""What a scholar sees: any restorer's readings in edition form, annotated, in the ranking's order.

    shown = Presented(load_restorer(present=False), forms=default_forms(), ranking=Ranking(demotions, calibration))
    shown.candidates(prefix, suffix, Hint.exact(7))   # display forms, unknown words, notes, shown probs

This layer presents and never orders: the wrapped restorer ranks ``norm.v1`` readings (stages 1–2 of
:mod:`apollo_restore.restoration.ranking`); it adds :attr:`Candidate.display`,
:attr:`Candidate.unknown_words` and :attr:`Candidate.notes` (why a reading may be doubtful:
:mod:`apollo_restore.restoration.presentation.notes`) — :func:`annotate` — then hands the annotated
pool to its :class:`~apollo_restore.restoration.ranking.order.Ranking` (stages 3–4: doubtful readings
demoted, probabilities calibrated, the one order), checks that every probability shown is a
number, and cuts the list to ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from apollo_restore.data.orthography import EditionForms
from apollo_restore.errors import RequestError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.context import DEFAULT_WINDOW
from apollo_restore.restoration.presentation.notes import notes_for
from apollo_restore.restoration.ranking.order import DEFAULT_RANKING, Ranking
from apollo_restore.restoration.ranking.pool import WHOLE_POOL
from apollo_restore.restoration.restorer import LanguageModel, Restorer, candidates_many
from apollo_restore.schema.restoration import Candidate


def annotate(
    candidates: list[Candidate], forms: EditionForms | None, prefix: str, suffix: str, hint: Hint = NO_HINT
) -> list[Candidate]:
    """Candidates with ``display``, ``unknown_words`` (with edition ``forms``) and ``notes``
    (:func:`~apollo_restore.restoration.presentation.notes.notes_for`) filled in (order unchanged)."""
    if forms is not None:
        candidates = [
            c.replace(
                display=forms.display(c.text, prefix, suffix),
                unknown_words=forms.unknown_words(c.text, prefix, suffix),
            )
            for c in candidates
        ]
    return [c.replace(notes=notes_for(c, prefix, suffix, hint)) for c in candidates]


class Presented:
    """A restorer whose candidates carry display forms and notes, in its ranking's order.

    Args:
        restorer: the restorer presented (the neural model or an ensemble: a :class:`Restorer`
            with search settings ``config``); its name, settings, scores and language model
            are its own.
        forms: the edition-form table (``None``: no display forms, no unknown words).
        ranking: the ranking's stages 3–4 (the folder's demotions and calibration; default: the
            default demotions, no calibration).
        fingerprint: the model folder's (:func:`~apollo_restore.model.folder.fingerprint`), named
            in every restoration and export (``None``: a restorer of no folder).
    """

    batches = True  # candidates_many: the wrapped restorer searches the gaps together where it can

    def __init__(
        self,
        restorer: Restorer,
        forms: EditionForms | None = None,
        ranking: Ranking = DEFAULT_RANKING,
        fingerprint: str | None = None,
    ):
        self.restorer, self.forms, self.ranking, self.fingerprint = restorer, forms, ranking, fingerprint

    def around(self, wrap: Callable[[Restorer], Restorer]) -> Presented:
        """The same presentation of ``wrap(restorer)`` (e.g. the presented restorer with parallels'
        readings joining its pool)."""
        return Presented(wrap(self.restorer), self.forms, self.ranking, self.fingerprint)

    def for_gap_kind(self, kind: str) -> Presented:
        """The same restorer presenting gaps of ``kind`` (``"real"``, the default, or
        ``"synthetic"``): probabilities calibrated with that kind's parameters."""
        return Presented(self.restorer, self.forms, replace(self.ranking, kind=kind), self.fingerprint)

    def for_text_kind(self, text: str) -> Presented:
        """The same restorer presenting the real lacunae of a text of kind ``text``
        (``documentary``, ``literary``, ``inscription``): calibrated with that kind's parameters
        where the folder's calibration has them."""
        return Presented(self.restorer, self.forms, replace(self.ranking, text=text), self.fingerprint)

    @property
    def text_kinds(self) -> bool:
        """Whether the calibration has parameters of its own for some kind of text (then a text's
        kind is worth reading)."""
        return self.ranking.calibration is not None and bool(self.ranking.calibration.texts)

    @property
    def name(self) -> str:
        return self.restorer.name

    @property
    def config(self) -> RestoreConfig:
        return self.restorer.config

    def score_readings(self, prefix: str, suffix: str, hint: Hint, readings: list[str]) -> list[float]:
        """The wrapped restorer's scores (presentation changes no score)."""
        return self.restorer.score_readings(prefix, suffix, hint, readings)

    def language_model(self) -> LanguageModel | None:
        return self.restorer.language_model()

    def present(self, pool: list[Candidate], prefix: str, suffix: str, hint: Hint) -> list[Candidate]:
        """A gap's whole ranked pool as shown: annotated (:func:`annotate`), then in the order and
        with the probabilities of :meth:`Ranking.rank <apollo_restore.restoration.ranking.order.Ranking.rank>`.

        Raises:
            RequestError: ``E317`` a probability that is not a finite number (weights that overflow).
        """
        shown = self.ranking.rank(annotate(pool, self.forms, prefix, suffix, hint), prefix, suffix, hint)
        bad = [c for c in shown if not math.isfinite(c.prob)]
        if bad:  # never NaN (invalid JSON) or null where a probability belongs, at any door
            raise RequestError("E317", shown=", ".join(f"{c.text} {c.prob}" for c in bad[:3]))
        return shown

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The first ``k`` of the wrapped restorer's whole ranked pool as shown (:meth:`present`):
        the pool does not depend on ``k``, nor do the probabilities (the calibration's "none of
        these" included) nor the order."""
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` of several gaps ``(prefix, suffix, hint)``, the wrapped restorer
        searching them together where it can (:func:`~apollo_restore.restoration.restorer.candidates_many`).
        Each context is first cut to :data:`~apollo_restore.restoration.context.DEFAULT_WINDOW`
        characters next to the gap, as :func:`~apollo_restore.restoration.driver.restore_text` cuts
        it: a longer one costs more and changes nothing the model reads."""
        k = k or self.restorer.config.k
        gaps = [(prefix[-DEFAULT_WINDOW:], suffix[:DEFAULT_WINDOW], hint) for prefix, suffix, hint in gaps]
        pools = candidates_many(self.restorer, gaps, WHOLE_POOL)
        return [self.present(pool, prefix, suffix, hint)[:k] for (prefix, suffix, hint), pool in zip(gaps, pools)]
