"""What a scholar sees: any gap filler's readings in edition form, flagged and calibrated.

    filler = Presented(load_raw_filler(), forms=default_forms(), calibration=Calibration.load(folder))
    filler.candidates(prefix, suffix, Hint.exact(7))   # display forms, unknown words, calibrated probs

Scoring is untouched: the wrapped filler ranks ``norm.v1`` readings; this layer adds
:attr:`Candidate.display` and :attr:`Candidate.unknown_words`, then (with a calibration)
demotes readings that leave an unknown word and calibrates the probabilities.
"""

from __future__ import annotations

from dataclasses import replace

from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.calibration import Calibration
from apollo_restore.restore.config import RestoreConfig
from apollo_restore.restore.filler import GapFiller, LanguageModel
from apollo_restore.restore.types import Candidate


class Presented:
    """A gap filler whose candidates carry display forms and calibrated probabilities.

    Args:
        inner: the filler presented (the neural model or an ensemble: a :class:`GapFiller`
            with search settings ``config``); its name, settings, scores and language model
            are its own.
        forms: the edition-form table (``None``: no display forms, no unknown words).
        calibration: fitted calibration (``None``: the filler's probabilities unchanged).
    """

    def __init__(self, inner: GapFiller, forms: EditionForms | None = None, calibration: Calibration | None = None):
        self.inner, self.forms, self.calibration = inner, forms, calibration

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

    def candidates(self, prefix: str, suffix: str, hint: Hint = NO_HINT, k: int | None = None) -> list[Candidate]:
        """The wrapped filler's candidates, annotated, then demoted and calibrated.

        With a calibration the filler is asked for as many readings as the calibration was
        fitted on (its probabilities are normalised over them), and the list cut to ``k`` after.
        """
        k = k or self.inner.config.k
        if self.calibration is None:
            return self.annotate(self.inner.candidates(prefix, suffix, hint, k), prefix, suffix)
        cands = self.annotate(self.inner.candidates(prefix, suffix, hint, max(k, self.calibration.k)), prefix, suffix)
        return self.calibration.apply(cands, hint)[:k]
