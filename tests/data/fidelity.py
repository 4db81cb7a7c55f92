"""The round trips of issue 51 over one EpiDoc file, shared by the fixture test and the corpus test.

    differences(content, name)   # [] when every round trip gives back the document

Documents are compared by their segments, after the normalisations that docs/epidoc.md lists
as deliberate (:func:`comparable`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace

from apollo_restore.data.document import Editorial, Lacuna, Segment, Supplied, Text, Vacat, leiden_escape, to_leiden
from apollo_restore.data.readers.leiden import UNDERDOT, parse_leiden, tidy_segments
from apollo_restore.data.readers.typed import read_epidoc
from apollo_restore.restoration.export import MachineReading, export_epidoc, export_epidoc_edition

#: Letters written into every gap of letters for the export → import round trip.
READING = "αβγ"


def comparable(segments: list[Segment]) -> list[Segment]:
    """``segments`` after the deliberate normalisations of Leiden (docs/epidoc.md): letters as
    :func:`~apollo_restore.data.document.leiden_escape` writes them (punctuation ``·``, digits
    dropped), an addition below the line as one above (Leiden marks both ``\\αβ/``), an
    underdot typed in the letters as Leiden's uncertain letter, an accent alone in its element
    on the letter before it, no vacat inside a word."""
    out: list[Segment] = []
    for k, seg in enumerate(segments):
        if isinstance(seg, (Text, Supplied, Editorial)):
            seg = replace(seg, text=leiden_escape(seg.text))
        if isinstance(seg, Text) and seg.mark == "below":
            seg = replace(seg, mark="above")
        if isinstance(seg, Text) and UNDERDOT in seg.text:  # an underdot typed as a letter: Leiden's mark
            out += parse_leiden(seg.text).segments if seg.text.strip() else [seg]
            continue
        if isinstance(seg, Text) and seg.text and all(unicodedata.combining(ch) for ch in seg.text) and out:
            if isinstance(out[-1], (Text, Supplied)):  # a mark alone joins the letter before it
                out[-1] = replace(out[-1], text=out[-1].text + seg.text)
                continue
        if isinstance(seg, Vacat) and _glued(out[-1:], True) and _glued(segments[k + 1 : k + 2], False):
            continue  # inside a word: not written in Leiden
        if isinstance(seg, Lacuna) and seg.reason == "illegible" and (seg.length_max or seg.approximate):
            seg = replace(seg, reason="lost")  # Leiden+ writes no illegible range or ca.
        out.append(seg)
    return _unspaced_vacats(tidy_segments(out))


def _unspaced_vacats(segments: list[Segment]) -> list[Segment]:
    """Spaces touching a vacat left out (Leiden writes ``vac.`` apart from the words)."""
    out: list[Segment] = []
    for k, seg in enumerate(segments):
        if isinstance(seg, Text):
            text = seg.text
            if k and isinstance(segments[k - 1], Vacat):
                text = text.lstrip()
            if k + 1 < len(segments) and isinstance(segments[k + 1], Vacat):
                text = text.rstrip()
            if not text:
                continue
            seg = replace(seg, text=text)
        out.append(seg)
    return out


def _glued(neighbour: list[Segment], before: bool) -> bool:
    """Whether the one segment in ``neighbour`` holds letters touching the vacat."""
    if not neighbour or not isinstance(neighbour[0], (Text, Supplied)) or not neighbour[0].text:
        return False
    return not (neighbour[0].text[-1] if before else neighbour[0].text[0]).isspace()


def _first_difference(a: list[Segment], b: list[Segment]) -> str:
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"segment {k}: {x!r} became {y!r}"
    return f"{len(a)} segments became {len(b)}"


def differences(content: bytes, name: str) -> list[str]:
    """What each round trip of one EpiDoc file changes: EpiDoc → Leiden → document; Leiden →
    EpiDoc → document; EpiDoc → EpiDoc with no reading (the bytes) and with a reading in every
    gap of letters (the bytes outside them, and the document read back: each gap as given)."""
    doc = read_epidoc(content, name)
    want = comparable(doc.segments)
    found = []
    leiden = to_leiden(doc.segments)
    got = comparable(parse_leiden(leiden).segments)
    if got != want:
        found.append(f"{name}: EpiDoc → Leiden: {_first_difference(want, got)}")
    got = comparable(read_epidoc(export_epidoc(leiden, {}, "test").encode("utf-8"), name).segments)
    if got != want:
        found.append(f"{name}: Leiden → EpiDoc: {_first_difference(want, got)}")
    xml = content.decode("utf-8")
    if export_epidoc_edition(xml, {}, "test") != xml:
        found.append(f"{name}: EpiDoc → EpiDoc with no reading is not the file")
    lacunae = [seg for seg in doc.segments if isinstance(seg, Lacuna)]
    readings = {n: MachineReading(n, READING) for n, lac in enumerate(lacunae, 1) if not lac.line_unit}
    if readings:
        exported = export_epidoc_edition(xml, readings, "test")
        got = comparable(read_epidoc(exported.encode("utf-8"), name).segments)
        if got != want:
            found.append(f"{name}: export → import: {_first_difference(want, got)}")
        again = export_epidoc_edition(exported, readings, "test")
        if again != exported:
            found.append(f"{name}: a second export of the same readings is not the first")
    return found
