"""Why a reading shown may be doubtful, in plain words: the notes of :attr:`Candidate.notes`.

    hint_note("χαιρειν σε", Hint.exact(7))         # '9 letters, hint 7'
    repeats("χ και δια", "πλειστα ", " και δια παντοσ")   # 'after'
    notes_for(candidate, prefix, suffix, hint)     # ['repeats the text after the gap', 'leaves a non-word: χ']

Three doubts, each a fact of the reading and its gap (no score is read):

- **a missed hint**: its letters are outside the hinted count or range, counted as ``norm.v1``
  writes it and as the edition does (iota subscript not a letter) (the search widens a hint by
  up to five letters, so such readings reach the list): ``9 letters, hint 7``, ``9 letters, hint 5–7``;
- **a repeat of the context**: the reading's last letters are the first letters of the text
  after the gap, or its first letters the last of the text before, over at least
  :data:`REPEAT_LETTERS` letters (:func:`repeats`): ``repeats the text after the gap``;
- **a non-word**: it makes with the context a word no training edition spells (its
  :attr:`~apollo_restore.restoration.types.Candidate.unknown_words`): ``leaves a non-word: τωια``
  (an abbreviation the editions print unexpanded, ``γεωρ`` of ``γεωρ(γός)``, is spelled there: no note).

:mod:`apollo_restore.restoration.demotions` demotes readings with the first two (stage 3 of the
ranking; factors chosen on validation); :mod:`apollo_restore.restoration.presentation.present`
fills in the notes.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from apollo_restore.data.normalise import GAP_CHAR, IOTA_SUBSCRIPT, NOT_LETTERS, UNKNOWN_GAP, letter_count
from apollo_restore.hint import Hint
from apollo_restore.restoration.types import Candidate

#: fewest letters a reading must copy from the context next to it to be a repeat (chosen on
#: ddb validation gaps by ``benchmarks/list_notes.py``: BENCHMARKS.md, "Demotions of doubtful readings")
REPEAT_LETTERS = 3
AFTER, BEFORE = "after", "before"


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


def hint_note(text: str, hint: Hint, display: str = "") -> str | None:
    """``"9 letters, hint 7"`` (or ``"…, hint 5–7"``) when the reading's letters are outside the
    hint; ``None`` inside it or with no hint.

    An editor's dots may count a dative's iota as the edition writes it, subscript (``κιβαριάτῃ``:
    9 letters) where ``norm.v1`` writes it adscript (``κιβαριατηι``: 10): with its edition form
    ``display``, a reading agrees with the hint when either count does."""
    n = letter_count(text)
    if hint.contains(n) or hint.contains(n - unicodedata.normalize("NFD", display).count(IOTA_SUBSCRIPT)):
        return None
    wanted = str(hint.lo) if hint.is_exact else f"{hint.lo}–{hint.hi}"
    return f"{n} letters, hint {wanted}"


def notes_for(candidate: Candidate, prefix: str, suffix: str, hint: Hint) -> list[str]:
    """The notes of one reading, in this order: a missed hint, a repeat, non-words (from its
    ``unknown_words``, so annotate it first); empty when nothing is doubtful."""
    notes = [hint_note(candidate.text, hint, candidate.display)]
    side = repeats(candidate.text, prefix, suffix)
    notes.append(side and f"repeats the text {side} the gap")
    words = candidate.unknown_words
    if words:
        notes.append(f"leaves {'a non-word' if len(words) == 1 else 'non-words'}: {', '.join(words)}")
    return [note for note in notes if note]
