"""Leiden plain text, as a scholar types or pastes it, to a :class:`Document` (docs/design.md,
*Documents*, *Restoration*).

Conventions understood (everything else is kept as text and left to the normaliser):

============================  =================================================
``[αβγ]``                     :class:`Supplied` (the editor's restoration)
``[.5]``, ``[.....]``         :class:`Lacuna` of 5 letters (one dot a letter: ``[...]`` is 3)
``[ca.5]``, ``[c.5]``         approximate length (``Lacuna(5, approximate=True)``)
``[.5-8]``                    a range (``Lacuna(5, length_max=8)``)
``[- - -]`` ``[---]`` ``[…]``  lost text of unknown extent (``Lacuna(None)``)
``[αβ .3]``, ``[αβ- - -]``    supplements and lacunae mixed inside one bracket
``??``, ``???``               one lost letter per ``?``, two or more (Ithaca style)
``[αὐτοῦ? τόπου]``, ``α?``    papyri.info Leiden+: one ``?`` is the editor's doubt, never a gap: the
                              word before it marked ``doubt`` (read as ever, written back)
``[.?]``, ``[ca.?]``          papyri.info Leiden+: lost letters, number unknown (``Lacuna(None)``)
``.3``, ``.?`` (no brackets)  Leiden+ illegible letters: 3, or an unknown number (``reason="illegible"``)
``lost.?lin``, ``lost.3lin``  Leiden+ lost lines (``Lacuna(None, lines=3)``; ``lines=-1``: how many unknown)
``.?lin``, ``.3lin``          Leiden+ illegible lines (``reason="illegible"``)
``α̣`` (U+0323 underdot)       ``Text(uncertain=True)``
``στρ(ατηγῷ)``                 expansion: ``Text(expansion=True)`` (read ``στρατηγῷ``; lines count ``στρ``)
``((denarius))``               symbol: ``Editorial(kind="symbol")`` (not read; written back)
``⟦αβ⟧``                      deletion: ``Editorial(kind="deleted")`` (not read)
``{αβ}``, ``\\αβ/``            surplus, addition above the line: ``Text(mark="surplus"|"above")`` (read)
``<αβ>``, ``⟨αβ⟩``            editorial addition (not written): ``Editorial(kind="omitted")`` (not read)
``1 ``, ``5.`` at line start  line numbers: dropped
newline, ``|``, stray ``/``   :class:`LineBreak`; ``-`` or ``=`` before a newline: in-word break
``vac.``, ``vacat``, ``vac.3``  :class:`Vacat` (not read)
============================  =================================================

Invisible characters are read as absent (:class:`~apollo_restore.data.visible.Visible`): format
characters (``Cf``: ZWJ, soft hyphen, RLO...) anywhere and combining marks on no letter, so
``[.\u200d8]`` is one 8-letter gap; offsets, lines and columns still refer to the text as given.

A run of dots counts letters, as editions write it (``[..]`` two, ``[...]`` three: unknown
extent is ``[- - -]``, ``[---]`` or ``[…]``), except one dot right after a letter
(``[ἔδοξεν.]``), which is a full stop. Malformed input (unbalanced or nested
brackets of one type, ``[.0]``, ``[.8-5]``, ``[]``, a stray ``]``) raises
:class:`~apollo_restore.errors.LeidenError` with the line and column of the problem.

:func:`find_gaps` lists each lacuna with its character span in the input and its length hint
(``None`` | ``int`` | ``(lo, hi)``): what a restorer needs to fill it in place.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, replace

from apollo_restore.data.document import (
    Document,
    Editorial,
    Lacuna,
    LineBreak,
    Segment,
    Supplied,
    Text,
    Vacat,
    merge_texts,
    same_kind,
    without_control,
)
from apollo_restore.data.visible import Visible
from apollo_restore.errors import Errors, LeidenError
from apollo_restore.hint import NO_HINT, Hint

#: Longest lacuna (letters) a length may state; longer ones are almost surely typos.
MAX_GAP_LENGTH = 1000
#: Relative tolerance turning ``ca.n`` into a range hint (at least one letter either side).
APPROXIMATE_TOLERANCE = 0.2

UNDERDOT = "\u0323"
_NEWLINES = frozenset("\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e")
_DASHES = "-\u2013\u2014"
# Brackets whose content is dropped: opener -> closer.
_DROPPED = {"(": ")", "⟦": "⟧", "<": ">", "⟨": "⟩", "〈": "〉"}
_KEPT_MARKS = frozenset("⸢⸣⌜⌝⸤⸥")  # half brackets and the like: the letters inside are kept

_LINE_NUMBER = re.compile(r"[ \t]*\d{1,4}[a-zA-Z]?[.:]?(?=[ \t]|$|[\n\r])[ \t]*")
_APPROX = re.compile(r"(?:ca\.?|c\.)[ \t]*(\d+)(?:[ \t]*[-\u2013][ \t]*(\d+))?")
_DOT_NUMBER = re.compile(r"\.[ \t]*(\d+)(?:[ \t]*[-\u2013][ \t]*(\d+))?")
_BARE_NUMBER = re.compile(r"(\d+)(?:[ \t]*[-\u2013][ \t]*(\d+))?")
_DOTS = re.compile(r"\.+")
_DASH_RUN = re.compile(r"[-\u2013\u2014](?:[ \t]*[-\u2013\u2014])*")
_QUERIES = re.compile(r"\?+")
_UNKNOWN_COUNT = re.compile(r"(?:ca\.?[ \t]*)?\.\?")  # Leiden+ '.?' / 'ca.?': a number unknown
_ILLEGIBLE = re.compile(r"\.(?:(\d+)|\?)(?!lin)")  # Leiden+ '.3' / '.?' outside brackets
_LOST_LINES = re.compile(r"lost\.(?:(\d+)|\?)lin\b")
_LOST_LINES_IN_RUN = re.compile(r"(?<![^\W\d_])lost\.(?:\d+|\?)lin\b")  # after a space in a run of letters
_ILLEGIBLE_LINES = re.compile(r"\.(?:(\d+)|\?)lin\b")
_WHITESPACE = re.compile(r"\s+")
# A run of characters none of which starts a convention (brackets, markers, dots, digits, 'c', 'v',
# line breaks, the underdot): read in one step, so that parsing stays fast on long texts.
_PLAIN_RUN = re.compile(
    r"[^\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029\d.cvV\[\](){}<>⟦⟧⟨⟩〈〉\\/|‖?=…\u2013\u2014\u0323⸢⸣⌜⌝⸤⸥-]+"
)
_VACAT = re.compile(r"vac(?:at|\.)?(?:[ \t]*(\d+)|[ \t]*\?)?(?![^\W\d_])", re.IGNORECASE)


@dataclass(frozen=True)
class GapMarker:
    """One lacuna of a Leiden text.

    Attributes:
        start: 0-based offset of the marker in the input. When the lacuna fills its bracket
            alone (``[.5]``, ``[- - -]``) the span includes the brackets; inside a mixed bracket
            (``[αβ .3]``) it covers only the lacuna (``.3``); for ``???`` the question marks.
        end: offset one past the marker.
        hint: letters in the lacuna (none when unknown; a range for ``[.5-8]`` and ``ca.``).
        lacuna: the segment parsed from the marker.
        bracket: ``(start, end)`` of the square brackets around the lacuna when it shares them
            with other letters or lacunae (``[αβ .3]``: the whole ``[αβ .3]``); ``None`` when the
            lacuna fills its bracket alone or stands outside any.
    """

    start: int
    end: int
    hint: Hint
    lacuna: Lacuna
    bracket: tuple[int, int] | None = None


def hint_of(lacuna: Lacuna) -> Hint:
    """Length hint of a lacuna: ``[.7]`` → exactly 7, ``[.5-8]`` → 5–8, ``[- - -]`` → none.

    ``ca.n`` becomes ``n`` ± :data:`APPROXIMATE_TOLERANCE` (rounded up, at least 1).
    """
    if lacuna.length is None:
        return NO_HINT
    if lacuna.length_max is not None:
        return Hint.span(lacuna.length, lacuna.length_max)
    if lacuna.approximate:
        slack = max(1, math.ceil(lacuna.length * APPROXIMATE_TOLERANCE))
        return Hint.span(max(1, lacuna.length - slack), lacuna.length + slack)
    return Hint.exact(lacuna.length)


def parse_leiden_with_gaps(text: str, doc_id: str = "user", source: str = "user") -> tuple[Document, list[GapMarker]]:
    """Parse Leiden plain text into a :class:`Document` and list its lacunae.

    Args:
        text: the edition as typed or pasted (any line-number style, any newline style).
        doc_id: id of the returned document.
        source: source of the returned document.

    Returns:
        ``(document, gaps)``: segments follow the table in this module's docstring; ``gaps``
        holds one :class:`GapMarker` per :class:`Lacuna` segment, in the same order.

    Raises:
        LeidenError: malformed brackets or lacuna lengths, with position, line and column.
    """
    visible = Visible.of(text)
    parser = _Parser(visible)
    parser.run()
    gaps = parser.gaps
    if visible.cut_at:  # marker spans in the text as given
        gaps = [
            replace(
                g,
                start=visible.original(g.start),
                end=visible.original(g.end - 1) + 1,
                bracket=None
                if g.bracket is None
                else (visible.original(g.bracket[0]), visible.original(g.bracket[1] - 1) + 1),
            )
            for g in gaps
        ]
    return Document(doc_id, source, tidy_segments(parser.segments)), gaps


def parse_leiden(text: str, doc_id: str = "user", source: str = "user") -> Document:
    """The document of :func:`parse_leiden_with_gaps`."""
    return parse_leiden_with_gaps(text, doc_id, source)[0]


def find_gaps(text: str) -> list[GapMarker]:
    """The gaps of :func:`parse_leiden_with_gaps`: every lacuna, left to right, with its span
    in ``text`` and its hint."""
    return parse_leiden_with_gaps(text)[1]


def _line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset ``pos``."""
    line = 1
    line_start = 0
    i = 0
    while i < pos:
        ch = text[i]
        if ch in _NEWLINES:
            if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
                i += 1
            line += 1
            line_start = i + 1
        i += 1
    return line, pos - line_start + 1


