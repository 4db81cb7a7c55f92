"""The checks every door makes of a text before any model reads it: readable characters, no
machine reading pasted back, within the request's length, Greek enough; and the reading of a
text as every door takes it (:func:`read_source`: Leiden, EpiDoc or Beta Code). Below both models
(restoration and attribution ask them alike).

    from apollo_restore.data.textchecks import check_text, letter_warnings
    check_text(text, DEFAULT_REQUEST_LIMITS)          # RequestError E310, E309, E312, E302
    warnings = letter_warnings([text], limits)         # RequestError E308; W301, W302 warnings
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

from apollo_restore.data.document import Document, read_segments
from apollo_restore.data.normalise import GREEK_LETTERS, fold
from apollo_restore.data.readers.typed import Kind, as_leiden, looks_like_xml
from apollo_restore.errors import Errors, RequestError
from apollo_restore.schema.limits import RequestLimits

# control characters but tab, newline and carriage return; lone surrogates; the replacement character
_BAD_CHARACTER = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffd]")
_GREEK_RUN = re.compile(f"[{GREEK_LETTERS}]")
#: A letter of another script than Greek (Latin, Cyrillic...): what ``W301`` counts.
FOREIGN_LETTER = re.compile(r"[^\W\d_\u0370-\u03ff\u1f00-\u1fff]")


def check_text(text: Any, limits: RequestLimits) -> str:
    """``text`` when it is a string of readable characters within ``max_text_chars``.

    Raises:
        RequestError: ``E310`` (not a string), ``E309`` (unreadable character), ``E312`` (a
            machine reading ``⁅…⁆`` pasted back), ``E302`` (too long).
    """
    if not isinstance(text, str):
        raise RequestError("E310", name="text", expected="a string", value=type(text).__name__)
    check_characters(text)
    check_no_machine_reading(text)
    if len(text) > limits.max_text_chars:
        raise RequestError("E302", n=len(text), limit=limits.max_text_chars)
    return text


# ⁅reading⁆ (U+2045, U+2046) and the export's ⁽ᵐ¹⁾ (U+207D, U+1D50): marks the product writes
_MACHINE_READING = re.compile(
    "\u2045[^\u2045\u2046\n]{0,40}\u2046?|\u2046|\u207d\u1d50[\u2070-\u2079\u00b9\u00b2\u00b3]*\u207e?"
)


def check_no_machine_reading(text: str, where: str = "") -> None:
    """Refuse a restored or exported text pasted back: its ``⁅reading⁆`` (or ``⁽ᵐ¹⁾``) marks the
    model's reading, and read as context it would pass for the papyrus's letters. Every door
    that takes text or context asks this: restore, pins, export, parallels, provenance, the
    gap sets of ``predict`` and ``evaluate``.

    Args:
        text: the text, context or reading to check.
        where: what ``text`` is, for the message (``" of the reading for gap 2"``).

    Raises:
        RequestError: ``E312`` with the line and column of the first mark.
    """
    if not isinstance(text, str):
        return
    found = _MACHINE_READING.search(text)
    if found:
        start = found.start()
        line, column = text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
        raise RequestError("E312", position=start, mark=found.group(), line=line, column=column, where=where)


def check_characters(text: str, where: str = "") -> None:
    """Refuse control characters (but newline, carriage return, tab), lone surrogates and U+FFFD.

    Raises:
        RequestError: ``E309`` with the offset of the first one.
    """
    m = _BAD_CHARACTER.search(text)
    if m:
        raise RequestError("E309", position=m.start(), char=f"U+{ord(m.group()):04X}", where=where)


def _script(ch: str) -> str:
    """A letter's script, from its Unicode name (``LATIN``, ``CYRILLIC``, ``HEBREW``...)."""
    name = unicodedata.name(ch, "")
    return name.split(" ")[0] if name else "UNKNOWN"


def greek_warnings(doc: Document, limits: RequestLimits) -> list[str]:
    """The :func:`letter_warnings` of what the editor wrote and supplied (gap markers aside)."""
    return letter_warnings((getattr(seg, "text", "") for seg in read_segments(doc.segments)), limits)


def letter_warnings(texts: Iterable[str], limits: RequestLimits) -> list[str]:
    """Warnings about the letters of ``texts``; refuse text that is not Greek enough.

    Greek letters (after folding) are counted against letters of any other script.

    Raises:
        RequestError: ``E308``: fewer than ``min_greek_letters`` Greek letters, or more than
            ``max_foreign_share`` of the letters in other scripts (transliteration, Latin...).
    """
    greek = 0
    foreign: Counter[str] = Counter()
    for text in texts:
        greek += len(_GREEK_RUN.findall(fold(text)))
        foreign.update(_script(ch) for ch in FOREIGN_LETTER.findall(text))
    n_foreign = sum(foreign.values())
    total = greek + n_foreign
    scripts = ", ".join(name.lower().capitalize() for name, _ in foreign.most_common(3))
    if greek < limits.min_greek_letters or (total and n_foreign / total > limits.max_foreign_share):
        what = f" ({scripts})" if scripts else ""
        raise RequestError("E308", greek=greek, minimum=limits.min_greek_letters, foreign=n_foreign, what=what)
    warnings = []
    if total and n_foreign / total >= limits.warn_foreign_share:
        warnings.append(Errors.W301.format(foreign=n_foreign, total=total, scripts=scripts))
    if greek < 4 * limits.min_greek_letters:
        warnings.append(Errors.W302.format(greek=greek))
    return warnings


_CHARACTER_REFERENCE = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));")


def decoded(text: str) -> str:
    """``text`` with its XML character references (``&#x2045;``, ``&#8261;``) as the characters
    they name: what an XML reader makes of them (a reference to no character is left as written)."""

    def char(m: re.Match) -> str:
        code = int(m.group(1), 16) if m.group(1) else int(m.group(2))
        return chr(code) if code <= 0x10FFFF else m.group()

    return _CHARACTER_REFERENCE.sub(char, text) if "&#" in text else text


def read_source(text: Any, limits: RequestLimits, name: str = "the text") -> tuple[str, Kind]:
    """A text as every door takes it (restore, export), checked, and the Leiden text it is read
    as (:func:`~apollo_restore.data.readers.typed.as_leiden`) with its kind. A Leiden or Beta Code
    text is bounded (:func:`check_text`) before any work; an EpiDoc file is measured by its
    edition, and the check that keeps ``⁅ ⁆`` out runs on its decoded text too, character
    references and entities expanded.

    Raises:
        RequestError: as :func:`check_text`; ``E313`` unreadable EpiDoc.
    """
    if not isinstance(text, str):
        raise RequestError("E310", name="text", expected="a string", value=type(text).__name__)
    xml = looks_like_xml(text)
    if not xml:
        check_text(text, limits)
    leiden, kind = as_leiden(text, name)
    if leiden is not text:
        check_text(leiden, limits)  # an EpiDoc file: its edition's length, not its header's
    if xml:
        check_characters(text)
        check_no_machine_reading(decoded(text))
    return leiden, kind
