"""One reader for every door (issue 64): ``restore``, ``parallels``, ``provenance``,
``attribute``, ``export``, the page's file load (``/api/epidoc``) and Python read the same file as
the same text. EpiDoc with and without an ``<?xml …?>`` line, ``<TEI`` first (as DCLP's files may
come), and the Leiden text they are read as: every door answers them alike (``parallels`` once
took a ``<TEI``-first file for one phrase, ``provenance`` read the markup as letters)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli.app import app
from apollo_restore.data.readers.typed import as_leiden
from apollo_restore.restoration.request import validate
from apollo_restore.retrieve.parallels import build_index
from apollo_restore.retrieve.provenance import provenance
from apollo_restore.schema.restoration import RestoreRequest
from apollo_restore.web.app import create_app
from tests.stubs import FixedReadings

EDITION = (
    '<div type="edition" xml:lang="grc"><ab><lb n="1"/>ἔτους δευτέρου αὐτοκράτορος Καίσαρος '
    '<gap reason="lost" quantity="8" unit="character"/> Σεβαστοῦ μηνὸς Θὼθ <lb n="2"/>τοῦ κυρίου '
    "αὐτοκράτορος Καίσαρος Τραιανοῦ Σεβαστοῦ καὶ</ab></div>"
)
TEI = f'<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>{EDITION}</body></text></TEI>\n'
LEIDEN = (
    "ἔτους δευτέρου αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ μηνὸς Θὼθ\n"
    "τοῦ κυρίου αὐτοκράτορος Καίσαρος Τραιανοῦ Σεβαστοῦ καὶ"
)
TEXTS = {
    "xml declaration": '<?xml version="1.0" encoding="UTF-8"?>\n' + TEI,
    "TEI first": TEI,
    "TEI first, blank line before": "\n  " + TEI,
    "Leiden": LEIDEN,
}


@pytest.fixture(scope="module")
def index_folder(prepared, tmp_path_factory):
    out = tmp_path_factory.mktemp("doors-index")
    build_index(prepared, out)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doors-files")
    paths = {}
    for k, (name, text) in enumerate(TEXTS.items()):
        paths[name] = folder / f"text{k}.{'txt' if name == 'Leiden' else 'xml'}"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def test_every_file_is_read_as_the_same_leiden():
    assert {name: as_leiden(text)[0] for name, text in TEXTS.items()} == dict.fromkeys(TEXTS, LEIDEN)


def _cli_json(*args: str) -> object:
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", [n for n in TEXTS if n != "Leiden"])
def test_every_cli_door_answers_an_epidoc_file_as_its_leiden(name, files, index_folder):
    file, leiden = str(files[name]), str(files["Leiden"])
    ix = ["--index", str(index_folder)]
    assert _cli_json("parallels", file, *ix) == _cli_json("parallels", leiden, *ix)
    found = _cli_json("parallels", file, *ix)
    assert [g["gap"] for g in found] == [1]  # one gap, not one phrase
    assert _cli_json("provenance", file, *ix, "--min-run", "20") == _cli_json(
        "provenance", leiden, *ix, "--min-run", "20"
    )
    assert _cli_json("attribute", file, "--no-parallels") == _cli_json("attribute", leiden, "--no-parallels")
    done = CliRunner().invoke(app, ["export", file, "--format", "leiden"])
    assert done.exit_code == 0, done.output
    assert done.stdout.rstrip("\n") == LEIDEN


@pytest.mark.parametrize("name", list(TEXTS))
def test_the_python_doors_and_the_page_read_the_same_text(name, index_folder):
    from apollo_restore.retrieve.parallels import ParallelIndex

    text = TEXTS[name]
    assert validate(RestoreRequest(text)).text == LEIDEN  # restore, predict, the web's restore
    index = ParallelIndex.open(index_folder)
    assert provenance(text, index, min_run=20).to_dict() == provenance(LEIDEN, index, min_run=20).to_dict()
    assert (
        apollo_restore.attribute(text, parallels=False).to_dict()
        == apollo_restore.attribute(LEIDEN, parallels=False).to_dict()
    )
    if name != "Leiden":
        assert as_leiden(apollo_restore.export(text, {1: "Τραιανοῦ"}, "leiden"))[0].startswith(
            LEIDEN.replace("[.8]", "⁅Τραιανοῦ⁆⁽ᵐ¹⁾")
        )
        client = TestClient(create_app(FixedReadings([("τραιανου", 0.0)])))
        answer = client.post("/api/epidoc", files={"file": ("t.xml", text.encode(), "application/xml")})
        assert answer.status_code == 200, answer.text
        assert answer.json()["leiden"] == LEIDEN
