"""Documents as sequences of Leiden segments, and their renderings (docs/design.md, *Documents*, *Normalised text*).

A :class:`Document` is what every reader yields (Leiden, EpiDoc, Beta Code, the corpora). Its
``segments`` keep the editorial distinctions: letters read (certain or not, abbreviated and
expanded, surplus, added above or below the line), letters supplied by the editor, lost or
illegible letters and lost lines with the extent the edition gives, letters the editor adds
that the scribe omitted or the scribe deleted (:class:`Editorial`), blank space
(:class:`Vacat`), line breaks (in a word or not). So one document can be rendered as training
text, as the uncertain-excluded variant, as a list of supplied ("silver") spans, as Leiden for
display (:func:`to_leiden`) or as EpiDoc (:mod:`apollo_restore.restoration.export`). What the model reads
(:func:`render`) is the same whichever reader made the document: :class:`Editorial` and
:class:`Vacat` render to nothing, surplus and added letters as letters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from apollo_restore.data.normalise import GAP_CHAR, UNKNOWN_GAP, fix_final_sigma, fold, seam

SOURCES = ("ddb", "dclp", "inscription", "literary", "user")
#: Longest lacuna a corpus may state (letters); a longer or unreadable length is read as
#: unknown extent, so that one absurd attribute can neither overflow nor build a huge row.
MAX_LACUNA_LETTERS = 1000


@dataclass(frozen=True)
class Text:
    """Letters on the artifact, as read by the editor. ``uncertain`` = underdotted.

    ``expansion``: letters an editor's expansion adds to an abbreviation (``στρ(ατηγῷ)``: ``ατηγῷ``),
    never written on the artifact. A user's Leiden text keeps them, so the model reads the word
    whole (chosen on validation: BENCHMARKS.md, "Abbreviations in the context"); line lengths do
    not count them. The training readers drop them.
    """

    text: str
    uncertain: bool = False
    expansion: bool = False
    #: ``""``; ``"surplus"`` (``{αβ}``, ``<surplus>``); ``"above"`` / ``"below"``: added by the
    #: scribe above or below the line (``\\αβ/``, ``<add place="above">``). Read as letters.
    mark: str = ""
    #: the editor's doubt about the word (Leiden+ ``αὐτοῦ?``): read as letters, written back.
    doubt: bool = False


@dataclass(frozen=True)
class Editorial:
    """Letters an edition prints that are not read as the text: ``kind`` ``"omitted"`` (the
    editor adds what the scribe left out: ``<τῶν>``, ``<supplied reason="omitted">``),
    ``"deleted"`` (the scribe struck them out: ``⟦τῶν⟧``, ``<del>``) or ``"symbol"`` (a sign the
    edition names: ``((denarius))``, ``<g type="denarius"/>``). Never read by the model."""

    text: str
    kind: str = "omitted"


@dataclass(frozen=True)
class Vacat:
    """Blank space left by the scribe (``vac.``, ``vac.3``, ``<space>``): ``quantity`` letters'
    width, or ``None`` when the edition gives none. Renders to nothing."""

    quantity: int | None = None


@dataclass(frozen=True)
class Supplied:
    """The editor's restoration of lost text (``[αβγ]``): a silver label, never a fact.
    ``doubt``: the editor marks it doubtful (Leiden+ ``[αὐτοῦ?]``, EpiDoc ``cert="low"``); read
    as the other supplements are."""

    text: str
    doubt: bool = False


@dataclass(frozen=True)
class Lacuna:
    """Lost text, not restored: ``length`` letters, or ``None`` for unknown extent.

    ``length_max`` is set for an estimated range (``[.5-8]``); ``approximate`` for ``ca.``.
    ``reason``: ``"lost"`` (``[.3]``, ``<gap reason="lost">``) or ``"illegible"`` (Leiden+ ``.3``
    outside brackets, ``<gap reason="illegible">``). ``lines`` is set for lost lines
    (``lost.2lin``, ``<gap unit="line" quantity="2">``): ``-1`` when their number is not given;
    their letters are then unknown (``length`` is ``None``), as for ``[- - -]``.
    """

    length: int | None
    length_max: int | None = None
    approximate: bool = False
    reason: str = "lost"
    lines: int | None = None

    @property
    def line_unit(self) -> bool:
        """Whether the lacuna is of whole lines (``lost.2lin``, ``lost.?lin``)."""
        return self.lines is not None


@dataclass(frozen=True)
class LineBreak:
    """A line boundary; ``in_word`` when the line breaks inside a word (``break="no"``)."""

    in_word: bool = False


Segment = Text | Supplied | Lacuna | LineBreak | Editorial | Vacat


@dataclass
class Document:
    """One edition of one text.

    Attributes:
        id: stable identifier within its source (e.g. ``bgu.1.100``).
        source: one of :data:`SOURCES`.
        segments: the edition, in reading order.
        meta: Trismegistos id (``tm``), date (``date``: year, negative BC), place, literary
            ``work`` (parts of one work share it), ... where known.
    """

    id: str
    source: str
    segments: list[Segment]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def group(self) -> str:
        """Key that keeps editions of one text in one split: the TM id where known."""
        if self.meta.get("tm"):
            return f"tm:{self.meta['tm']}"
        if self.meta.get("work"):
            return f"{self.source}:work:{self.meta['work']}"
        return f"{self.source}:{self.id}"


def lacuna_length(value: str | None) -> tuple[int | None, str]:
    """A stated lacuna length → ``(letters, "")``, or ``(None, reason)`` when the value is not
    a count from 1 to :data:`MAX_LACUNA_LETTERS` (``None`` and ``""`` give no reason)."""
    if value is None or not value.strip():
        return None, ""
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None, f"length {value!r} is not a number: read as unknown extent"
    if not 1 <= number <= MAX_LACUNA_LETTERS:  # NaN and ±inf fail too
        return None, f"length {value!r} is outside 1–{MAX_LACUNA_LETTERS} letters: read as unknown extent"
    return int(number), ""


def same_kind(a: Text, b: Text) -> bool:
    """Two letter runs that may join: equally certain, both expansions or neither, one mark."""
    return a.uncertain == b.uncertain and a.expansion == b.expansion and a.mark == b.mark and a.doubt == b.doubt


def merge_texts(segments: list[Segment]) -> list[Segment]:
    """Join adjacent :class:`Text` segments of one kind (certainty, expansion), and adjacent supplements.

    Each run is joined once, so the time is linear in the total text length.
    """
    out: list[Segment] = []
    run: list[Segment] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            joined = "".join(seg.text for seg in run)  # type: ignore[union-attr]
            out.append(replace(run[0], text=joined))
        run.clear()

    for seg in segments:
        prev = run[-1] if run else None
        same_text = isinstance(seg, Text) and isinstance(prev, Text) and same_kind(prev, seg)
        same_supplied = isinstance(seg, Supplied) and isinstance(prev, Supplied) and seg.doubt == prev.doubt
        if not (same_text or same_supplied):
            flush()
        if isinstance(seg, (Text, Supplied)):
            run.append(seg)
        else:
            out.append(seg)
    flush()
    return out


@dataclass(frozen=True)
class Span:
    """A character span ``[start, end)`` of a rendered text, with its normalised letters."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Rendering:
    """Normalised text of a document plus the positions of the editor's supplements."""

    text: str
    supplied: list[Span]


