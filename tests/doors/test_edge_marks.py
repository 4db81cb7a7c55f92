"""Issue 64's probe of the edition's own marks at the edges: each is given back as it came or
refused with a numbered message naming the element and line — a ``<gap unit="line">`` inside a
line (a reading for it is ``E326``, never written into the next gap), ``<gap quantity="4.5">``
(``E314``), an entity the document declares (``E313``, never dropped unsaid), ``((denarius))`` in
the EpiDoc export (``<g type="denarius"/>``), a UTF-8 byte-order mark in an export promised byte
for byte (kept), and ``/api/restore`` asked for one gap with a pin and a fill for the earlier ones
(the pin written into ``restored_leiden``)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli.app import app
from apollo_restore.data.readers.leiden import find_gaps
from apollo_restore.data.readers.typed import as_leiden
from apollo_restore.errors import RequestError
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest
from apollo_restore.web.app import create_app
from tests.stubs import FixedReadings

HEAD = '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc"><ab><lb n="1"/>'
TAIL = "</ab></div></body></text></TEI>\n"
GAP_LINES = (
    HEAD + 'ἐπὶ τοῦ <gap reason="lost" quantity="2" unit="line"/> καὶ '
    '<gap reason="lost" quantity="4" unit="character"/> τῆς κώμης' + TAIL
)


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_lost_lines_inside_a_line_are_a_gap_a_reading_cannot_fill(tmp_path):
    """The probe: ``export gap_lines.xml --format epidoc --reading 1=τοις`` wrote τοις into the
    lost lines' place; the Leiden text the file is read as had lost them (``τοῦ lost.2lin`` was
    read as letters), so the numbering of the two exports differed."""
    assert [g.lacuna.lines for g in find_gaps(as_leiden(GAP_LINES)[0])] == [2, None]
    assert [g.lacuna.lines for g in find_gaps("τοῦ lost.2lin καὶ [.4]")] == [2, None]
    path = tmp_path / "gap_lines.xml"
    path.write_text(GAP_LINES, encoding="utf-8")
    for fmt in ("epidoc", "leiden"):
        done = _cli("export", str(path), "--format", fmt, "--reading", "1=τοις")
        assert done.exit_code == 2 and "[E326] gap 1 is 2 lost lines" in done.output, done.output
    done = _cli("export", str(path), "--format", "epidoc", "--reading", "2=τοις")
    assert done.exit_code == 0, done.output
    assert '<gap reason="lost" quantity="2" unit="line"/> καὶ <supplied reason="lost" resp="#apollo-restore"' in (
        done.stdout
    )


def test_a_gap_of_four_and_a_half_letters_is_refused():
    text = HEAD + 'ἐπὶ τοῦ <gap reason="lost" quantity="4.5" unit="character"/> τῆς κώμης' + TAIL
    for door in (lambda: validate(RestoreRequest(text)), lambda: apollo_restore.export(text, {1: "ἀγρο"})):
        with pytest.raises(RequestError, match=r'\[E314\] the text: <gap quantity="4.5"> at line 1 is not a whole'):
            door()


def test_an_entity_the_document_declares_is_refused_not_dropped():
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE TEI [<!ENTITY g "Μουσαίου">]>\n'
        + HEAD
        + 'Κόμων &g; τοῦ Ἡρακλείτου <gap reason="lost" quantity="4" unit="character"/> χαίρειν'
        + TAIL
    )
    doors = (
        lambda: validate(RestoreRequest(text)),
        lambda: apollo_restore.export(text, {1: "Πεκύ"}),
        lambda: apollo_restore.export(text, {1: "Πεκύ"}, "epidoc"),
    )
    for door in doors:
        with pytest.raises(RequestError, match=r"\[E313\] .*the entity reference &g; at line 3"):
            door()


def test_a_symbol_is_kept_in_the_epidoc_export():
    xml = apollo_restore.export("ἔχω παρὰ σοῦ ((denarius)) [.3] καὶ", {1: "δέκ"}, "epidoc")
    assert 'ἔχω παρὰ σοῦ <g type="denarius"/> <supplied reason="lost" resp="#apollo-restore"' in xml
    assert as_leiden(xml)[0].startswith("ἔχω παρὰ σοῦ ")


def test_a_byte_order_mark_is_given_back(tmp_path):
    path = tmp_path / "bom.txt"
    data = "\ufeff1 ἔτους [.8] Ἀντωνίνου Καίσαρος\n".encode()
    path.write_bytes(data)
    done = CliRunner().invoke(app, ["export", str(path)])
    assert done.exit_code == 0 and done.stdout_bytes == data
    done = CliRunner().invoke(app, ["export", str(path), "--reading", "1=δευτέρου"])
    assert done.stdout_bytes.startswith("\ufeff1 ἔτους ⁅δευτέρου⁆⁽ᵐ¹⁾".encode())


def test_the_pin_of_a_gap_not_asked_is_written_into_the_restored_text():
    client = TestClient(create_app(FixedReadings([("αβγ", 0.0)], name="stub")))
    text = "ἐπὶ [.4] τοῦ [.3] καὶ [.3] τῆς κώμης"
    body = client.post(
        "/api/restore", json={"text": text, "k": 1, "only": [3], "pins": {"1": "Διὸς"}, "fills": {"2": "θεοῦ"}}
    ).json()
    assert [g["number"] for g in body["gaps"]] == [3]
    assert body["restored_leiden"].startswith("ἐπὶ ⁅Διὸς⁆ τοῦ [.3] καὶ ")
