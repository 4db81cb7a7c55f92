"""Export a Leiden text with machine-proposed readings marked as such (paper, Ethics Statement).

A reading proposed by the model must never pass as the editor's. Both formats therefore keep
every machine reading apart from the editor's supplements:

**Leiden** — the text goes out as it came in: only the spans of the gaps with a chosen reading
change (:mod:`apollo_restore.data.splice`); line numbers, ``vac.``, ``<αβ>``, ``{αβ}``,
``⟦αβ⟧``, expansions, underdots, punctuation and open gaps stay as written, and with no reading
chosen the export *is* the input, byte for byte. A machine reading is written ``⁅κομω⁆`` (as
the restored text writes it, never in the editor's ``[ ]``), followed at once by the marker
``⁽ᵐⁿ⁾`` (superscript *m* for *machine* and the reading's number *n*). The text is followed by
a blank line and an apparatus that names the tool and the model and lists each marked reading
with its gap, its line (the number the text gives it), the lacuna as written and its probability::

    1 Πεκύσι ⁅κομω⁆⁽ᵐ¹⁾ χαίρειν

    ⁽ᵐ⁾ Machine-proposed readings (apollo-restore, model «tiny»): not the editor's; unverified.
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

import re
from dataclasses import dataclass

from lxml import etree

from apollo_restore.data.document import Lacuna, LineBreak, Segment, Supplied, Text
from apollo_restore.data.readers.epidoc import lacuna_elements, xml_parser
from apollo_restore.data.readers.leiden import find_gaps, parse_leiden
from apollo_restore.data.readers.typed import as_leiden, looks_like_xml
from apollo_restore.data.splice import Fill, splice
from apollo_restore.errors import RequestError
from apollo_restore.restoration.line_lengths import LineEstimate, line_estimates
from apollo_restore.restoration.types import percent

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_NS = "http://www.w3.org/XML/1998/namespace"
RESP_ID = "apollo-restore"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_LINE_NUMBER = re.compile(r"[ \t]*(\d{1,4})[a-zA-Z]?[.:]?[ \t]")
_NEWLINE = re.compile(r"\r\n|[\n\r]")


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
    """A probability as the page shows it (:func:`~apollo_restore.restoration.types.percent`)."""
    return percent(prob) if prob is not None else "probability unknown"


def marker(n: int) -> str:
    """The Leiden marker of the ``n``-th machine reading: ``⁽ᵐ¹⁾``, ``⁽ᵐ¹²⁾``..."""
    return f"⁽ᵐ{str(n).translate(_SUPERSCRIPT)}⁾"


def _note(model: str, reading: MachineReading) -> str:
    p = f", {percent(reading.prob)}" if reading.prob is not None else ""
    alts = (
        "; alternatives: " + ", ".join(f"{a.text} {_p(a.prob)}" for a in reading.alternatives)
        if reading.alternatives
        else ""
    )
    return f"Machine proposal (apollo-restore, model «{model}»{p}{alts}); not the editor's reading, unverified."


def count_gaps(text: str) -> int:
    """Gaps of a text to export: a Leiden text's, or the Leiden text an EpiDoc document is read as.

    Raises:
        LeidenError, RequestError: a text that cannot be read.
    """
    return len(find_gaps(as_leiden(text)[0] if looks_like_xml(text) else text))


def export_text(text: str, readings: dict[int, MachineReading], model: str, fmt: str = "leiden") -> str:
    """``text`` exported in ``fmt`` (``"leiden"`` or ``"epidoc"``) with the chosen readings: the
    one door of the web page and the Python API. A Leiden text goes out as
    :func:`export_leiden` or :func:`export_epidoc` write it; an EpiDoc document in Leiden as the
    Leiden text it is read as, in EpiDoc as itself with the readings in place
    (:func:`export_epidoc_edition`).

    Raises:
        LeidenError: malformed Leiden; RequestError: unreadable EpiDoc (``E313``, ``E314``).
    """
    if looks_like_xml(text):
        if fmt == "epidoc":
            as_leiden(text)  # the checks of a restore (E313, E314)
            return export_epidoc_edition(text, readings, model)
        return export_leiden(as_leiden(text)[0], readings, model)
    if fmt == "epidoc":
        return export_epidoc(text, readings, model)
    return export_leiden(text, readings, model)


def export_leiden(text: str, readings: dict[int, MachineReading], model: str) -> str:
    """``text`` exactly as given, with the chosen readings written into their gaps and marked,
    followed by their apparatus; ``text`` itself, byte for byte, when no reading is chosen.

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
    head = f"⁽ᵐ⁾ Machine-proposed readings (apollo-restore, model «{model}»): not the editor's; unverified."
    return body + ("\n" if body.endswith("\n") else "\n\n") + "\n".join([head, *notes]) + "\n"