def _pieces(segments: list[Segment], uncertain_as_gap: bool) -> Iterator[tuple[str, bool]]:
    """Yield (folded text, is_supplied) pieces; gap markers appear as-is."""
    for seg in segments:
        if isinstance(seg, Text):
            if seg.uncertain and uncertain_as_gap:
                letters = sum(ch.isalpha() for ch in fold(seg.text))
                yield GAP_CHAR * letters, False
            else:
                yield fold(seg.text), False
        elif isinstance(seg, Supplied):
            yield fold(seg.text), True
        elif isinstance(seg, Lacuna):
            yield (GAP_CHAR * seg.length if seg.length and not seg.length_max else UNKNOWN_GAP), False
        elif isinstance(seg, LineBreak):
            yield ("" if seg.in_word else " "), False


def read_segments(segments: list[Segment]) -> list[Segment]:
    """The segments as the model reads them: :class:`Editorial` and :class:`Vacat` left out,
    surplus and added letters as plain letters, and the letter runs this leaves side by side
    joined (so that the normaliser sees ``ἄνδρα <space/>.`` as ``ἄνδρα .``, one run)."""
    read = [
        replace(seg, mark="") if isinstance(seg, Text) and seg.mark else seg
        for seg in segments
        if not isinstance(seg, (Editorial, Vacat))
    ]
    return merge_texts(read)


