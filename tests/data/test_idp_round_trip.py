"""Every edition of the papyri.info sample (``tests/fixtures/idp-sample``, CC BY 3.0: its
README) goes out as it came in (issue 46, item 1): in Leiden, the Leiden text it is read as,
byte for byte, with only the chosen gaps' spans replaced; in EpiDoc, the document itself, its
edition's elements kept and only the machine readings' elements added, each with
``resp="#apollo-restore"`` and ``cert="low"``."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

import apollo_restore
from apollo_restore.data.document import Lacuna
from apollo_restore.data.readers.epidoc import lacuna_elements, parse_epidoc_file
from apollo_restore.data.readers.leiden import find_gaps
from apollo_restore.data.readers.typed import epidoc_to_leiden
from apollo_restore.errors import RequestError
from apollo_restore.restoration.export import MachineReading, export_leiden, export_text, marker

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "idp-sample"
FILES = sorted(SAMPLE.rglob("*.xml"))
TEI = "{http://www.tei-c.org/ns/1.0}"
MACHINE = "#apollo-restore"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"


def test_the_sample_and_its_notice_are_there():
    assert len(FILES) == 15
    notice = (SAMPLE / "README.md").read_text(encoding="utf-8")
    assert "CC BY 3.0" in notice and "creativecommons.org/licenses/by/3.0" in notice


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_leiden_export_is_the_text_with_only_the_chosen_gaps_replaced(path):
    xml = path.read_text(encoding="utf-8")
    leiden = epidoc_to_leiden(xml, path.name)
    assert export_leiden(leiden, {}, "m") == leiden
    assert export_text(xml, {}, "m", "leiden") == leiden
    gaps = find_gaps(leiden)
    chosen = {n: MachineReading(n, "καὶ", 0.5) for n in range(1, len(gaps) + 1, 2)}
    out = export_leiden(leiden, chosen, "m")
    expected, at = [], 0
    for k, n in enumerate(sorted(chosen), 1):
        gap = gaps[n - 1]
        expected += [leiden[at : gap.start], f"⁅καὶ⁆{marker(k)}"]
        at = gap.end
    assert out.startswith("".join(expected) + leiden[at:])


def _edition(root: etree._Element) -> list[etree._Element]:
    return [el for el in root.iter() if isinstance(el.tag, str) and el.getparent() is not None]


def _signature(el: etree._Element) -> tuple:
    return (el.tag, sorted(el.attrib.items()), (el.text or "").strip())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_epidoc_export_keeps_the_document_and_adds_only_machine_readings(path):
    xml = path.read_text(encoding="utf-8")
    assert apollo_restore.export(xml, format="epidoc") == xml  # no reading: the document itself
    root = etree.fromstring(xml.encode())
    lacunae = [s for s in parse_epidoc_file(xml.encode(), path.name, "user").segments if isinstance(s, Lacuna)]
    gaps = [g for g, lacuna in zip(lacuna_elements(root), lacunae) if not lacuna.line_unit]  # lost lines: E326
    readings = {n: MachineReading(n, "καὶ", 0.4) for n, lacuna in enumerate(lacunae, 1) if not lacuna.line_unit}
    if not readings:
        return
    out = etree.fromstring(export_text(xml, readings, "m", "epidoc").encode())
    replaced = {id(g) for g in gaps}
    kept = [_signature(el) for el in _edition(root) if id(el) not in replaced]

    def machine(el: etree._Element) -> bool:  # a machine reading, its note, the header's respStmt naming them
        return any(a.get("resp") == MACHINE or a.get(XML_ID) == "apollo-restore" for a in [el, *el.iterancestors()])

    assert [_signature(el) for el in _edition(out) if not machine(el)] == kept
    supplied = out.findall(f".//{TEI}supplied[@resp='{MACHINE}']")
    assert len(supplied) == len(readings) and all(s.get("cert") == "low" and s.text == "καὶ" for s in supplied)
    # read back, the machine readings are lacunae again: the same gaps, none taken for the editor's
    back = parse_epidoc_file(etree.tostring(out), path.name, "user")
    before = parse_epidoc_file(xml.encode(), path.name, "user")
    assert sum(isinstance(s, Lacuna) for s in back.segments) == sum(isinstance(s, Lacuna) for s in before.segments)


def test_python_export_refuses_machine_marks_and_missing_gaps():
    text = "ἔτους [.8] Ἀντωνίνου Καίσαρος τοῦ κυρίου"
    assert apollo_restore.export(text) == text
    assert apollo_restore.export(text, {1: "δευτέρου"}).startswith("ἔτους ⁅δευτέρου⁆⁽ᵐ¹⁾ Ἀντωνίνου")
    for readings in ({1: "⁅δευτέρου⁆"}, {2: "καὶ"}):
        with pytest.raises(RequestError):
            apollo_restore.export(text, readings)
    with pytest.raises(RequestError, match=r"\[E312\]"):
        apollo_restore.export(text.replace("[.8]", "⁅δευτέρου⁆"))
