"""Export a Leiden text with machine-proposed readings marked as such (paper, Ethics Statement).

A reading proposed by the model must never pass as the editor's. Both formats therefore keep
every machine reading apart from the editor's supplements:

**Leiden** — the text goes out as it came in: only the spans of the gaps with a chosen reading
change (:mod:`apollo_restore.data.splice`); line numbers, ``vac.``, ``<αβ>``, ``{αβ}``,
``⟦αβ⟧``, expansions, underdots, punctuation and open gaps stay as written, and with no reading
chosen the export *is* the input, byte for byte. A machine reading is written ``⁅κομω⁆`` (as
the restored text writes it, never in the editor's ``[ ]``), followed at once by the marker
``⁽ᵐⁿ⁾`` (superscript *m* for *machine* and the reading's number *n*). The text is followed by
a blank line and an apparatus that names the tool, its version, the model and the model's
fingerprint (:func:`credit`: what to cite) and lists each marked reading
with its gap, its line (the number the text gives it), the lacuna as written and its probability::

    1 Πεκύσι ⁅κομω⁆⁽ᵐ¹⁾ χαίρειν

    ⁽ᵐ⁾ Machine-proposed readings (apollo-restore 0.1.0, model «tiny», fingerprint 3f2a…): not the editor's; unverified.
    ⁽ᵐ¹⁾ gap 1, line 1, [.4]: κομω (42 %); alternatives: κωμη (10 %), ...

Readings are written in edition form (accents, breathings, iota subscript) when the caller
gives one (:attr:`MachineReading.text`), else as the normalised letters. A text holding
``⁅ ⁆`` is refused (``E312``): the export cannot be read back as the papyrus's letters.

The editor's own supplements ``[αβγ]`` stay unmarked; gaps without a chosen reading stay as
they were (``[.4]``, ``[---]``).

**EpiDoc** — a machine reading is ``<supplied reason="lost" resp="#apollo-restore"
cert="low">`` followed by ``<note type="machine-proposal" resp="#apollo-restore">``; the
header's ``<respStmt xml:id="apollo-restore">`` states that those readings are machine
proposals, not the editor's. The editor's supplements are ``<supplied reason="lost">`` without
``@resp``. A reading exported with alternatives becomes a machine apparatus entry, the
convention editions use for alternative restorations::

    <app type="alternative" resp="#apollo-restore">
      <lem resp="#apollo-restore" cert="low">
        <supplied reason="lost" resp="#apollo-restore" cert="low">κυρίου</supplied></lem>
      <rdg resp="#apollo-restore" cert="low"><supplied ...>θεοῦ</supplied></rdg>
    </app><note type="machine-proposal" resp="#apollo-restore">... 42 %; alternatives: θεοῦ 13 % ...</note>
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from xml.parsers.expat import ExpatError

from lxml import etree

from apollo_restore.data.document import Editorial, Lacuna, LineBreak, Segment, Supplied, Text, Vacat
from apollo_restore.data.readers.epidoc import lacuna_elements, machine_holder, machine_original, xml_parser
from apollo_restore.data.readers.leiden import find_gaps, parse_leiden
from apollo_restore.data.readers.typed import as_leiden, looks_like_xml
from apollo_restore.data.splice import Fill, splice
from apollo_restore.data.xmlspans import element_spans, splice_bytes
from apollo_restore.errors import RequestError
from apollo_restore.restoration.request import check_letters_gap, check_reading, check_source
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS, RequestLimits
from apollo_restore.schema.restoration import percent
from apollo_restore.version import __version__

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_NS = "http://www.w3.org/XML/1998/namespace"
RESP_ID = "apollo-restore"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_LINE_NUMBER = re.compile(r"[ \t]*(\d{1,4})[a-zA-Z]?[.:]?[ \t]")
_NEWLINE = re.compile(r"\r\n|[\n\r]")
#: The formats a text is exported in.
FORMATS = ("leiden", "epidoc")


@dataclass(frozen=True)
class Alternative:
    """Another machine-proposed reading of the same gap: its letters as written, and probability."""

    text: str
    prob: float | None = None


@dataclass(frozen=True)
class MachineReading:
    """A reading chosen for gap number ``gap`` (counted from 1), with its probability when known.

    Attributes:
        text: the reading as it is to be written (edition form where known).
        alternatives: other readings of the gap, best first (exported as ``<rdg>``s and in the
            Leiden apparatus).
    """

    gap: int
    text: str
    prob: float | None = None
    alternatives: tuple[Alternative, ...] = ()


def _p(prob: float | None) -> str:
    """A probability as the page shows it (:func:`~apollo_restore.schema.restoration.percent`)."""
    return percent(prob) if prob is not None else "probability unknown"


def marker(n: int) -> str:
    """The Leiden marker of the ``n``-th machine reading: ``⁽ᵐ¹⁾``, ``⁽ᵐ¹²⁾``..."""
    return f"⁽ᵐ{str(n).translate(_SUPERSCRIPT)}⁾"


def credit(model: str, fingerprint: str | None) -> str:
    """What made a machine reading, as every export names it: ``apollo-restore 0.1.0, model
    «default (…)», fingerprint 3f…`` (the package version and the model folder's
    :func:`~apollo_restore.model.folder.fingerprint`: what to cite)."""
    return f"apollo-restore {__version__}, model «{model}», fingerprint {fingerprint or 'unknown'}"


def _note(who: str, reading: MachineReading) -> str:
    p = f", {percent(reading.prob)}" if reading.prob is not None else ""
    alts = (
        "; alternatives: " + ", ".join(f"{a.text} {_p(a.prob)}" for a in reading.alternatives)
        if reading.alternatives
        else ""
    )
    return f"Machine proposal ({who}{p}{alts}); not the editor's reading, unverified."


def count_gaps(text: str) -> int:
    """Gaps of a text to export: a Leiden text's, or the Leiden text an EpiDoc document is read as.

    Raises:
        LeidenError, RequestError: a text that cannot be read.
    """
    return len(find_gaps(as_leiden(text)[0] if looks_like_xml(text) else text))


def check_fillable(text: str, gaps: Iterable[int]) -> None:
    """Refuse a reading for a gap of lost lines (gap numbers from 1; those the text has not are
    the caller's to refuse).

    Raises:
        RequestError: ``E326`` a gap of lost lines; LeidenError, RequestError: a text that cannot be read.
    """
    lacunae = [m.lacuna for m in find_gaps(as_leiden(text)[0] if looks_like_xml(text) else text)]
    for n in gaps:
        if 1 <= n <= len(lacunae):
            check_letters_gap(lacunae[n - 1], n)


def export_checked(
    text: str,
    readings: Mapping[int, MachineReading | str],
    model: str,
    fmt: str = "leiden",
    limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    fingerprint: str | None = None,
) -> str:
    """:func:`export_text` after the checks of every door (the Python API, the CLI through it,
    the web page): the text as a restoration takes it (bounded, an EpiDoc file by its
    edition), ``fmt`` one of :data:`FORMATS`, each gap number one the text has (from 1), and
    every reading written (a pin's string, a chosen reading, its alternatives) one line of Greek.

    Args:
        readings: gap number (from 1) → a :class:`MachineReading`, or a reading's string.
        model, fingerprint: the model that proposed them and its folder's fingerprint, named
            with the package version in the export (:func:`credit`).

    Raises:
        RequestError: ``E307`` a gap the text has not or a reading that is no Greek, ``E310`` an
            unknown format, ``E312`` a machine reading's marks, ``E313``/``E314`` unreadable
            EpiDoc, ``E3xx`` a text out of ``limits``; LeidenError: malformed Leiden.
    """
    check_source(text, limits)  # an EpiDoc file: its edition's length, marks decoded
    if fmt not in FORMATS:
        raise RequestError("E310", name="format", expected="'leiden' or 'epidoc'", value=fmt)
    n_gaps = count_gaps(text)  # a Leiden text's, or an EpiDoc document's
    chosen: dict[int, MachineReading] = {}
    for n, reading in readings.items():  # what is written: edition forms and alternatives too
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= n_gaps:
            raise RequestError("E307", gap=n, reason=f"the text has {n_gaps} gaps, numbered from 1")
        if isinstance(reading, MachineReading):
            for written in [reading.text, *(a.text for a in reading.alternatives)]:
                check_reading(written, n, limits)
        else:  # a string: checked once, as it is written
            reading = MachineReading(n, check_reading(reading, n, limits))
        chosen[n] = reading
    return export_text(text, chosen, model, fmt, fingerprint)


def export_text(
    text: str, readings: dict[int, MachineReading], model: str, fmt: str = "leiden", fingerprint: str | None = None
) -> str:
    """``text`` exported in ``fmt`` (``"leiden"`` or ``"epidoc"``) with the chosen readings, unchecked
    (every door calls :func:`export_checked`). A Leiden text goes out as
    :func:`export_leiden` or :func:`export_epidoc` write it; an EpiDoc document in Leiden as the
    Leiden text it is read as, in EpiDoc as itself with the readings in place
    (:func:`export_epidoc_edition`).

    Raises:
        LeidenError: malformed Leiden; RequestError: unreadable EpiDoc (``E313``, ``E314``), a
            reading for a gap of lost lines (``E326``).
    """
    check_fillable(text, readings)
    who = credit(model, fingerprint)
    if looks_like_xml(text):
        if fmt == "epidoc":
            as_leiden(text)  # the checks of a restore (E313, E314)
            return export_epidoc_edition(text, readings, who)
        return export_leiden(as_leiden(text)[0], readings, who)
    if fmt == "epidoc":
        return export_epidoc(text, readings, who)
    return export_leiden(text, readings, who)


def export_leiden(text: str, readings: dict[int, MachineReading], who: str) -> str:
    """``text`` exactly as given, with the chosen readings written into their gaps and marked,
    followed by their apparatus naming ``who`` proposed them (:func:`credit`); ``text`` itself,
    byte for byte, when no reading is chosen (nothing of the machine's in it to name).

    Only the chosen gaps' spans change (:func:`~apollo_restore.data.splice.splice`): line
    numbers, ``vac.``, ``<αβ>``, ``{αβ}``, ``⟦αβ⟧``, expansions, underdots, punctuation and the
    gap notation of the open gaps stay as written.

    Raises:
        LeidenError: ``text`` is not well-formed Leiden.
    """
    markers = find_gaps(text)
    fills: dict[int, Fill] = {}
    notes: list[str] = []
    for k, gap in enumerate(markers):
        reading = readings.get(k + 1)
        if reading is None:
            continue
        n = len(notes) + 1
        fills[k] = Fill(reading.text, machine=True, mark=marker(n))
        line = _line_of(text, gap.start)
        written = " ".join(text[gap.start : gap.end].split())
        p = f" ({percent(reading.prob)})" if reading.prob is not None else ""
        alts = (
            "; alternatives: " + ", ".join(f"{a.text} ({_p(a.prob)})" for a in reading.alternatives)
            if reading.alternatives
            else ""
        )
        notes.append(f"{marker(n)} gap {k + 1}, line {line}, {written}: {reading.text}{p}{alts}")
    body = splice(text, markers, fills)
    if not notes:
        return body
    head = f"⁽ᵐ⁾ Machine-proposed readings ({who}): not the editor's; unverified."
    return body + ("\n" if body.endswith("\n") else "\n\n") + "\n".join([head, *notes]) + "\n"


def export_epidoc_edition(xml: str, readings: dict[int, MachineReading], who: str) -> str:
    """An EpiDoc document as it came in, with the chosen readings in place of their gaps: each
    ``<gap>`` read as gap ``n`` (:func:`~apollo_restore.data.readers.epidoc.lacuna_elements`,
    the numbering of the Leiden text it is read as) becomes ``<supplied reason="lost"
    resp="#apollo-restore" cert="low">`` (with its ``<note>``, or an ``<app>`` with
    alternatives, as :func:`export_epidoc` writes them), its tail kept; the header's
    ``<titleStmt>`` gains the ``<respStmt xml:id="apollo-restore">`` they point to. The
    reading's ``<note>`` keeps the ``<gap>`` it fills, so that the file read back has the gap as
    the editor gave it (a reading of an earlier export is replaced with its note). Every other
    byte of the document is kept as it was (:mod:`~apollo_restore.data.xmlspans`: the
    declaration, processing instructions, quoting, the header); with no reading chosen the
    document itself is returned.

    Raises:
        RequestError: ``E313``: not well-formed XML or no Greek edition.
    """
    if not readings:
        return xml
    data = xml.encode("utf-8")
    try:
        root = etree.fromstring(data, parser=xml_parser())
        spans = element_spans(data)
    except (etree.XMLSyntaxError, ExpatError) as err:
        raise RequestError("E313", name="the text", reason=f"not well-formed XML: {err}") from None
    gaps = lacuna_elements(root)
    if not gaps:
        raise RequestError("E313", name="the text", reason="no Greek edition with a gap")
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    at = {el: k for k, el in enumerate(elements)}
    tei = f"{{{TEI_NS}}}"
    default_tei = root.nsmap.get(None) == TEI_NS
    edits: list[tuple[int, int, bytes]] = []
    for n, reading in sorted(readings.items()):
        original, replaced = _filled_span(gaps[n - 1])
        holder = etree.Element(tei + "ab", nsmap={None: TEI_NS})
        _Writer(holder, who).machine(reading, original)
        new = b"".join(_fragment(el, default_tei) for el in holder)
        edits.append((spans[at[replaced[0]]].start, spans[at[replaced[-1]]].end, new))
    title_stmt = root.find(f".//{tei}teiHeader/{tei}fileDesc/{tei}titleStmt")
    if title_stmt is not None and root.find(f".//{tei}respStmt[@{{{XML_NS}}}id='{RESP_ID}']") is None:
        span = spans[at[title_stmt]]
        if span.inner_end < span.end:  # before </titleStmt>
            edits.append((span.inner_end, span.inner_end, _fragment(_resp_stmt(who), default_tei)))
        else:  # <titleStmt/>: written again with its one child
            title_stmt.append(_resp_stmt(who))
            edits.append((span.start, span.end, _fragment(title_stmt, default_tei)))
    return splice_bytes(data, edits).decode("utf-8")


def _fragment(el: etree._Element, default_tei: bool) -> bytes:
    """``el`` (no tail) as bytes to splice into a document whose default namespace is TEI's
    (``default_tei``): without the namespace declaration it inherits there."""
    out = etree.tostring(el, encoding="utf-8", with_tail=False)
    return out.replace(f' xmlns="{TEI_NS}"'.encode(), b"", 1) if default_tei else out


def _filled_span(el: etree._Element) -> tuple[etree._Element | None, list[etree._Element]]:
    """``(the edition's <gap>, the elements a new reading replaces)`` for a lacuna element of
    :func:`~apollo_restore.data.readers.epidoc.lacuna_elements`: a ``<gap>`` itself; a machine
    reading of an earlier export, with its ``<app>`` and ``<note>`` (the note's ``<gap>``)."""
    if el.tag != f"{{{TEI_NS}}}supplied":
        return el, [el]
    original = machine_original(el)
    first = machine_holder(el)
    span = [first]
    note = first.getnext()
    if note is not None and note.tag == f"{{{TEI_NS}}}note" and note.get("type") == "machine-proposal":
        if not (first.tail or "").strip():
            span.append(note)
    return original, span


def _resp_stmt(who: str) -> etree._Element:
    """The ``<respStmt xml:id="apollo-restore">`` that the machine readings' ``@resp`` names,
    naming ``who`` proposed them (:func:`credit`: the version and the model's fingerprint)."""
    tei = f"{{{TEI_NS}}}"
    resp_stmt = etree.Element(tei + "respStmt", nsmap={None: TEI_NS})
    resp_stmt.set(f"{{{XML_NS}}}id", RESP_ID)
    etree.SubElement(resp_stmt, tei + "resp").text = (
        "Machine-proposed restorations: every supplied, app, lem and rdg element with resp='#apollo-restore' "
        "is a reading proposed by a language model, not by the editor, and is unverified."
    )
    etree.SubElement(resp_stmt, tei + "name", type="software").text = who
    return resp_stmt


def _line_of(text: str, pos: int) -> int:
    """The line (counted from 1) of offset ``pos``: the number the text itself gives the line
    (``5 τοῦ [.3]`` → 5) where it starts with one, else its place among the text's lines."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    number = _LINE_NUMBER.match(text, start)
    if number:
        return int(number.group(1))
    return len(_NEWLINE.findall(text, 0, start)) + 1


def export_epidoc(text: str, readings: dict[int, MachineReading], who: str, title: str = "") -> str:
    """An EpiDoc TEI document of ``text``: the editor's text, supplements and lacunae, plus the
    chosen machine readings marked with ``@resp="#apollo-restore"``, ``@cert="low"`` and a note;
    its header names ``who`` made it (:func:`credit`) in the ``<respStmt>`` and as the
    ``<application>`` of its ``<encodingDesc>``.

    Raises:
        LeidenError: ``text`` is not well-formed Leiden.
    """
    segments = parse_leiden(text).segments
    tei = f"{{{TEI_NS}}}"
    root = etree.Element(tei + "TEI", nsmap={None: TEI_NS})
    header = etree.SubElement(root, tei + "teiHeader")
    file_desc = etree.SubElement(header, tei + "fileDesc")
    title_stmt = etree.SubElement(file_desc, tei + "titleStmt")
    etree.SubElement(title_stmt, tei + "title").text = title or "Leiden text with machine-proposed restorations"
    title_stmt.append(_resp_stmt(who))
    pub = etree.SubElement(file_desc, tei + "publicationStmt")
    etree.SubElement(pub, tei + "p").text = "Exported by apollo-restore; not a publication."
    source = etree.SubElement(file_desc, tei + "sourceDesc")
    etree.SubElement(source, tei + "p").text = "Leiden text entered by the user."
    app_info = etree.SubElement(etree.SubElement(header, tei + "encodingDesc"), tei + "appInfo")
    application = etree.SubElement(app_info, tei + "application", ident="apollo-restore", version=__version__)
    etree.SubElement(application, tei + "label").text = "apollo-restore"
    etree.SubElement(application, tei + "desc").text = who
    body = etree.SubElement(etree.SubElement(root, tei + "text"), tei + "body")
    edition = etree.SubElement(body, tei + "div", type="edition")
    edition.set(f"{{{XML_NS}}}lang", "grc")
    ab = etree.SubElement(edition, tei + "ab")
    _Writer(ab, who).write(segments, readings)
    # indented outside the edition only: inside it, spaces between elements would be text
    etree.indent(header, level=1)
    header.tail = root.text = "\n  "
    text_el = body.getparent()
    text_el.tail, text_el.text, body.text, body.tail = "\n", "\n    ", "\n      ", "\n  "
    edition.tail, ab.tail = "\n    ", "\n      "
    edition.text = "\n        "
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode("utf-8") + "\n"


class _Writer:
    """Segments → children of ``<ab>``, text and tails kept in order."""

    def __init__(self, ab: etree._Element, who: str) -> None:
        self.ab, self.who, self.last = ab, who, None
        self.tei = f"{{{TEI_NS}}}"

    def text(self, s: str, parent: etree._Element | None = None) -> None:
        if parent is not None:  # inside an element being built (an <expan>)
            if len(parent):
                parent[-1].tail = (parent[-1].tail or "") + s
            else:
                parent.text = (parent.text or "") + s
        elif self.last is None:
            self.ab.text = (self.ab.text or "") + s
        else:
            self.last.tail = (self.last.tail or "") + s

    def element(
        self, tag: str, text: str | None = None, parent: etree._Element | None = None, **attrs: str
    ) -> etree._Element:
        el = etree.SubElement(self.ab if parent is None else parent, self.tei + tag, **attrs)
        if text is not None:
            el.text = text
        if parent is None:
            self.last = el
        return el

    def machine(self, reading: MachineReading, original: etree._Element | None = None) -> None:
        """A machine reading: ``<supplied>``, or ``<app>`` with ``<lem>`` and one ``<rdg>`` per
        alternative; then its ``<note>``, which keeps the edition's ``<gap>`` (``original``) that
        the reading fills, so that the file read back has the gap as the editor gave it."""
        mark = {"resp": f"#{RESP_ID}", "cert": "low"}
        reason = "illegible" if original is not None and original.get("reason") == "illegible" else "lost"
        if not reading.alternatives:
            self.element("supplied", reading.text, reason=reason, **mark)
        else:
            app = self.element("app", type="alternative", resp=f"#{RESP_ID}")
            for tag, text in [("lem", reading.text)] + [("rdg", a.text) for a in reading.alternatives]:
                self.element("supplied", text, parent=self.element(tag, parent=app, **mark), reason=reason, **mark)
        note = self.element("note", _note(self.who, reading), type="machine-proposal", resp=f"#{RESP_ID}")
        if original is not None:
            note.text += " In place of the edition's lacuna: "
            kept = copy.deepcopy(original)
            kept.tail = None
            note.append(kept)

    def letters(self, seg: Text, parent: etree._Element | None = None) -> None:
        """Letters read: plain, ``<unclear>``, ``<surplus>``, ``<add place>``, an ``<ex>``."""
        if seg.expansion:
            self.element("ex", seg.text, parent=parent, **({"cert": "low"} if seg.doubt else {}))
            return
        holder = parent
        if seg.mark == "surplus":
            holder = self.element("surplus", parent=parent)
        elif seg.mark in ("above", "below"):
            holder = self.element("add", parent=parent, place=seg.mark)
        if seg.uncertain:
            self.element("unclear", seg.text, parent=holder)
        elif holder is not None and holder is not parent:
            holder.text = seg.text
        else:
            self.text(seg.text, parent)
        if seg.doubt:  # the editor's doubt about the word just written (Leiden+ 'αὐτοῦ?'), as papyri.info writes it
            self.element("certainty", parent=parent, match="..", locus="value")

    def expan(self, parts: list[Text]) -> None:
        """An abbreviation and its expansion: ``<expan><abbr>στρ</abbr><ex>ατηγῷ</ex></expan>``."""
        expan = self.element("expan")
        for part in parts:
            if part.expansion:
                self.letters(part, expan)
            else:
                self.letters(part, self.element("abbr", parent=expan))

    def write(self, segments: list[Segment], readings: dict[int, MachineReading]) -> None:
        self.element("lb", n="1")
        line = gap = 1
        for item in _with_expansions(segments):
            if isinstance(item, list):
                self.expan(item)
                continue
            seg = item
            if isinstance(seg, Text):
                self.letters(seg)
            elif isinstance(seg, Supplied):
                self.element("supplied", seg.text, reason="lost", **({"cert": "low"} if seg.doubt else {}))
            elif isinstance(seg, Editorial):
                if seg.kind == "deleted":
                    self.element("del", seg.text, rend="erasure")
                elif seg.kind == "symbol":  # '((denarius))', as papyri.info writes it
                    self.element("g", type=seg.text)
                else:
                    self.element("supplied", seg.text, reason="omitted")
            elif isinstance(seg, Vacat):
                attrs = {"quantity": str(seg.quantity)} if seg.quantity else {"extent": "unknown"}
                self.element("space", unit="character", **attrs)
            elif isinstance(seg, LineBreak):
                line += 1
                self.text("\n")
                attrs = {"n": str(line), **({"break": "no"} if seg.in_word else {})}
                self.element("lb", **attrs)
            elif isinstance(seg, Lacuna):
                reading = readings.get(gap)
                gap += 1
                original = etree.Element(self.tei + "gap", **gap_attrs(seg))
                if reading is None:
                    self.ab.append(original)
                    self.last = original
                else:
                    self.machine(reading, original)


_WORD_END = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f])+$")
_WORD_START = re.compile(r"^(?:[^\W\d_]|[\u0300-\u036f])+")


def _with_expansions(segments: list[Segment]) -> list[Segment | list[Text]]:
    """``segments`` with each expansion and the letters of its word around it (the abbreviation:
    ``στρ`` of ``στρ(ατηγῷ)``, ``ῷ`` of ``στρ(ατηγ)ῷ``) gathered into one list, an ``<expan>``."""
    out: list[Segment | list[Text]] = []
    for seg in segments:
        prev = out[-1] if out else None
        if isinstance(seg, Text) and seg.expansion:
            if isinstance(prev, list):
                prev.append(seg)
                continue
            parts: list[Text] = [seg]
            if isinstance(prev, Text) and not prev.expansion and not prev.mark:
                m = _WORD_END.search(prev.text)
                if m:
                    out.pop()
                    if m.start():
                        out.append(replace(prev, text=prev.text[: m.start()]))
                    parts.insert(0, replace(prev, text=m.group()))
            out.append(parts)
        elif isinstance(seg, Text) and isinstance(prev, list) and not seg.mark and _WORD_START.match(seg.text):
            m = _WORD_START.match(seg.text)
            prev.append(replace(seg, text=m.group()))  # type: ignore[union-attr]
            if m.end() < len(seg.text):  # type: ignore[union-attr]
                out.append(replace(seg, text=seg.text[m.end() :]))  # type: ignore[union-attr]
        else:
            out.append(seg)
    return out


def gap_attrs(lacuna: Lacuna) -> dict[str, str]:
    """A ``<gap>``'s attributes: the extent exactly as the edition gave it (never an estimate)."""
    attrs = {"reason": lacuna.reason}
    if lacuna.line_unit:
        attrs["unit"] = "line"
        if lacuna.lines and lacuna.lines > 0:
            attrs["quantity"] = str(lacuna.lines)
        else:
            attrs["extent"] = "unknown"
        return attrs
    attrs["unit"] = "character"
    if lacuna.length is None:
        attrs["extent"] = "unknown"
    elif lacuna.length_max:
        attrs.update(atLeast=str(lacuna.length), atMost=str(lacuna.length_max))
    else:
        attrs["quantity"] = str(lacuna.length)
    if lacuna.length is not None and lacuna.approximate:
        attrs["precision"] = "low"
    return attrs
