"""The doubts of a reading, as facts of it and its gap (no score is read): whether it is
truncated, which context it repeats, whether it misses the hint.

    repeats("χ και δια", "πλειστα ", " και δια παντοσ")   # 'after'
    misses_hint("χαιρειν σε", Hint.exact(7))              # True: 9 letters
    doubts(candidate, prefix, suffix, hint)               # (truncated, repeats, misses an exact hint)

- **truncated** (:func:`is_truncated`): a word the reading makes at an edge of the gap is not a
  word the editions spell — ``τραπ`` before a space, where the text starts a new word, or
  ``παντοςτου`` where it says the word goes on, ``[.6]του``; ``χ`` after a space at its start;
- **a repeat of the context** (:func:`repeats`): the reading's last letters are the first
  letters of the text after the gap, or its first letters the last of the text before, over at
  least :data:`REPEAT_LETTERS` letters;
- **a missed hint** (:func:`misses_hint`): its letters are outside the hinted count or range,
  counted as ``norm.v1`` writes it and as the edition does (iota subscript not a letter); the
  search widens a hint by up to five letters, so such readings reach the list.

:class:`~apollo_restore.restoration.ranking.demotions.Demotions` turns them into factors (stage 3
of :mod:`apollo_restore.restoration.ranking`); the presentation words them as a reading's notes
(:mod:`apollo_restore.restoration.presentation.notes`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from apollo_restore.data.normalise import (
    GAP_CHAR,
    GREEK_LETTERS,
    IOTA_SUBSCRIPT,
    NOT_LETTERS,
    UNKNOWN_GAP,
    letter_count,
)
from apollo_restore.hint import Hint
from apollo_restore.schema.restoration import Candidate

#: fewest letters a reading must copy from the context next to it to be a repeat (chosen on
#: ddb validation gaps by ``benchmarks/list_notes.py``: BENCHMARKS.md, "Demotions of doubtful readings")
REPEAT_LETTERS = 3
AFTER, BEFORE = "after", "before"
_LAST_WORD = re.compile(f"[{GREEK_LETTERS}]+$")
_WORD = re.compile(f"[{GREEK_LETTERS}]+")

#: A reading's doubts: truncated, repeats the context, misses an exact hint (:func:`doubts`).
Doubts = tuple[bool, bool, bool]


def _letters(text: str) -> str:
    """The letters of normalised ``text`` (no spaces, ``·`` or gap marks)."""
    return "".join(ch for ch in text if ch not in NOT_LETTERS)


@lru_cache(maxsize=8)
def _context_letters(prefix: str, suffix: str) -> tuple[str, str]:
    """The letters of ``prefix`` after its last gap mark and of ``suffix`` before its first (a
    gap's readings share them: cached)."""
    before = _letters(prefix.rsplit(GAP_CHAR, 1)[-1].rsplit(UNKNOWN_GAP, 1)[-1])
    return before, _letters(suffix.split(GAP_CHAR)[0].split(UNKNOWN_GAP)[0])


def _overlap(left: str, right: str) -> int:
    """Length of the longest end of ``left`` that is also a start of ``right``."""
    for n in range(min(len(left), len(right)), 0, -1):
        if left[-n:] == right[:n]:
            return n
    return 0


def repeats(text: str, prefix: str, suffix: str, least: int = REPEAT_LETTERS) -> str | None:
    """Which context the reading ``text`` copies, letters only (spaces and ``·`` ignored):

    ``"after"`` when its last ``n ≥ least`` letters are the first ``n`` letters of ``suffix``
    (up to the suffix's first other gap, ``-`` or ``…``); else ``"before"`` when its first
    ``n ≥ least`` letters are the last ``n`` letters of ``prefix`` (after the prefix's last
    gap); else ``None``. ``repeats("χ και δια", "", " και δια παντοσ") == "after"`` (6 letters).
    """
    reading = _letters(text)
    before, after = _context_letters(prefix, suffix)
    if _overlap(reading, after) >= least:
        return AFTER
    if _overlap(before, reading) >= least:
        return BEFORE
    return None


def misses_hint(text: str, hint: Hint, display: str = "") -> bool:
    """Whether the reading's letters are outside the hint (never with no hint).

    An editor's dots may count a dative's iota as the edition writes it, subscript (``κιβαριάτῃ``:
    9 letters) where ``norm.v1`` writes it adscript (``κιβαριατηι``: 10): with its edition form
    ``display``, a reading agrees with the hint when either count does."""
    n = letter_count(text)
    return not (hint.contains(n) or hint.contains(n - unicodedata.normalize("NFD", display).count(IOTA_SUBSCRIPT)))


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
    (:func:`repeats`), and misses an exact hint (:func:`misses_hint`)."""
    missed = hint.is_exact and misses_hint(candidate.text, hint, candidate.display)
    return is_truncated(candidate, prefix, suffix), repeats(candidate.text, prefix, suffix) is not None, missed
