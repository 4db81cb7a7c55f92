"""Issue 56's probes of readings, pins and alternatives: a reading is one line of Greek, checked
by one function (:func:`~apollo_restore.restoration.request.check_reading`) at every door — a
line break or a right-to-left override in ``export --reading``, a Python pin, a web pin, a chosen
reading or an alternative is ``E307``; an EpiDoc text writing the machine marks as character
references (``&#x2045;…&#x2046;``) is ``E312`` at every export door (the check runs on the decoded
text). And the export's last doors: ``--out`` on an existing file is ``E207``, on a read-only
folder ``E205``; ``/api/epidoc`` answers malformed XML and an entity bomb with ``E313``."""

from __future__ import annotations

import os

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli.app import app
from apollo_restore.errors import RequestError
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.ranking.pool import to_candidates
from apollo_restore.restoration.request import check_reading
from apollo_restore.schema.limits import DEFAULT_REQUEST_LIMITS
from apollo_restore.web.app import create_app

BGU = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον [.5] πυρρὰν"
BAD = {
    "a newline": "ὥρου\nκαὶ",
    "a carriage return": "ὥρου\rκαὶ",
    "a line separator": "ὥρου\u2028καὶ",
    "a right-to-left override": "\u202eὥρου",
    "a right-to-left mark": "ὥρ\u200fου",
    "a zero-width joiner": "ὥρ\u200dου",
    "a Latin letter": "ὥρoυ",
}
EPIDOC_MARKED = (
    '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc"><ab>'
    "Κόμων Μουσαίου τοῦ &#x2045;Ἡρακλείτου&#x2046; Πεκύσι "
    '<gap reason="lost" quantity="4" unit="character"/> χαίρειν</ab></div></body></text></TEI>'
)


class Stub:
    batches = False
    name = "stub"
    config = RestoreConfig(k=3)

    def candidates(self, prefix, suffix, hint=None, k=None):
        return to_candidates([("ωρου", -1.0), ("θεου", -1.5)])


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Stub()))


@pytest.mark.parametrize("what", list(BAD))
def test_the_one_check_refuses_what_is_no_line_of_greek(what):
    with pytest.raises(RequestError) as err:
        check_reading(BAD[what], 1, DEFAULT_REQUEST_LIMITS)
    assert err.value.code == "E307" and "gap 1" in str(err.value)


@pytest.mark.parametrize("reading", ["ὥρου", "κυρίῳ", "τοῦ κ", "δι' αὐτοῦ", "Ἡρακλείτου·", "ιβʹ"])
def test_greek_with_its_spaces_and_marks_passes(reading):
    assert check_reading(reading, 1, DEFAULT_REQUEST_LIMITS) == reading


@pytest.mark.parametrize("what", ["a newline", "a right-to-left override"])
def test_every_door_refuses_such_a_reading(client, what):
    bad = BAD[what]
    done = CliRunner().invoke(app, ["export", BGU, "--reading", f"1={bad}"])
    assert done.exit_code == 2 and done.output.startswith("error: [E307]"), done.output
    with pytest.raises(RequestError, match=r"^\[E307\]"):
        apollo_restore.export(BGU, {1: bad})
    with pytest.raises(RequestError, match=r"^\[E307\]"):
        apollo_restore.restore(BGU, pins={1: bad})  # refused before any model loads
    for path in ("/api/restore", "/api/export"):
        answer = client.post(path, json={"text": BGU, "pins": {"1": bad}})
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "E307", answer.text
    choice = {"text": "ωρου", "display": "Ὥρου", "prob": 0.5, "alternatives": [{"text": bad, "prob": 0.1}]}
    answer = client.post("/api/export", json={"text": BGU, "choices": {"1": choice}})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E307", answer.text


def test_machine_marks_written_as_character_references_are_E312_at_every_export_door(client, tmp_path):
    with pytest.raises(RequestError, match=r"^\[E312\]"):
        apollo_restore.export(EPIDOC_MARKED, {1: "ὥρου"}, format="epidoc")
    source = tmp_path / "marked.xml"
    source.write_text(EPIDOC_MARKED, encoding="utf-8")
    done = CliRunner().invoke(app, ["export", str(source), "--reading", "1=ὥρου", "--format", "epidoc"])
    assert done.exit_code == 2 and done.output.startswith("error: [E312]"), done.output
    answer = client.post("/api/export", json={"text": EPIDOC_MARKED, "pins": {"1": "ὥρου"}, "format": "epidoc"})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E312", answer.text
    answer = client.post("/api/restore", json={"text": EPIDOC_MARKED})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E312", answer.text
    with pytest.raises(RequestError, match=r"^\[E312\]"):
        check_reading("&#x2045;ὥρου", 1, DEFAULT_REQUEST_LIMITS)


def test_export_out_on_an_existing_file_is_E207_and_on_a_read_only_folder_E205(tmp_path):
    out = tmp_path / "edition.txt"
    out.write_text("kept")
    done = CliRunner().invoke(app, ["export", BGU, "--reading", "1=ὥρου", "--out", str(out)])
    assert done.exit_code == 2 and done.output.startswith("error: [E207]") and str(out) in done.output, done.output
    assert out.read_text() == "kept"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # pragma: no cover - root writes anywhere: an unwritable place instead
            target = tmp_path / "edition.txt" / "inside.txt"
        else:
            target = locked / "edition.txt"
        done = CliRunner().invoke(app, ["export", BGU, "--reading", "1=ὥρου", "--out", str(target), "--force"])
        assert done.exit_code == 2 and done.output.startswith("error: [E205]"), done.output
        assert "Traceback" not in done.output
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize(
    "content",
    [
        b"<TEI><text>",
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;'
        b'&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
        b"<TEI><text><body><div type='edition'><ab>&lol3;</ab></div></body></text></TEI>",
    ],
    ids=["malformed", "entity bomb"],
)
def test_api_epidoc_answers_unreadable_xml_with_E313_as_api_restore_does(client, content):
    answer = client.post("/api/epidoc", files={"file": ("x.xml", content, "text/xml")})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "E313", answer.text