def export_epidoc_edition(xml: str, readings: dict[int, MachineReading], model: str) -> str:
    """An EpiDoc document as it came in, with the chosen readings in place of their gaps: each
    ``<gap>`` read as gap ``n`` (:func:`~apollo_restore.data.readers.epidoc.lacuna_elements`,
    the numbering of the Leiden text it is read as) becomes ``<supplied reason="lost"
    resp="#apollo-restore" cert="low">`` (with its ``<note>``, or an ``<app>`` with
    alternatives, as :func:`export_epidoc` writes them), its tail kept; the header's
    ``<titleStmt>`` gains the ``<respStmt xml:id="apollo-restore">`` they point to. Every other
    element of the edition is kept as it was; with no reading chosen the document itself is
    returned, byte for byte.

    Raises:
        RequestError: ``E313``: not well-formed XML or no Greek edition.
    """
    if not readings:
        return xml
    try:
        tree = etree.ElementTree(etree.fromstring(xml.encode("utf-8"), parser=xml_parser()))
    except etree.XMLSyntaxError as err:
        raise RequestError("E313", name="the text", reason=f"not well-formed XML: {err}") from None
    root = tree.getroot()
    gaps = lacuna_elements(root)
    if not gaps:
        raise RequestError("E313", name="the text", reason="no Greek edition with a gap")
    tei = f"{{{TEI_NS}}}"
    for n, reading in sorted(readings.items()):
        gap = gaps[n - 1]
        parent, tail = gap.getparent(), gap.tail
        holder = etree.Element(tei + "ab")
        _Writer(holder, model).machine(reading)
        at = parent.index(gap)
        parent.remove(gap)
        added = list(holder)
        for k, element in enumerate(added):
            parent.insert(at + k, element)
        added[-1].tail = tail
    title_stmt = root.find(f".//{tei}teiHeader/{tei}fileDesc/{tei}titleStmt")
    if title_stmt is not None and root.find(f".//{tei}respStmt[@{{{XML_NS}}}id='{RESP_ID}']") is None:
        title_stmt.append(_resp_stmt(model))
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8").decode("utf-8")


def _resp_stmt(model: str) -> etree._Element:
    """The ``<respStmt xml:id="apollo-restore">`` that the machine readings' ``@resp`` names."""
    tei = f"{{{TEI_NS}}}"
    resp_stmt = etree.Element(tei + "respStmt")
    resp_stmt.set(f"{{{XML_NS}}}id", RESP_ID)
    etree.SubElement(resp_stmt, tei + "resp").text = (
        "Machine-proposed restorations: every supplied, app, lem and rdg element with resp='#apollo-restore' "
        "is a reading proposed by a language model, not by the editor, and is unverified."
    )
    etree.SubElement(resp_stmt, tei + "name", type="software").text = f"apollo-restore, model {model}"
    return resp_stmt