class _Parser:
    """One left-to-right pass over the visible text; brackets tracked by their opening offsets
    (in the visible text; errors give the line and column of the text as given)."""

    def __init__(self, visible: Visible) -> None:
        self.visible = visible
        self.text = visible.text
        self.i = 0
        self.segments: list[Segment] = []
        self.gaps: list[GapMarker] = []
        self.square: int | None = None  # offset of the open '[' (supplied / lacuna)
        self.square_gaps: list[int] = []  # indices into self.gaps opened in this bracket
        self.square_letters = False  # letters supplied in the current bracket
        self.curly: int | None = None  # '{' surplus
        self.addition: int | None = None  # '\' addition

    # -- errors -------------------------------------------------------------------------
    def error(self, template: str, pos: int, **fields: object) -> LeidenError:
        pos = self.visible.original(pos)
        line, column = _line_col(self.visible.source, pos)
        message = template.format(line=line, column=column, **fields)
        return LeidenError(message, pos, line, column)

    def nested(self, opener: str, pos: int, outer: int) -> LeidenError:
        outer_line, outer_column = _line_col(self.visible.source, self.visible.original(outer))
        return self.error(Errors.E003, pos, open=opener, outer_line=outer_line, outer_column=outer_column)

    # -- emitting -----------------------------------------------------------------------
    def emit_letters(self, s: str, uncertain: bool = False) -> None:
        if self.square is not None:
            self.segments.append(Supplied(s))
            if s.strip():
                self.square_letters = True
        else:
            mark = "surplus" if self.curly is not None else "above" if self.addition is not None else ""
            self.segments.append(Text(s, uncertain, mark=mark))

    def emit_lacuna(self, lacuna: Lacuna, start: int, end: int) -> None:
        self.segments.append(lacuna)
        self.gaps.append(GapMarker(start, end, hint_of(lacuna), lacuna))
        if self.square is not None:
            self.square_gaps.append(len(self.gaps) - 1)

    # -- main loop ----------------------------------------------------------------------
    def run(self) -> None:
        text = self.text
        n = len(text)
        self.skip_line_number()
        while self.i < n:
            ch = text[self.i]
            if ch in _NEWLINES:
                self.newline()
            elif ch == "[":
                self.open_square()
            elif ch == "]":
                self.close_square()
            elif ch == "(" and text.startswith("((", self.i):
                self.skip_dropped("((", "))")
            elif ch == "(":
                self.expansion()
            elif ch in _DROPPED:
                self.skip_dropped(ch, _DROPPED[ch])
            elif ch in ")⟧>⟩〉":
                opener = {")": "(", "⟧": "⟦", ">": "<", "⟩": "⟨", "〉": "〈"}[ch]
                raise self.error(Errors.E002, self.i, close=ch, open=opener)
            elif ch == "{":
                if self.curly is not None:
                    raise self.nested("{", self.i, self.curly)
                self.curly = self.i
                self.i += 1
            elif ch == "}":
                if self.curly is None:
                    raise self.error(Errors.E002, self.i, close="}", open="{")
                self.curly = None
                self.i += 1
            elif ch == "\\":
                if self.addition is not None:
                    raise self.nested("\\", self.i, self.addition)
                self.addition = self.i
                self.i += 1
            elif ch == "/":
                if self.addition is not None:
                    self.addition = None
                else:  # a stray slash separates lines, as '|' does
                    self.segments.append(LineBreak(False))
                self.i += 1
            elif ch in "|‖":
                self.segments.append(LineBreak(False))
                self.i += 1
            elif ch in _KEPT_MARKS:
                self.i += 1
            elif ch == "?":
                m = _QUERIES.match(text, self.i)
                assert m is not None
                if m.end() - m.start() == 1:  # papyri.info's mark of the editor's doubt
                    self.doubt()
                else:
                    self.check_run(m)
                    self.emit_lacuna(Lacuna(m.end() - m.start()), m.start(), m.end())
                self.i = m.end()
            elif ch in _DASHES or ch == "=":
                self.dash()
            elif ch == "…" and self.square is not None:
                self.emit_lacuna(Lacuna(None), self.i, self.i + 1)
                self.i += 1
            elif self.square is not None and self.lacuna_spec():
                pass
            elif ch in "vV" and self.vacat():
                pass
            elif ch == "." and self.illegible():
                pass
            elif ch == "l" and self.lost_lines():
                pass
            elif ch.isspace():
                while self.i < n and text[self.i].isspace() and text[self.i] not in _NEWLINES:
                    self.i += 1
                self.emit_letters(" ")
            else:
                self.letters()
        self.finish()

    def finish(self) -> None:
        for opened, opener in ((self.square, "["), (self.curly, "{"), (self.addition, "\\")):
            if opened is not None:
                raise self.error(Errors.E001, opened, open=opener)

    def skip_line_number(self) -> None:
        m = _LINE_NUMBER.match(self.text, self.i)
        if m:
            self.i = m.end()

    def newline(self) -> None:
        if self.text[self.i] == "\r" and self.text.startswith("\r\n", self.i):
            self.i += 1
        self.i += 1
        self.segments.append(LineBreak(False))
        self.skip_line_number()

    def letters(self) -> None:
        """A run of plain letters at once (its last cluster alone when an underdot follows it),
        else one :meth:`letter`."""
        m = _PLAIN_RUN.match(self.text, self.i)
        end = m.end() if m else self.i
        lost = _LOST_LINES_IN_RUN.search(self.text, self.i + 1, end + 16) if end > self.i else None
        if lost is not None and lost.start() < end:  # 'τοῦ lost.2lin': the run stops before the lost lines
            end = lost.start()
        if end < len(self.text) and self.text[end] == UNDERDOT:
            while end > self.i and unicodedata.combining(self.text[end - 1]):
                end -= 1
            end -= 1  # the base letter of the underdotted cluster
        if end > self.i:
            self.emit_letters(self.text[self.i : end])
            self.i = end
        else:
            self.letter()

    def letter(self) -> None:
        """One base character with its combining marks; underdot = uncertain reading."""
        text = self.text
        j = self.i + 1
        while j < len(text) and unicodedata.combining(text[j]):
            j += 1
        cluster = text[self.i : j]
        uncertain = UNDERDOT in cluster
        self.emit_letters(cluster.replace(UNDERDOT, ""), uncertain)
        self.i = j

    def doubt(self) -> None:
        """One ``?``: the editor's doubt about the word just read (``[αὐτοῦ? τόπου]``,
        ``[Καισα?]ριανῷ``, ``[αὐτοῦ]?``, ``ἔτους ?``), never a lost letter (papyri.info writes
        one as ``.1``; a run ``??`` is read as lost letters). Its last letters up to a space are
        marked ``doubt`` (a supplement's or letters read); after a lacuna or alone in its
        brackets (``[?]``) there is nothing to mark."""
        seg = self.segments[-1] if self.segments else None
        if not isinstance(seg, (Text, Supplied)) or not seg.text.strip():
            return
        head, space, word = seg.text.rstrip(" ").rpartition(" ")
        self.segments[-1] = replace(seg, text=word, doubt=True)
        if head or space:
            self.segments.insert(len(self.segments) - 1, replace(seg, text=head + space))

    def dash(self) -> None:
        """``-``/``=`` before a newline: in-word break; other dash runs: unknown lacuna."""
        text = self.text
        start = self.i
        m = _DASH_RUN.match(text, start)
        single = text[start] == "=" or (m is not None and m.end() - start == 1)
        end = start + 1 if text[start] == "=" else m.end()  # type: ignore[union-attr]
        after = end
        while after < len(text) and text[after] in " \t":
            after += 1
        at_line_end = after >= len(text) or text[after] in _NEWLINES
        glued = start > 0 and not text[start - 1].isspace()
        if single and at_line_end and (glued or text[start] == "="):
            self.segments.append(LineBreak(True))
            self.i = after
            if self.i < len(text):
                if text[self.i] == "\r" and text.startswith("\r\n", self.i):
                    self.i += 1
                self.i += 1
                self.skip_line_number()
            return
        if text[start] == "=":
            self.emit_letters("=")
            self.i = end
            return
        self.emit_lacuna(Lacuna(None), start, end)
        self.i = end

    def illegible(self) -> bool:
        """Outside brackets, Leiden+ ``.3`` (three illegible letters) or ``.?``: a lacuna."""
        lines = _ILLEGIBLE_LINES.match(self.text, self.i)
        if lines and not (self.i > 0 and (self.text[self.i - 1].isalnum())):
            count = self.number(lines.group(1), lines.start(1), lines.group(0)) if lines.group(1) else -1
            self.emit_lacuna(Lacuna(None, reason="illegible", lines=count), lines.start(), lines.end())
            self.i = lines.end()
            return True
        m = _ILLEGIBLE.match(self.text, self.i)
        after_illegible = bool(self.gaps) and self.gaps[-1].end == self.i and self.gaps[-1].lacuna.reason == "illegible"
        if not m or (self.i > 0 and self.text[self.i - 1].isdigit() and not after_illegible):  # '.4.1': two
            return False
        length = self.number(m.group(1), m.start(1), m.group(0)) if m.group(1) else None
        self.emit_lacuna(Lacuna(length, reason="illegible"), m.start(), m.end())
        self.i = m.end()
        return True

    def lost_lines(self) -> bool:
        """Leiden+ ``lost.?lin`` / ``lost.3lin``: lost lines, their letters of unknown extent."""
        m = _LOST_LINES.match(self.text, self.i)
        if not m or (self.i > 0 and self.text[self.i - 1].isalpha()):
            return False
        lines = self.number(m.group(1), m.start(1), m.group(0)) if m.group(1) else -1
        self.emit_lacuna(Lacuna(None, lines=lines), m.start(), m.end())
        self.i = m.end()
        return True

    def vacat(self) -> bool:
        m = _VACAT.match(self.text, self.i)
        if not m or (self.i > 0 and self.text[self.i - 1].isalpha()):
            return False
        self.segments.append(Vacat(int(m.group(1)) if m.group(1) and len(m.group(1)) <= 6 else None))
        self.i = m.end()
        return True

    # -- brackets -----------------------------------------------------------------------
    def open_square(self) -> None:
        if self.square is not None:
            raise self.nested("[", self.i, self.square)
        self.square = self.i
        self.square_letters = False
        self.square_gaps = []
        self.i += 1

    def close_square(self) -> None:
        if self.square is None:
            raise self.error(Errors.E002, self.i, close="]", open="[")
        if not self.text[self.square + 1 : self.i].strip():
            raise self.error(Errors.E004, self.square, open="[", close="]")
        # A lacuna alone in its bracket: its marker spans the brackets too.
        if len(self.square_gaps) == 1 and not self.square_letters:
            k = self.square_gaps[0]
            g = self.gaps[k]
            self.gaps[k] = GapMarker(self.square, self.i + 1, g.hint, g.lacuna)
        else:
            for k in self.square_gaps:
                self.gaps[k] = replace(self.gaps[k], bracket=(self.square, self.i + 1))
        self.square = None
        self.i += 1

    def expansion(self) -> None:
        """An abbreviation's expansion ``(ατηγῷ)``: its letters kept as :class:`Text` marked
        ``expansion`` (the model reads the word whole; line lengths do not count them)."""
        start = self.i
        self.skip_dropped("(", ")")
        inner = self.text[start + 1 : self.i - 1]
        if inner.strip() == "?":  # 'ἀπὸ(?)': the editor's doubt about the word before
            self.doubt()
            return
        letters = "".join(ch for ch in inner if ch not in _NEWLINES and ch not in "?-")  # (?): a doubt, no letters
        if any(ch.isalpha() for ch in letters):
            self.segments.append(Text(letters, expansion=True, doubt="?" in inner))

    def skip_dropped(self, opener: str, closer: str) -> None:
        """Skip an expansion, symbol, deletion or editorial addition, keeping its line breaks."""
        text = self.text
        start = self.i
        j = start + len(opener)
        while j < len(text):
            if text.startswith(closer, j):
                break
            if opener != "((" and text.startswith(opener, j):
                raise self.nested(opener, j, start)
            j += 1
        else:
            raise self.error(Errors.E001, start, open=opener)
        inner = text[start + len(opener) : j]
        if opener == "(" and closer == ")" and "(" in inner:
            raise self.nested("(", start + len(opener) + inner.index("("), start)
        kind = {"⟦": "deleted", "<": "omitted", "⟨": "omitted", "〈": "omitted", "((": "symbol"}.get(opener, "")
        for k, part in enumerate(re.split(r"\r\n|[\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e]", inner)):
            if k:
                self.segments.append(LineBreak(False))
            if kind and part.strip():
                self.segments.append(Editorial(part.strip(), kind))
        self.i = j + len(closer)

    def lacuna_spec(self) -> bool:
        """Inside ``[ ]``: read ``ca.5``, ``.5``, ``.5-8``, ``.....``, ``5`` if one starts here."""
        text = self.text
        i = self.i
        prev_letter = i > 0 and text[i - 1].isalpha()
        m = _UNKNOWN_COUNT.match(text, i)
        if m and not (prev_letter and text[i] != "."):
            self.emit_lacuna(Lacuna(None), m.start(), m.end())
            self.i = m.end()
            return True
        for pattern, approximate in ((_APPROX, True), (_DOT_NUMBER, False), (_BARE_NUMBER, False)):
            if approximate and prev_letter:
                continue  # 'c.' inside a word is a letter, not circa
            m = pattern.match(text, i)
            if m:
                lo = self.number(m.group(1), m.start(1), m.group(0))
                hi = self.number(m.group(2), m.start(2), m.group(0)) if m.group(2) else None
                if hi is not None and hi < lo:
                    raise self.error(Errors.E006, m.start(), spec=m.group(0))
                if hi == lo:
                    hi = None
                self.emit_lacuna(Lacuna(lo, length_max=hi, approximate=approximate), m.start(), m.end())
                self.i = m.end()
                return True
        m = _DOTS.match(text, i)
        if m:
            count = m.end() - m.start()
            if count == 1 and prev_letter:
                return False  # '[ἔδοξεν.]': a full stop after a word, not a lost letter
            self.check_run(m)
            self.emit_lacuna(Lacuna(count), m.start(), m.end())
            self.i = m.end()
            return True
        return False

    def check_run(self, m: re.Match) -> None:
        """A run of dots or question marks counts letters: no more than :data:`MAX_GAP_LENGTH`."""
        if m.end() - m.start() > MAX_GAP_LENGTH:
            raise self.error(Errors.E007, m.start(), spec=f"{m.group()[0]}×{m.end() - m.start()}", limit=MAX_GAP_LENGTH)

    def number(self, digits: str, pos: int, spec: str) -> int:
        if len(digits) > 6 or int(digits) > MAX_GAP_LENGTH:
            raise self.error(Errors.E007, pos, spec=spec, limit=MAX_GAP_LENGTH)
        value = int(digits)
        if value < 1:
            raise self.error(Errors.E005, pos, spec=spec)
        return value


