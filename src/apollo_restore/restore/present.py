"""What a scholar sees: any gap filler's readings in edition form, flagged and calibrated.

    filler = Presented(load_raw_filler(), forms=default_forms(), calibration=Calibration.load(folder))
    filler.candidates(prefix, suffix, Hint.exact(7))   # display forms, unknown words, calibrated probs

Scoring is untouched: the wrapped filler ranks ``norm.v1`` readings; this layer adds
:attr:`Candidate.display` and :attr:`Candidate.unknown_words`, demotes *truncated* readings
(the gap's last word is not a word the editions spell although the text after the gap starts a
new word: ``τραπ`` before a space) by :data:`TRUNCATED_FACTOR`, then (with a calibration)
calibrates the probabilities.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from apollo_restore.data.normalise import GREEK_LETTERS
from apollo_restore.data.orthography import EditionForms
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restore.calibration import Calibration
from apollo_restore.restore.candidates import WHOLE_POOL
from apollo_restore.restore.config import RestoreConfig
from apollo_restore.restore.filler import GapFiller, LanguageModel, candidates_many
from apollo_restore.restore.types import Candidate

#: probability factor of a truncated reading (before calibration), chosen for Top-1 on ddb
#: validation gaps by ``benchmarks/truncation.py`` (BENCHMARKS.md, "Truncated readings")
TRUNCATED_FACTOR = 0.1
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


def demote_truncated(candidates: list[Candidate], prefix: str, suffix: str, factor: float) -> list[Candidate]:
    """Truncated readings' probabilities times ``factor``, renormalised over the list and
    re-ranked (stable); ``log_score`` unchanged. A factor of 1 changes nothing."""
    if factor == 1.0 or not candidates:
        return candidates
    probs = [c.prob * (factor if is_truncated(c, prefix, suffix) else 1.0) for c in candidates]
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
        truncated_factor: probability factor of truncated readings (:func:`is_truncated`).
    """

    def __init__(
        self,
        inner: GapFiller,
        forms: EditionForms | None = None,
        calibration: Calibration | None = None,
        truncated_factor: float = TRUNCATED_FACTOR,
    ):
        self.inner, self.forms, self.calibration = inner, forms, calibration
        self.truncated_factor = truncated_factor

    def around(self, wrap: Callable[[GapFiller], GapFiller]) -> Presented:
        """The same presentation of ``wrap(inner)`` (e.g. the inner filler with parallels'
        readings joining its pool)."""
        return Presented(wrap(self.inner), self.forms, self.calibration, self.truncated_factor)

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
        """The first ``k`` of the wrapped filler's whole ranked pool, annotated, truncated
        readings demoted and calibrated: the pool does not depend on ``k``, nor do the
        probabilities (the calibration's "none of these" included) nor the ranking."""
        return self.candidates_many([(prefix, suffix, hint)], k)[0]

    def candidates_many(self, gaps: list[tuple[str, str, Hint]], k: int | None = None) -> list[list[Candidate]]:
        """:meth:`candidates` of several gaps ``(prefix, suffix, hint)``, the wrapped filler
        searching them together where it can (:func:`~apollo_restore.restore.filler.candidates_many`)."""
        k = k or self.inner.config.k
        out = []
        for (prefix, suffix, hint), found in zip(gaps, candidates_many(self.inner, gaps, WHOLE_POOL)):
            cands = demote_truncated(self.annotate(found, prefix, suffix), prefix, suffix, self.truncated_factor)
            out.append((cands if self.calibration is None else self.calibration.apply(cands, hint))[:k])
        return out
