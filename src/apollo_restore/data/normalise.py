"""Text normalisation ``norm.v1`` (docs/design.md, *Normalised text*; paper §3.2, App. C).

One pure, idempotent function, :func:`normalise`, built from small rules applied in order:

lowercase → NFD → iota subscript (U+0345) to adscript ι → other combining marks removed →
lunate ϲ to σ → digits removed → punctuation runs to one ``·`` → letters outside the Greek
alphabet dropped → whitespace collapsed → word-final σ to ς.

Text joined from folded pieces (a document's segments, :mod:`apollo_restore.data.document`) is
joined by :func:`seam` into the same form, so every text the model, the index and the doors see is
a fixed point of :func:`normalise_with_gaps`: one normal form.

The hyphen never survives as text: ``-`` (one lost letter) and ``…`` (lost text of unknown
extent) are gap markers, added by renderers (:mod:`apollo_restore.data.document`) *after*
normalisation. :func:`normalise_with_gaps` keeps those markers in already-rendered text.
"""

from __future__ import annotations

import re
import unicodedata

NORMALISER = "apollo_restore norm.v1"

GAP_CHAR = "-"
UNKNOWN_GAP = "…"
MIDDLE_DOT = "·"

#: Output alphabet of :func:`normalise` (without the gap markers).
GREEK_LETTERS = "αβγδεζηθικλμνξοπρστυφχψωςϛϙϡ"
ALPHABET = frozenset(GREEK_LETTERS + " " + MIDDLE_DOT)

NOT_LETTERS = frozenset(" " + MIDDLE_DOT + GAP_CHAR + UNKNOWN_GAP)
"""Characters of normalised text that are not letters: hints and gap lengths never count them."""


def letter_count(text: str) -> int:
    """Letters in normalised ``text``: hints and gap lengths count letters, not spaces,
    punctuation or gap marks."""
    return sum(ch not in NOT_LETTERS for ch in text)


IOTA_SUBSCRIPT = "\u0345"
# Archaic and variant letter forms folded to the standard lowercase letter.
_VARIANT_FORMS = {
    "ϲ": "σ",  # lunate sigma
    "ς": "σ",  # final sigma is re-derived from position at the end
    "ϐ": "β",
    "ϑ": "θ",
    "ϰ": "κ",
    "ϱ": "ρ",
    "ϕ": "φ",
    "ϖ": "π",
    "ϳ": "ι",
    "ϟ": "ϙ",
    "ʹ": "",  # keraia and lower keraia mark numerals, which are dropped with the digits
    "͵": "",
}
_PUNCTUATION_RUN = re.compile(r"\s*·[\s·]*")
_WHITESPACE_RUN = re.compile(r"\s+")
_MEDIAL_SIGMA_AT_END = re.compile(r"σ(?=[\s·]|$)")
_FINAL_SIGMA_IN_WORD = re.compile(r"ς(?=[" + GREEK_LETTERS + r"])")


def _fold_char(ch: str) -> str:
    """What one character of lowercased NFD text becomes (rules in the module docstring)."""
    if ch == IOTA_SUBSCRIPT:
        return "ι"
    if unicodedata.combining(ch):
        return ""
    if ch in _VARIANT_FORMS:
        return _VARIANT_FORMS[ch]
    if ch in GREEK_LETTERS:
        return ch
    if ch.isspace():
        return " "
    if ch.isdigit() or ch.isalpha() or unicodedata.category(ch)[0] in "MC":
        return ""  # digits, letters of other scripts, marks and control characters
    return MIDDLE_DOT  # punctuation and symbols


class _FoldTable(dict):
    """``str.translate`` table filled lazily from :func:`_fold_char`, one entry per code point."""

    def __missing__(self, codepoint: int) -> str:
        self[codepoint] = value = _fold_char(chr(codepoint))
        return value


_FOLD_TABLE = _FoldTable()


def fix_final_sigma(text: str) -> str:
    """σ at the end of a word becomes ς; ς inside a word becomes σ. Length-preserving.

    A sigma followed by a gap marker is left as it is: the word may continue in the gap.
    """
    text = _FINAL_SIGMA_IN_WORD.sub("σ", text)
    return _MEDIAL_SIGMA_AT_END.sub("ς", text)