def render(doc: Document, uncertain_as_gap: bool = False) -> Rendering:
    """Training text of ``doc``: supplements in-filled, lacunae as ``-``×n or ``…``.

    Args:
        doc: the document.
        uncertain_as_gap: the *uncertain-excluded* variant (App. E): underdotted letters
            become ``-`` (one per letter) instead of context.

    Returns:
        A :class:`Rendering` whose ``text`` is ``norm.v1`` text (idempotent under
        :func:`~apollo_restore.data.normalise.normalise_with_gaps`) and whose ``supplied``
        spans index into it. A lacuna of estimated range renders as ``…``.
    """
    out: list[str] = []
    supplied: list[tuple[int, int]] = []
    length = 0
    for piece, is_supplied in _pieces(read_segments(doc.segments), uncertain_as_gap):
        # one space between words and one "· " per punctuation run across piece boundaries too
        drop, piece = seam(out[-1][-2:] if out else "", piece)
        if drop:
            out[-1] = out[-1][:-drop]
            length -= drop
            if not out[-1]:
                out.pop()
        if not piece:
            continue
        start = length
        out.append(piece)
        length += len(piece)
        if is_supplied:
            lead = len(piece) - len(piece.lstrip(" "))
            trail = len(piece) - len(piece.rstrip(" "))
            if lead + trail < len(piece):
                if supplied and supplied[-1][1] == start + lead:
                    supplied[-1] = (supplied[-1][0], length - trail)
                else:
                    supplied.append((start + lead, length - trail))
    text = fix_final_sigma("".join(out))
    # strip trailing space (leading ones were never emitted)
    stripped = text.rstrip(" ")
    spans = [Span(s, min(e, len(stripped)), stripped[s : min(e, len(stripped))]) for s, e in supplied]
    return Rendering(stripped, [sp for sp in spans if sp.text.strip()])


