"""Why a reading shown may be doubtful, in plain words: the notes of :attr:`Candidate.notes`.

    hint_note("χαιρειν σε", Hint.exact(7))         # '9 letters, hint 7'
    notes_for(candidate, prefix, suffix, hint)     # ['repeats the text after the gap', 'leaves a non-word: χ']

The doubts are facts the ranking finds (:mod:`apollo_restore.restoration.ranking.doubts`: a
missed hint, a repeat of the context); this module only words them, and the non-words a reading
leaves (its :attr:`~apollo_restore.schema.restoration.Candidate.unknown_words`):

- **a missed hint**: ``9 letters, hint 7``, ``9 letters, hint 5–7``;
- **a repeat of the context**: ``repeats the text after the gap``;
- **a non-word**: ``leaves a non-word: τωια`` (an abbreviation the editions print unexpanded,
  ``γεωρ`` of ``γεωρ(γός)``, is spelled there: no note).

:mod:`apollo_restore.restoration.ranking.demotions` demotes readings with these doubts (stage 3 of
the ranking; factors chosen on validation); :mod:`apollo_restore.restoration.presentation.present`
fills in the notes.
"""

from __future__ import annotations

from apollo_restore.data.normalise import letter_count
from apollo_restore.hint import Hint
from apollo_restore.restoration.ranking.doubts import misses_hint, repeats
from apollo_restore.schema.restoration import Candidate


def hint_note(text: str, hint: Hint, display: str = "") -> str | None:
    """``"9 letters, hint 7"`` (or ``"…, hint 5–7"``) when the reading's letters are outside the
    hint (:func:`~apollo_restore.restoration.ranking.doubts.misses_hint`, the edition form
    ``display`` counted too); ``None`` inside it or with no hint."""
    if not misses_hint(text, hint, display):
        return None
    wanted = str(hint.lo) if hint.is_exact else f"{hint.lo}–{hint.hi}"
    return f"{letter_count(text)} letters, hint {wanted}"


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
