"""A restoration request checked, shared by the CLI, the Python API, ``predict`` and the web.

    from apollo_restore.schema.restoration import RestoreRequest
    req = validate(RestoreRequest("ἔτους [.5] Ἀντωνίνου", hints={1: "ca.5"}, k=10))   # gap 1: the first
    req.hints    # {0: Hint(lo=4, hi=6)}: one resolved hint per gap, by 0-based position

The request is declared once (:class:`~apollo_restore.schema.restoration.RestoreRequest`: its
fields' types and bounds); what depends on its text and on the door's limits is checked here,
once, before any model work (:func:`validate` → :class:`CheckedRequest`); every failure is a
:class:`~apollo_restore.errors.RequestError` (or a :class:`~apollo_restore.errors.LeidenError`
for malformed brackets) with a numbered, scholar-readable message. Limits are configurable
(:class:`~apollo_restore.schema.limits.RequestLimits`, declared in the schema; ``WEB_LIMITS``
there are the stricter ones of the HTTP server).

The text may also be an EpiDoc XML document or TLG Beta Code: it is read as Leiden first
(:func:`~apollo_restore.data.readers.typed.as_leiden`; Beta Code with a warning, ``W303``), and
the checked request's ``text`` is then that Leiden text (gap spans refer to it).

Text that is not Greek enough (too few Greek letters, mostly another script, transliteration)
is refused (``E308``); some foreign letters give a warning (``W301``) carried in the result.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from apollo_restore.data.document import Document, Lacuna
from apollo_restore.data.formats import GapExample
from apollo_restore.data.normalise import GREEK_LETTERS, fold, normalise_context
from apollo_restore.data.readers.leiden import GapMarker, hint_of, parse_leiden_with_gaps
from apollo_restore.data.textchecks import (
    check_characters,
    check_no_machine_reading,
    decoded,
    greek_warnings,
    letter_warnings,
    read_source,
)
from apollo_restore.errors import Errors, RequestError
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.restoration.context import DEFAULT_WINDOW
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS, RequestLimits
from apollo_restore.schema.restoration import RestoreRequest

_BRACKETS = frozenset("[]{}()<>⟦⟧⟨⟩〈〉\\/|?")
_GREEK = frozenset(GREEK_LETTERS)
_HINT_TEXT = re.compile(r"^\s*(?:(ca?\.?)\s*)?\.?\s*(\d{1,9})\s*(?:[-\u2013]\s*(\d{1,9}))?\s*$", re.IGNORECASE)
_RAW_WINDOWS = 4  # raw characters read per context character kept, before normalising


@dataclass
class CheckedRequest:
    """A :class:`~apollo_restore.schema.restoration.RestoreRequest` checked against a door's
    limits, its text read and parsed: what the driver runs (:func:`validate` makes it). Gaps are
    keyed here by their 0-based position (the segments' order), for code; the request itself, and
    every message, numbers them from 1.

    Attributes:
        text: the Leiden text read (an EpiDoc document or Beta Code as the Leiden text it was read
            as; gap spans refer to it).
        document, markers: the parsed text and its gaps' places in ``text`` (``markers`` empty for
            a :class:`Document` given directly).
        hints: one resolved hint per gap of the text.
        pins: the checked readings fixed by the caller.
        fills: what gaps not asked hold (checked readings, ``""`` or no letter).
        only: the sorted positions of the gaps asked.
        k: candidates per gap.
        kind: the kind of text asked (``None``: read from the text).
        warnings: any ``W3xx`` (foreign letters, Beta Code read).
        should_stop: asked before each gap; when it answers true the restoration stops with
            :class:`~apollo_restore.errors.RestoreStopped` (a time limit, a client gone).
    """

    text: str
    document: Document = field(repr=False)
    markers: list[GapMarker] = field(repr=False)
    hints: dict[int, Hint]
    pins: dict[int, str]
    fills: dict[int, str]
    only: tuple[int, ...]
    k: int
    kind: str | None = None
    warnings: list[str] = field(default_factory=list)
    should_stop: Callable[[], bool] | None = field(default=None, repr=False)

    def missing_fill(self) -> int | None:
        """The first gap (0-based) before the last one asked that is neither asked, pinned nor
        filled, or ``None``: the context of the gaps after it is unknown."""
        asked = set(self.only)
        for i in range(max(self.only)):
            if i not in asked and i not in self.pins and i not in self.fills:
                return i
        return None


def validate(
    request: RestoreRequest,
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    *,
    name: str = "the text",
    should_stop: Callable[[], bool] | None = None,
) -> CheckedRequest:
    """``request`` checked against ``limits``, its text read and parsed, a hint resolved for
    every gap.

    Args:
        name: how messages name the text (a file's name).
        should_stop: the :attr:`CheckedRequest.should_stop` of the restoration.

    Raises:
        RequestError: ``E300``–``E313``, ``E326``–``E328`` (see :class:`~apollo_restore.errors.Errors`).
        LeidenError: malformed Leiden brackets or lengths.
    """
    if not request.text.strip():
        raise RequestError("E300")
    text, kind = read_source(request.text, limits, name)
    check_k(request.k, limits)
    doc, markers = parse_leiden_with_gaps(text)
    checked = with_document(request, doc, markers, limits, text=text, should_stop=should_stop)
    if kind == "betacode":
        preview = text if len(text) <= 60 else text[:59] + "…"
        checked.warnings.insert(0, Errors.W303.format(preview=" ".join(preview.split())))
    return checked


def with_document(
    request: RestoreRequest,
    doc: Document,
    markers: list[GapMarker],
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    *,
    text: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CheckedRequest:
    """``request`` checked against an already parsed document (``markers`` may be empty for a
    :class:`Document` given directly; ``text``: the Leiden text it was read from, else the
    request's)."""
    k = check_k(request.k, limits)
    lacunae = [seg for seg in doc.segments if isinstance(seg, Lacuna)]
    if not lacunae:
        raise RequestError("E301")
    only = _asked(request.only, len(lacunae))
    if len(only) > limits.max_gaps:
        asked = "the text has" if request.only is None else "the request asks for"
        raise RequestError("E303", asked=asked, n=len(only), limit=limits.max_gaps)
    overrides = {i: parse_hint_value(value, i + 1) for i, value in _by_gap(request.hints, len(lacunae), "E306")}
    hints: dict[int, Hint] = {}
    for i, lacuna in enumerate(lacunae):
        hint = overrides[i] if i in overrides else hint_of(lacuna)
        hints[i] = check_hint(hint, i + 1, limits, markers[i].start if i < len(markers) else None)
    pins = {i: check_reading(value, i + 1, limits) for i, value in _by_gap(request.pins, len(lacunae), "E307")}
    for i in pins:
        check_letters_gap(lacunae[i], i + 1)
    fills = _fills(request.fills, len(lacunae), only, pins, limits)
    warnings = greek_warnings(doc, limits)
    return CheckedRequest(
        request.text if text is None else text, doc, markers, hints, pins, fills, only, k,
        request.kind, warnings, should_stop,
    )  # fmt: skip


def _asked(only: list[int] | None, n_gaps: int) -> tuple[int, ...]:
    """The 0-based positions of the gaps asked (``only``: gap numbers from 1, as declared;
    ``None``: all), sorted.

    Raises:
        RequestError: ``E310`` none asked, ``E327`` a number that is no gap of the text, or twice.
    """
    if only is None:
        return tuple(range(n_gaps))
    numbers = list(only)
    if not numbers:
        raise RequestError("E310", name="only", expected="a list of at least one gap number", value=numbers)
    for number in numbers:
        if not 1 <= number <= n_gaps:
            raise RequestError(
                "E327", gap=number, reason=f"the text has {n_gaps} gap{'s' * (n_gaps != 1)}, numbered from 1"
            )
    if len(set(numbers)) != len(numbers):
        twice = next(n for n in numbers if numbers.count(n) > 1)
        raise RequestError("E327", gap=twice, reason="it is asked twice")
    return tuple(sorted(n - 1 for n in numbers))


def _fills(
    values: Mapping[int, Any], n_gaps: int, only: tuple[int, ...], pins: Mapping[int, str], limits: RequestLimits
) -> dict[int, str]:
    """The checked ``fills`` of a request, by 0-based gap: each for a gap before the last one
    asked, neither asked nor pinned, a reading (:func:`check_reading`), ``""`` or what a first
    reading of no letter may be (spaces, a middle dot).

    Raises:
        RequestError: ``E328`` a fill for a gap asked, pinned or after the last one asked; ``E307``.
    """
    asked, last = set(only), max(only)
    out: dict[int, str] = {}
    for i, value in _by_gap(values, n_gaps, "E328"):
        if i in asked:
            raise RequestError("E328", gap=i + 1, reason="the gap is asked (only): it is searched, not filled")
        if i in pins:
            raise RequestError("E328", gap=i + 1, reason="the gap is pinned: its pin is what it holds")
        if i > last:
            raise RequestError("E328", gap=i + 1, reason=f"it comes after gap {last + 1}, the last one asked")
        if isinstance(value, str) and len(value) <= limits.max_pin_chars and not value.strip(" ·\u0387"):
            out[i] = value  # a first reading of no letter (spaces, a middle dot), or none: as the model left it
        else:
            out[i] = check_reading(value, i + 1, limits)
    return out


def check_letters_gap(lacuna: Lacuna, gap: int) -> None:
    """A gap a reading may fill: letters, not lost lines (``lost.2lin``, ``<gap unit="line">``).

    Raises:
        RequestError: ``E326`` a gap of lost lines.
    """
    if lacuna.line_unit:
        lines = f"{lacuna.lines} lost lines" if lacuna.lines and lacuna.lines > 0 else "lost lines"
        raise RequestError("E326", gap=gap, lines=lines)


def _by_gap(values: Mapping[int, Any], n_gaps: int, code: str) -> list[tuple[int, Any]]:
    """``(0-based gap, value)`` pairs of a per-gap mapping keyed by gap number (counted from 1,
    as every display counts gaps; whole numbers, as the request declares them), keys checked
    against the gaps."""
    out = []
    for key, value in values.items():
        if not 1 <= key <= n_gaps:
            raise RequestError(code, gap=key, reason=f"the text has {n_gaps} gap{'s' * (n_gaps != 1)}, numbered from 1")
        out.append((key - 1, value))
    return out


def check_k(k: Any, limits: RequestLimits) -> int:
    """``k`` as an int in ``1..max_k``.

    Raises:
        RequestError: ``E305``.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limits.max_k:
        raise RequestError("E305", k=k, limit=limits.max_k)
    return k


def check_hint(hint: Hint, gap: int | str, limits: RequestLimits, position: int | None = None) -> Hint:
    """``hint`` when it asks for at most ``max_gap_letters`` letters.

    Raises:
        RequestError: ``E304`` naming ``gap`` (a number, or a gap set's id).
    """
    if hint.given and hint.hi > limits.max_gap_letters:
        raise RequestError("E304", gap=gap, position=position, n=hint.hi, limit=limits.max_gap_letters)
    return hint


def parse_hint_value(value: Any, gap: int) -> Hint:
    """A hint as given (a :class:`Hint`, ``None``, ``7``, ``[5, 8]``, ``"7"``, ``"5-8"``,
    ``"ca.7"``, ``"none"``) → :class:`Hint`; ``ca.n`` widens as the Leiden ``[ca.n]`` does.

    Raises:
        RequestError: ``E306`` naming the gap (1-based).
    """
    if isinstance(value, Hint):
        if value.given and value.lo < 1:
            raise RequestError("E306", gap=gap, reason="a gap holds at least one letter")
        return value
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", "")):
        return NO_HINT
    if isinstance(value, str):
        m = _HINT_TEXT.match(value)
        if not m:
            raise RequestError("E306", gap=gap, reason=f"{value!r} is not a letter count: write 7, 5-8, ca.7 or none")
        lo, hi = int(m.group(2)), int(m.group(3)) if m.group(3) else None
        if m.group(1) and hi is None:
            if lo < 1:
                raise RequestError("E306", gap=gap, reason="a gap holds at least one letter")
            return hint_of(Lacuna(lo, approximate=True))
        value = [lo, hi] if hi is not None else lo
    try:
        return Hint.from_json(value)
    except ValueError as err:
        raise RequestError("E306", gap=gap, reason=f"{err}: give a number, a range [low, high] or none") from None


#: What a reading may hold besides Greek letters (any accent, breathing or diacritic, precomposed
#: or combining) and the space: the middle dot and ano teleia, the marks of elision and numerals,
#: the punctuation an edition prints inside a word group. No line break, no control or format
#: character (a right-to-left override would reorder the edition as it is shown).
READING_MARKS = frozenset("·\u0387'\u2019\u02bc\u1fbd\u1fbf\u0374\u02b9\u0375.,;:-")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x85\u2028\u2029")


def check_reading(value: Any, gap: int, limits: RequestLimits) -> str:
    """A reading as a caller gives it (a pin, an export's ``--reading``, a chosen reading or an
    alternative of the web page): one line of Greek, checked by this one function at every door.
    Only Greek letters, combining marks, the space and :data:`READING_MARKS`, at least one Greek
    letter; no Leiden brackets, no line break, no bidirectional or other control character; no
    machine reading's marks ``⁅ ⁆`` (also written as XML character references: ``&#x2045;``);
    at most ``max_pin_chars`` characters.

    Raises:
        RequestError: ``E307`` naming the gap and the character (or ``E309`` for unreadable
            characters, ``E312`` for a machine reading's marks: a pin is the caller's reading, not
            the model's written back).
    """
    if not isinstance(value, str):
        raise RequestError("E307", gap=gap, reason=f"a reading is text, not {type(value).__name__}")
    check_characters(value, f" of the reading for gap {gap}")
    check_no_machine_reading(decoded(value), f" of the reading for gap {gap}")
    if len(value) > limits.max_pin_chars:
        raise RequestError("E307", gap=gap, reason=f"longer than {limits.max_pin_chars} characters")
    if any(ch in _BRACKETS for ch in value):
        raise RequestError("E307", gap=gap, reason="a reading may not contain Leiden brackets or ?")
    for at, ch in enumerate(value):
        if ch in _LINE_BREAKS:
            reason = f"it holds a line break (U+{ord(ch):04X}) at character {at + 1}: a reading is one line"
            raise RequestError("E307", gap=gap, reason=reason)
        if not (ch == " " or ch in READING_MARKS or _is_greek_letter(ch) or unicodedata.category(ch) == "Mn"):
            kind = "a control or bidirectional character" if unicodedata.category(ch)[0] == "C" else "no Greek letter"
            shown = "" if unicodedata.category(ch)[0] == "C" else f"{ch!r} "
            reason = f"it holds {shown}(U+{ord(ch):04X}) at character {at + 1}, {kind}, space or mark of a reading"
            raise RequestError("E307", gap=gap, reason=reason)
    if not any(ch in _GREEK for ch in fold(value)):
        raise RequestError("E307", gap=gap, reason="it holds no Greek letter (Latin or empty readings would vanish)")
    return value


def _is_greek_letter(ch: str) -> bool:
    """A letter of the Greek script (precomposed accents and breathings included)."""
    return unicodedata.category(ch)[0] == "L" and unicodedata.name(ch, "").startswith("GREEK")


def check_source(text: Any, limits: RequestLimits, name: str = "the text") -> str:
    """``text`` when :func:`read_source` accepts it: a text to export, checked as a restoration's."""
    read_source(text, limits, name)
    return text


def check_gap(gap: GapExample, limits: RequestLimits = DEFAULT_REQUEST_LIMITS) -> GapExample:
    """``gap`` (of a gap set) checked as a text is, its contexts cut to what is used
    (:func:`cut_context`): readable contexts within ``max_text_chars``, its hint within the
    limits, and no more than ``max_foreign_share`` of the kept context letters in other scripts.
    A short context is allowed (``min_greek_letters`` is not asked): the gap of a short document
    is a fair test item, and real gap sets hold some.

    Returns:
        the gap in restore's normal form (:func:`cut_context`), with at most
        :data:`~apollo_restore.restoration.context.DEFAULT_WINDOW` characters each side: what a
        restorer is given, as :func:`~apollo_restore.restoration.driver.restore_text` gives it.

    Raises:
        RequestError: ``E309`` or ``E312`` (naming the gap's id and side), ``E302``, ``E304`` or ``E308``.
    """
    if len(gap.prefix) + len(gap.suffix) > limits.max_text_chars:
        raise RequestError("E302", n=len(gap.prefix) + len(gap.suffix), limit=limits.max_text_chars)
    for side in ("prefix", "suffix"):
        check_characters(getattr(gap, side), f" of the {side} of gap {gap.id!r}")  # one regex search: cheap
        check_no_machine_reading(getattr(gap, side), f" of the {side} of gap {gap.id!r}")
    check_hint(gap.hint, gap.id, limits)
    # the letters as given (normalising drops other scripts), as far as they are read
    letter_warnings((gap.prefix[-DEFAULT_WINDOW:], gap.suffix[:DEFAULT_WINDOW]), _short_context_allowed(limits))
    return cut_context(gap)


def cut_context(gap: GapExample, window: int = DEFAULT_WINDOW) -> GapExample:
    """``gap`` with its prefix and suffix in restore's normal form
    (:func:`~apollo_restore.data.normalise.normalise_context`: an NFD and an NFC copy of one gap
    are one gap) and cut to the ``window`` characters next to the gap (the model reads about 250;
    parallels, notes and display use the rest). The raw context is cut first, to a few windows,
    so that no later work costs more for a longer context (a 990,000-character prefix costs what
    a short one does)."""
    raw = _RAW_WINDOWS * window  # a letter with its accents, breathing and underdot: at most a few code points
    prefix = normalise_context(gap.prefix[-raw:], "prefix")[-window:]
    suffix = normalise_context(gap.suffix[:raw], "suffix")[:window]
    if prefix == gap.prefix and suffix == gap.suffix:
        return gap
    return replace(gap, prefix=prefix, suffix=suffix)


@functools.cache
def _short_context_allowed(limits: RequestLimits) -> RequestLimits:
    """``limits`` asking no least number of Greek letters (made once, not once per gap)."""
    return limits.replace(min_greek_letters=0)
