"""What a scholar sees: any gap filler's readings in edition form, flagged and calibrated.

    filler = Presented(load_raw_filler(), forms=default_forms(), calibration=Calibration.load(folder))
    filler.candidates(prefix, suffix, hint=7)   # display forms, unknown words, calibrated probs

Scoring is untouched: the wrapped filler ranks ``norm.v1`` readings; this layer adds
:attr:`Candidate.display` and :attr:`Candidate.unknown_words`, then (with a calibration)
demotes readings that leave an unknown word and calibrates the probabilities.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from apollo_restore.data.document import Document
from apollo_restore.data.orthography import EditionForms
from apollo_restore.fim.examples import Hint
from apollo_restore.restore.calibration import Calibration
from apollo_restore.restore.common import restore_text
from apollo_restore.restore.types import Candidate, Restoration


class Presented:
    """A gap filler whose candidates carry display forms and calibrated probabilities.

    Args:
        inner: any filler with ``candidates(prefix, suffix, hint, k)``; its other attributes
            (``name``, ``config``, ``neural``, ``score_readings`` ...) are passed through.
        forms: the edition-form table (``None``: no display forms, no unknown words).
        calibration: fitted calibration (``None``: the filler's probabilities unchanged).
    """

    def __init__(self, inner: Any, forms: EditionForms | None = None, calibration: Calibration | None = None):
        self.inner, self.forms, self.calibration = inner, forms, calibration

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def annotate(self, candidates: list[Candidate], prefix: str, suffix: str) -> list[Candidate]:
        """Candidates with ``display`` and ``unknown_words`` filled in (order unchanged)."""
        if self.forms is None:
            return candidates
        return [
            replace(
                c,
                display=self.forms.display(c.text, prefix, suffix),
                unknown_words=self.forms.unknown_words(c.text, prefix, suffix),
            )
            for c in candidates
        ]

    def candidates(self, prefix: str, suffix: str, hint: Hint = None, k: int | None = None) -> list[Candidate]:
        """The wrapped filler's candidates, annotated, then demoted and calibrated.

        With a calibration the filler is asked for as many readings as the calibration was
        fitted on (its probabilities are normalised over them), and the list cut to ``k`` after.
        """
        k = k or self.inner.config.k
        if self.calibration is None:
            return self.annotate(self.inner.candidates(prefix, suffix, hint, k), prefix, suffix)
        cands = self.annotate(self.inner.candidates(prefix, suffix, hint, max(k, self.calibration.k)), prefix, suffix)
        return self.calibration.apply(cands, hint)[:k]

    def restore(
        self,
        text: str | Document,
        hints: dict[int, Hint] | None = None,
        pins: dict[int, str] | None = None,
        k: int | None = None,
    ) -> Restoration:
        """Every lacuna of a Leiden text, left to right (see :func:`restore_text`)."""
        return restore_text(self, text, hints, pins, k or self.inner.config.k, self.inner.name)
