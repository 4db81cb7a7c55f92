"""``apollo-restore restore`` takes what the web page takes: an EpiDoc file and Beta Code, read as
Leiden (issue 36, item 5); broken XML is a numbered error naming the file. The model is a stub
(the reading path is under test, not the model)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from apollo_restore.cli import restore as cli_restore
from apollo_restore.cli.app import app
from apollo_restore.hint import Hint
from apollo_restore.schema.restoration import Candidate

EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
  <teiHeader><fileDesc><titleStmt><title>P.Test 1</title></titleStmt></fileDesc></teiHeader>
  <text><body><div type="edition" xml:lang="grc"><ab>
    <lb n="1"/>ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ κυρίου
    <lb n="2"/>μηνὸς Φαῶφι <gap reason="lost" quantity="9" unit="character"/> ὁμολογῶ ἀπέχειν παρὰ σοῦ
  </ab></div></body></text>
</TEI>
"""


class _Stub:
    """A restorer proposing, for a hint of n letters, the first n letters of the alphabet."""

    batches = False

    name = "stub"

    def __init__(self) -> None:
        self.hints: list[Hint] = []

    def candidates(self, prefix: str, suffix: str, hint: Hint, k: int | None = None) -> list[Candidate]:
        self.hints.append(hint)
        return [Candidate("αβγδεζηθικλμνξοπ"[: hint.lo or 3], 0.9, -0.1)]


@pytest.fixture
def stub(monkeypatch) -> _Stub:
    restorer = _Stub()
    monkeypatch.setattr(cli_restore, "_restorer", lambda model, parallels, **options: restorer)
    return restorer


def test_an_epidoc_file_is_restored(tmp_path, stub):
    path = tmp_path / "edition.xml"
    path.write_text(EDITION, encoding="utf-8")
    result = CliRunner().invoke(app, ["restore", str(path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert stub.hints == [Hint.exact(9)]
    assert "Φαῶφι [.9] ὁμολογῶ" in out["text"] and out["gaps"][0]["candidates"][0]["text"] == "αβγδεζηθι"


def test_betacode_is_restored_with_a_warning(stub):
    result = CliRunner().invoke(app, ["restore", "e)/tous [.8] *)antwni/nou kai/saros tou= kuri/ou"])
    assert result.exit_code == 0, result.output
    assert stub.hints == [Hint.exact(8)]
    assert "[W303]" in result.stderr and "Beta Code" in result.stderr
    assert "Ἀντωνίνου" in result.stdout


def test_broken_xml_is_a_numbered_error_naming_the_file(tmp_path, stub):
    path = tmp_path / "broken.xml"
    path.write_text(EDITION.replace("</ab>", ""), encoding="utf-8")
    result = CliRunner().invoke(app, ["restore", str(path)])
    assert result.exit_code == 2 and "[E313]" in result.output and "broken.xml" in result.output
    assert "Traceback" not in result.output and stub.hints == []