#: Segments a reader keeps but the model never reads: no letters, no line.
_UNREAD = (Editorial, Vacat)


def _blank(seg: Segment) -> bool:
    """A segment that is never read (:data:`_UNREAD`), or spaces alone (left apart from their
    neighbours by one that is never read)."""
    return isinstance(seg, _UNREAD) or (isinstance(seg, Text) and not seg.text.strip(" "))


def _after_supplements(segments: list[Segment]) -> list[Segment]:
    """A blank space or an editor's mark inside a supplement (``<supplied>αβ <space/> γδ</supplied>``)
    moved after it, so that the supplement stays one (as the model has always read it)."""
    out: list[Segment] = []
    held: list[Segment] = []
    for seg in segments:
        if isinstance(seg, _UNREAD) and (held or (out and isinstance(out[-1], Supplied))):
            held.append(seg)
            continue
        if held and not isinstance(seg, Supplied):
            out += held
            held = []
        out.append(seg)
    return out + held


def tidy_segments(segments: list[Segment]) -> list[Segment]:
    """Canonical form of a segment list, shared by the readers.

    Control characters are dropped (:func:`~apollo_restore.data.document.without_control`);
    spaces at the edges of a supplement move out into the text around it; whitespace runs
    become one space; neighbours of one kind merge (:func:`merge_texts`); repeated plain line
    breaks become one; spaces touching a line break or an end of the text (across a blank
    space or an editor's mark), and line breaks at either end, are dropped (``render`` would
    ignore them; for in-word breaks they would split the word).
    """
    split: list[Segment] = []
    for seg in merge_texts(_after_supplements(segments)):
        if isinstance(seg, (Text, Supplied)):
            # control characters are never read: a space before one still touches the line break after it
            s = _WHITESPACE.sub(" ", without_control(seg.text))
            if isinstance(seg, Supplied):
                core = s.strip(" ")
                if s[:1] == " ":
                    split.append(Text(" "))
                if core:
                    split.append(replace(seg, text=core))
                if core and s[-1:] == " ":
                    split.append(Text(" "))
            elif s:
                split.append(replace(seg, text=s))
        elif isinstance(seg, LineBreak) and split and split[-1] == seg == LineBreak(False):
            continue
        else:
            split.append(seg)
    merged = [
        replace(seg, text=_WHITESPACE.sub(" ", seg.text)) if isinstance(seg, Text) else seg
        for seg in merge_texts(split)
    ]
    out: list[Segment] = []
    for k, seg in enumerate(merged):
        if isinstance(seg, (Text, Supplied)):
            # what a blank space or an editor's mark (never read) stands between does not count
            prev = next((p for p in reversed(out) if not _blank(p)), None)
            nxt = next((merged[j] for j in range(k + 1, len(merged)) if not _blank(merged[j])), None)
            s = seg.text
            if prev is None or isinstance(prev, LineBreak) or (not s.strip() and isinstance(nxt, LineBreak)):
                s = s.lstrip(" ")
            if nxt is None or isinstance(nxt, LineBreak):
                s = s.rstrip(" ")
            if not s:
                continue
            if isinstance(seg, Text) and out and out[-1] is prev and isinstance(prev, Text) and same_kind(prev, seg):
                out[-1] = replace(seg, text=prev.text + s)  # neighbours again after a drop
            else:
                out.append(replace(seg, text=s))
        elif isinstance(seg, LineBreak) and out and out[-1] == seg == LineBreak(False):
            continue
        else:
            out.append(seg)
    while out and isinstance(out[0], LineBreak):
        out.pop(0)
    while out and isinstance(out[-1], LineBreak):
        out.pop()
    return out