def fold(text: str) -> str:
    """Every rule of ``norm.v1`` except the trim and the final-sigma rule.

    Used on pieces of a document that are joined afterwards; :func:`normalise` = fold, then
    trim, then :func:`fix_final_sigma`. Runs of spaces become one space and runs of
    punctuation one ``· `` (the dot follows the word, as in the shared gap-set examples:
    ``χαιρειν· ομολογω``), so pieces may keep a leading/trailing space.
    """
    text = unicodedata.normalize("NFD", text.lower()).translate(_FOLD_TABLE)
    if MIDDLE_DOT in text:
        text = _PUNCTUATION_RUN.sub("· ", text)
    return _WHITESPACE_RUN.sub(" ", text)


def seam(before: str, piece: str) -> tuple[int, str]:
    """Join folded ``piece`` to folded text ending in ``before`` in ``norm.v1`` form: one space
    between words, a punctuation run one ``· `` after the word, as :func:`fold` writes them inside
    one piece (so a text joined from pieces is the text :func:`normalise_with_gaps` gives).

    Args:
        before: the joined text so far (its last two characters suffice; ``""`` at the start).
        piece: the next piece, :func:`fold`'s output or gap markers.

    Returns:
        ``(drop, piece)``: characters to drop from the end of ``before`` (the space before a
        punctuation run) and what of ``piece`` to append (perhaps ``""``).
    """
    if not before or before.endswith(" "):
        piece = piece.lstrip(" ")
    if not piece.startswith(MIDDLE_DOT):
        return 0, piece
    if before.endswith((MIDDLE_DOT, MIDDLE_DOT + " ")):
        return 0, piece[1:].lstrip(" ")  # the run goes on: its one dot is already written
    return (1 if before.endswith(" ") else 0), piece


def normalise(text: str) -> str:
    """Normalise raw Greek text with ``norm.v1``.

    Args:
        text: any Unicode string.

    Returns:
        Lowercase unaccented Greek letters, single spaces, ``·`` for punctuation; no
        hyphen, no digits, no leading or trailing space. ``normalise(normalise(x)) ==
        normalise(x)`` for every ``x``.
    """
    return fix_final_sigma(_tidy(fold(text)))


def _tidy(text: str) -> str:
    return _WHITESPACE_RUN.sub(" ", text).strip()


_GAP_MARKERS = re.compile(r"([-…]+)")
_ANCHOR = "α"  # a letter beside a context's inner edge: the final-sigma rule then sees the gap as a letter


def normalise_context(text: str, side: str) -> str:
    """A gap's context, given by a caller (a gap set's ``prefix`` or ``suffix``), in the normal
    form restore gives its own contexts: ``norm.v1`` (NFC or NFD, oxia or tonos, capitals,
    zero-width characters: one text, one form), gap markers kept, and the space that touches
    the gap kept (a word ends there), the word touching the gap read as going on into it (its σ
    stays σ). Idempotent; a context already in ``norm.v1`` comes back as it was.

    Args:
        text: the context.
        side: ``"prefix"`` (the text before the gap) or ``"suffix"`` (after it).
    """
    parts = _GAP_MARKERS.split(text)
    folded = _WHITESPACE_RUN.sub(" ", "".join(p if i % 2 else fold(p) for i, p in enumerate(parts)))
    if side == "prefix":
        return fix_final_sigma(folded + _ANCHOR)[: -len(_ANCHOR)]
    return fix_final_sigma(_ANCHOR + folded)[len(_ANCHOR) :]


def normalise_with_gaps(text: str) -> str:
    """Normalise text that already carries gap markers (``-`` per letter, ``…``).

    Each run between markers is folded, the markers are kept in place, and the whole is
    tidied once, so markers survive and the result is idempotent.
    """
    parts = re.split(r"([-…]+)", text)
    folded = "".join(p if i % 2 else fold(p) for i, p in enumerate(parts))
    return fix_final_sigma(_WHITESPACE_RUN.sub(" ", folded).strip())