# Characters a Leiden reader would take for markup (brackets, gap and line markers, numbers
# that may read as line numbers or lengths) or refuse (control characters): in an edition's
# letters they are punctuation at most, and the normaliser makes any punctuation one "·".
_LEIDEN_SYNTAX = re.compile(r"[\[\](){}<>⟦⟧⟨⟩〈〉\\/|‖?=…\-\u2013\u2014⸢⸣⌜⌝⸤⸥.]|\d+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_VACAT_WORD = re.compile(r"(?<![^\W\d_])vac(?:at)?(?![^\W\d_])", re.IGNORECASE)


def without_control(text: str) -> str:
    """``text`` without control characters (line and other separators become spaces), as the
    normaliser and :func:`leiden_escape` read it."""
    return _CONTROL.sub(lambda m: " " if m.group().isspace() else "", text)


def leiden_escape(text: str) -> str:
    """Letters of an edition, safe to write between Leiden markup: syntax characters become
    ``·``, digits, the Latin word *vac(at)* and control characters are dropped (line and
    other separators become spaces), as the normaliser does, so that parsing the Leiden text again gives back the same
    letters and no markup that was not there."""
    text = without_control(text)  # as the normaliser does
    text = _LEIDEN_SYNTAX.sub(lambda m: "" if m.group()[0].isdigit() else "·", text)
    return _VACAT_WORD.sub("", text)


def to_leiden(segments: list[Segment]) -> str:
    """Render segments in Leiden conventions for display: letters as the edition gives them,
    passed through :func:`leiden_escape`, so that the result always parses back to the same
    letters and gaps."""
    out: list[str] = []
    for k, seg in enumerate(segments):
        if isinstance(seg, Text):
            text = leiden_escape(seg.text)
            text = "".join(c + "\u0323" if c.isalpha() else c for c in text) if seg.uncertain else text
            if text.strip():
                text += "?" if seg.doubt else ""
                if seg.expansion:
                    text = f"({text})"
                elif seg.mark == "surplus":
                    text = f"{{{text}}}"
                elif seg.mark in ("above", "below"):  # Leiden's one mark for an addition: \αβ/
                    text = f"\\{text}/"
            out.append(text)
        elif isinstance(seg, Supplied):
            supplied = leiden_escape(seg.text)
            doubt = "?" if seg.doubt else ""
            out.append(f"[{supplied}{doubt}]" if supplied.strip() else supplied)
        elif isinstance(seg, Editorial):
            letters = leiden_escape(seg.text).strip()
            if letters:
                out.append({"deleted": f"⟦{letters}⟧", "symbol": f"(({letters}))"}.get(seg.kind, f"<{letters}>"))
        elif isinstance(seg, Vacat):
            before = bool(out) and out[-1][-1:] not in ("", " ", "\n")
            after = _starts_glued(segments[k + 1 :])
            if not (before and after):  # inside a word, a vacat would split it: not written
                written = f"vac.{seg.quantity}" if seg.quantity else "vac."
                out.append((" " if before else "") + written + (" " if after else ""))
        elif isinstance(seg, Lacuna):
            out.append(lacuna_leiden(seg))
        elif isinstance(seg, LineBreak):
            glued = bool(out) and out[-1][-1:] not in ("", " ", "\n")
            out.append(("-\n" if glued else "=\n") if seg.in_word else "\n")  # a lone '-' would read as a gap
    return "".join(out)


def _starts_glued(rest: list[Segment]) -> bool:
    """Whether the letters after a point start at once (no space or line break between)."""
    for seg in rest:
        if isinstance(seg, (Text, Supplied)):
            return bool(seg.text) and not seg.text[0].isspace()
        if isinstance(seg, (Lacuna, LineBreak)):
            return False
    return False


def lacuna_leiden(lacuna: Lacuna) -> str:
    """A lacuna in Leiden: ``[.5]``, ``[ca.5]``, ``[.5-8]``, ``[- - -]``; illegible letters
    ``.5`` / ``.?`` (Leiden+, outside brackets); lost lines ``lost.2lin`` / ``lost.?lin``. An
    illegible lacuna of a range or a ``ca.`` extent is written as lost (Leiden+ has no such mark)."""
    if lacuna.line_unit:
        count = lacuna.lines if lacuna.lines and lacuna.lines > 0 else "?"
        return f".{count}lin" if lacuna.reason == "illegible" else f"lost.{count}lin"
    if lacuna.reason == "illegible" and not lacuna.length_max and not lacuna.approximate:
        return f".{lacuna.length}" if lacuna.length else ".?"
    if lacuna.length is None:
        return "[- - -]"
    if lacuna.length_max:
        return f"[{'ca.' if lacuna.approximate else '.'}{lacuna.length}-{lacuna.length_max}]"
    if lacuna.approximate:
        return f"[ca.{lacuna.length}]"
    return f"[.{lacuna.length}]"
