"""Parallel readings that are noise: lists of numerals and letters, not text.

    is_noise("ζ φκ· θ ὑπ α")        # True: a column of figures (Greek numerals are letters)
    is_noise("ὁ δὲ")                # False: two short words, but words
    is_noise("ιβ")                  # False: one numeral may be the gap's reading (a year, a sum)

Accounts and lists put numerals (``φκ`` = 520) and single letters between any two anchors, so the
same anchors meet around them in many documents; as parallels of a gap in running text they say
nothing. A reading is noise when it has at least :data:`MIN_TOKENS` tokens and more than half of
them are *numeral-like*: a single letter other than the one-letter words (``ὁ``, ``ἡ``/``ἤ``,
``ὦ``, ``ἃ``), or two or three letters that the training editions never write as a word (the
edition forms: no form with an accent or breathing, as numerals are written; without the forms,
any two letters).
"""

from __future__ import annotations

import re

from apollo_restore.data.normalise import GREEK_LETTERS, normalise
from apollo_restore.data.orthography import ONE_LETTER_WORDS, EditionForms, is_edition_form

#: tokens a reading needs before it can be called noise (one or two numerals can be the reading)
MIN_TOKENS = 3
_TOKEN = re.compile(f"[{GREEK_LETTERS}]+")


def numeral_like(token: str, forms: EditionForms | None = None) -> bool:
    """Whether a normalised token reads as a numeral or a stray letter, not a word."""
    if len(token) == 1:
        return token not in ONE_LETTER_WORDS
    if len(token) > 3:
        return False
    if forms is None:
        return len(token) == 2
    form = forms.get(token)
    return form is None or not is_edition_form(token, form)


def is_noise(reading: str, forms: EditionForms | None = None) -> bool:
    """Whether a parallel reading (any form: normalised or edition) is mostly numerals and stray
    letters (see the module docstring)."""
    tokens = _TOKEN.findall(normalise(reading))
    if len(tokens) < MIN_TOKENS:
        return False
    return sum(numeral_like(t, forms) for t in tokens) * 2 > len(tokens)