def _line_of(text: str, pos: int) -> int:
    """The line (counted from 1) of offset ``pos``: the number the text itself gives the line
    (``5 τοῦ [.3]`` → 5) where it starts with one, else its place among the text's lines."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    number = _LINE_NUMBER.match(text, start)
    if number:
        return int(number.group(1))
    return len(_NEWLINE.findall(text, 0, start)) + 1


def export_epidoc(text: str, readings: dict[int, MachineReading], model: str, title: str = "") -> str:
    """An EpiDoc TEI document of ``text``: the editor's text, supplements and lacunae, plus the
    chosen machine readings marked with ``@resp="#apollo-restore"``, ``@cert="low"`` and a note.

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
    title_stmt.append(_resp_stmt(model))
    pub = etree.SubElement(file_desc, tei + "publicationStmt")
    etree.SubElement(pub, tei + "p").text = "Exported by apollo-restore; not a publication."
    source = etree.SubElement(file_desc, tei + "sourceDesc")
    etree.SubElement(source, tei + "p").text = "Leiden text entered by the user."
    body = etree.SubElement(etree.SubElement(root, tei + "text"), tei + "body")
    edition = etree.SubElement(body, tei + "div", type="edition")
    edition.set(f"{{{XML_NS}}}lang", "grc")
    ab = etree.SubElement(edition, tei + "ab")
    _Writer(ab, model).write(segments, readings)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True).decode("utf-8")


class _Writer:
    """Segments → children of ``<ab>``, text and tails kept in order."""

    def __init__(self, ab: etree._Element, model: str) -> None:
        self.ab, self.model, self.last = ab, model, None
        self.tei = f"{{{TEI_NS}}}"

    def text(self, s: str) -> None:
        if self.last is None:
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

    def machine(self, reading: MachineReading) -> None:
        """A machine reading: ``<supplied>``, or ``<app>`` with ``<lem>`` and one ``<rdg>`` per
        alternative; then its ``<note>``."""
        mark = {"resp": f"#{RESP_ID}", "cert": "low"}
        if not reading.alternatives:
            self.element("supplied", reading.text, reason="lost", **mark)
        else:
            app = self.element("app", type="alternative", resp=f"#{RESP_ID}")
            for tag, text in [("lem", reading.text)] + [("rdg", a.text) for a in reading.alternatives]:
                self.element("supplied", text, parent=self.element(tag, parent=app, **mark), reason="lost", **mark)
        self.element("note", _note(self.model, reading), type="machine-proposal", resp=f"#{RESP_ID}")

    def write(self, segments: list[Segment], readings: dict[int, MachineReading]) -> None:
        self.element("lb", n="1")
        estimates = line_estimates(segments)
        line = gap = 1
        for seg in segments:
            if isinstance(seg, Text):
                if seg.expansion:
                    self.element("ex", seg.text)
                elif seg.uncertain:
                    self.element("unclear", seg.text)
                else:
                    self.text(seg.text)
            elif isinstance(seg, Supplied):
                self.element("supplied", seg.text, reason="lost")
            elif isinstance(seg, LineBreak):
                line += 1
                self.text("\n")
                attrs = {"n": str(line), **({"break": "no"} if seg.in_word else {})}
                self.element("lb", **attrs)
            elif isinstance(seg, Lacuna):
                reading = readings.get(gap)
                gap += 1
                if reading is None:
                    self.element("gap", **_gap_attrs(seg, estimates[gap - 2]))
                else:
                    self.machine(reading)


def _gap_attrs(lacuna: Lacuna, estimate: LineEstimate | None = None) -> dict[str, str]:
    """A ``<gap>``'s attributes; an unknown extent with a line-length ``estimate`` is written as
    its range at low precision (``atLeast``, ``atMost``, ``precision="low"``)."""
    attrs = {"reason": "lost", "unit": "character"}
    if lacuna.length is None and estimate is not None:
        attrs.update(atLeast=str(estimate.lo), atMost=str(estimate.hi), precision="low")
    elif lacuna.length is None:
        attrs["extent"] = "unknown"
    elif lacuna.length_max:
        attrs.update(atLeast=str(lacuna.length), atMost=str(lacuna.length_max))
    else:
        attrs["quantity"] = str(lacuna.length)
        if lacuna.approximate:
            attrs["precision"] = "low"
    return attrs
