"""FIM examples (docs/design.md, *FIM rules*; paper §3.1, §3.4, §3.6): windows, synthetic gaps and hints.

How an example becomes tokens is its layout's business (:mod:`apollo_restore.fim.layout`).
Every random choice draws from a ``numpy.random.Generator`` passed in by the caller, so a
stream of examples is fixed by its seed (see :mod:`apollo_restore.fim.dataset`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apollo_restore.data.normalise import GAP_CHAR, NOT_LETTERS, UNKNOWN_GAP, letter_count
from apollo_restore.hint import NO_HINT, Hint

GAP_SAMPLER = "apollo_restore gaps.uniform25.v1"
#: whether a code point is a letter (not in :data:`NOT_LETTERS`), up to the highest of those and
#: one more (True) for every code point above, to find a window's letters with numpy
_IS_LETTER = np.ones(max(map(ord, NOT_LETTERS)) + 2, dtype=bool)
_IS_LETTER[[ord(ch) for ch in NOT_LETTERS]] = False


# The synthetic-gap recipe (the paper's proportions; GAP_SAMPLER names it): fixed, so that a
# stream of examples is fixed by its seed alone.
#: Mean window length (characters); each window is ``WINDOW × U(1 - JITTER, 1 + JITTER)``.
WINDOW, JITTER = 500, 0.3
#: Shorter windows are skipped (paper: windows ≥ 50 characters).
MIN_WINDOW = 50
#: Gap lengths are uniform on ``1..MAX_GAP`` letters.
MAX_GAP = 25
#: Shares of examples with no suffix, and with no middle.
P_EMPTY_SUFFIX, P_EMPTY_MIDDLE = 0.1, 0.1
#: Shares of exact and of range hints (the rest get none), and of given hints that are wrong.
P_EXACT, P_RANGE, P_WRONG = 0.4, 0.4, 0.15


@dataclass(frozen=True)
class FimConfig:
    """What a caller chooses of the FIM recipe: the loss (the windows, gaps and hints are the
    fixed recipe above, :data:`WINDOW` to :data:`P_WRONG`).

    Attributes:
        loss: ``"middle"`` (middle + EOS only) or ``"all"`` (every text position: FIM
            pretraining from scratch; control and hint tokens never carry loss).
    """

    loss: str = "middle"

    def __post_init__(self) -> None:
        if self.loss not in ("middle", "all"):
            raise ValueError(f"FimConfig.loss must be 'middle' or 'all', got {self.loss!r}")


#: The paper's recipe, used when a caller gives none.
DEFAULT_FIM_CONFIG = FimConfig()


@dataclass(frozen=True)
class FimExample:
    """One gap: ``prefix + middle + suffix`` is a window of a document (spaces at the cut
    points may be trimmed). ``hint`` is what the model is shown; ``hint_correct`` says whether
    it contains the true letter count."""

    prefix: str
    middle: str
    suffix: str
    hint: Hint
    hint_correct: bool = True


def sample_window(text: str, rng: np.random.Generator, max_len: int | None = None) -> str:
    """A window of ``text`` of about :data:`WINDOW` characters, cut at spaces.

    Args:
        max_len: hard upper bound on the window length (used to fill a packed row).
    """
    target = int(WINDOW * rng.uniform(1 - JITTER, 1 + JITTER))
    if max_len is not None:
        target = min(target, max_len)
    if len(text) <= target:
        return text
    start = int(rng.integers(0, len(text) - target + 1))
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + target)
    if end < len(text):
        space = text.rfind(" ", max(start, end - 40), end)
        end = space if space > start else end
    return text[start:end]


def _gap_span(window: str, length: int, rng: np.random.Generator) -> tuple[int, int] | None:
    """A span ``[a, b)`` holding exactly ``length`` letters, starting and ending on a letter,
    containing no gap marker. ``None`` if the window has no such span (tried a few times)."""
    points = np.frombuffer(window.encode("utf-32-le"), dtype=np.uint32)
    letters = np.flatnonzero(_IS_LETTER[np.minimum(points, len(_IS_LETTER) - 1)])  # their positions
    if len(letters) < length:
        return None
    for _ in range(8):
        k = int(rng.integers(0, len(letters) - length + 1))
        a, b = int(letters[k]), int(letters[k + length - 1]) + 1
        if GAP_CHAR not in window[a:b] and UNKNOWN_GAP not in window[a:b]:
            return a, b
    return None


def sample_hint(true_len: int, rng: np.random.Generator) -> tuple[Hint, bool]:
    """Hint for a middle of ``true_len`` letters: exact, range, or none; sometimes wrong.

    Returns:
        ``(hint, correct)``; a wrong exact hint is off by 1–5 letters, a wrong range excludes
        the true length. Ranges are 1–6 letters wide.
    """
    u = rng.random()
    if u >= P_EXACT + P_RANGE:
        return NO_HINT, True
    wrong = rng.random() < P_WRONG
    if u < P_EXACT:
        if not wrong:
            return Hint.exact(true_len), True
        off = int(rng.integers(1, 6))
        below = true_len >= off and rng.random() < 0.5
        return Hint.exact(true_len - off if below else true_len + off), False
    width = int(rng.integers(1, 7))
    if not wrong:
        lo = max(0, true_len - int(rng.integers(0, width + 1)))
        return Hint.span(lo, lo + width), True
    if true_len > width and rng.random() < 0.5:
        hi = true_len - int(rng.integers(1, min(3, true_len - width) + 1))
        return Hint.span(hi - width, hi), False
    lo = true_len + int(rng.integers(1, 4))
    return Hint.span(lo, lo + width), False


def sample_example(text: str, rng: np.random.Generator, max_len: int | None = None) -> FimExample | None:
    """One synthetic-gap example from a document's training text (``None`` if too short)."""
    window = sample_window(text, rng, max_len)
    if len(window) < MIN_WINDOW:
        return None
    if rng.random() < P_EMPTY_MIDDLE:
        cut = int(rng.integers(0, len(window) + 1))
        prefix, middle, suffix = window[:cut], "", window[cut:]
    else:
        span = _gap_span(window, int(rng.integers(1, MAX_GAP + 1)), rng)
        if span is None:
            return None
        prefix, middle, suffix = window[: span[0]], window[span[0] : span[1]], window[span[1] :]
    if rng.random() < P_EMPTY_SUFFIX:
        suffix = ""
    hint, correct = sample_hint(letter_count(middle), rng)
    return FimExample(prefix, middle, suffix, hint, correct)
