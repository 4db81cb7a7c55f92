"""The length hint of a gap: how many letters it holds — unknown, exactly ``n``, or ``lo``–``hi``.

    from apollo_restore.hint import NO_HINT, Hint
    Hint.exact(7).format()                  # '7 letters'
    Hint.from_json([5, 8]).widen(2)         # Hint(lo=3, hi=10)
    Hint.exact(7).letters(25)               # (7, 7): the letter counts a restorer searches
    NO_HINT.letters(25)                     # (1, 25)

One value type for every layer (readers, FIM examples, restorers, evaluation, the web API). Hints
count letters, never spaces or punctuation. An exact hint is a range of one count (``lo == hi``);
on disk (gap sets, requests, the web API) a hint is JSON ``null``, ``7`` or ``[5, 8]``, and
:meth:`Hint.to_json` writes exactly that form back (a one-count range ``[7, 7]`` reads as, and is
written back as, ``7``). Leiden forms (``[.7]``, ``[ca.7]``, ``[.5-8]``) are read by
:func:`apollo_restore.data.readers.leiden.hint_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Hint:
    """Letters in a gap: ``lo``–``hi`` inclusive, or both ``None`` for no hint.

    Attributes:
        lo, hi: bounds in letters, ``0 <= lo <= hi`` (0 only in training examples, whose
            middles may be empty); both ``None`` when the length is unknown.

    Raises:
        ValueError: one bound without the other, a bound that is not an ``int``, or ``lo > hi``.
    """

    lo: int | None = None
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.lo is None and self.hi is None:
            return
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in (self.lo, self.hi)):
            raise ValueError(f"hint bounds must be two letter counts, not {self.lo!r} and {self.hi!r}")
        if not 0 <= self.lo <= self.hi:
            raise ValueError(f"hint range {self.lo}-{self.hi} must satisfy 0 <= lo <= hi")

    @classmethod
    def exact(cls, n: int) -> Hint:
        """Exactly ``n`` letters."""
        return cls(n, n)

    @classmethod
    def span(cls, lo: int, hi: int) -> Hint:
        """From ``lo`` to ``hi`` letters inclusive."""
        return cls(lo, hi)

    @classmethod
    def from_json(cls, value: Any) -> Hint:
        """JSON hint (``null``, a count ``>= 1``, or ``[lo, hi]`` with ``1 <= lo <= hi``) → hint.

        Raises:
            ValueError: anything else.
        """
        if value is None:
            return NO_HINT
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise ValueError(f"hint {value} is not a positive letter count")
            return cls(value, value)
        if (
            isinstance(value, (list, tuple))
            and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            lo, hi = value
            if not 1 <= lo <= hi:
                raise ValueError(f"hint range {list(value)} must satisfy 1 <= lo <= hi")
            return cls(lo, hi)
        raise ValueError(f"hint must be null, an integer or [lo, hi], not {value!r}")

    def to_json(self) -> None | int | list[int]:
        """``None``, ``n`` (exact) or ``[lo, hi]``: the interchange form."""
        if self.lo is None:
            return None
        return self.lo if self.lo == self.hi else [self.lo, self.hi]

    @property
    def given(self) -> bool:
        """Whether the gap's length is hinted at all."""
        return self.lo is not None

    @property
    def is_exact(self) -> bool:
        """Whether the hint names one letter count."""
        return self.lo is not None and self.lo == self.hi

    @property
    def kind(self) -> Literal["none", "exact", "range"]:
        """``none``, ``exact`` or ``range`` (the hint conditions of evaluation and calibration)."""
        if self.lo is None:
            return "none"
        return "exact" if self.lo == self.hi else "range"

    @property
    def middle(self) -> int | None:
        """The count in the middle of the range (rounded down; the count of an exact hint)."""
        return None if self.lo is None else (self.lo + self.hi) // 2

    def widen(self, n: int) -> Hint:
        """``n`` letters of room either side, never below 1 (no hint, or ``n <= 0``: unchanged)."""
        if self.lo is None or n <= 0:
            return self
        return Hint(max(1, self.lo - n), self.hi + n)

    def contains(self, n: int) -> bool:
        """Whether ``n`` letters agree with the hint (always, with no hint)."""
        return self.lo is None or self.lo <= n <= self.hi

    def distance(self, n: int) -> int:
        """Letters by which ``n`` misses the hinted range (0 inside it, or with no hint)."""
        return 0 if self.lo is None else max(self.lo - n, n - self.hi, 0)

    def letters(self, max_letters: int) -> tuple[int, int]:
        """The letter budget of a search, the one rule every restorer follows: ``(lo, hi)`` letter
        counts a reading may have — at least 1 (a gap holds a letter), and with no hint 1 to
        ``max_letters`` (the restorer's longest search)."""
        if self.lo is None:
            return 1, max_letters
        return max(1, self.lo), max(1, self.hi)

    def format(self) -> str:
        """The hint in words: ``7 letters``, ``1 letter``, ``5–8 letters`` or ``no length hint``."""
        if self.lo is None:
            return "no length hint"
        if self.lo != self.hi:
            return f"{self.lo}–{self.hi} letters"
        return f"{self.lo} letter" + ("s" if self.lo != 1 else "")


#: No length hint.
NO_HINT = Hint()
