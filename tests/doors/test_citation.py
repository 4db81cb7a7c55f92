"""What to cite (issue 64): every export and JSON answer names the package version and the
model's fingerprint, and the repository has a ``CITATION.cff`` of that version."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from apollo_restore import __version__
from apollo_restore.attribution.folder import fingerprint as attribution_fingerprint
from apollo_restore.attribution.model import default_folder
from apollo_restore.cli.app import app
from apollo_restore.model.folder import fingerprint
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.presentation.present import Presented
from apollo_restore.restoration.request import validate
from apollo_restore.schema.restoration import RestoreRequest
from apollo_restore.web.app import create_app
from tests.stubs import FixedReadings

ROOT = Path(__file__).resolve().parents[2]
TEXT = "ἔτους [.8] Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι ἔχω παρὰ σοῦ"


def test_citation_cff_names_this_version():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert {"cff-version", "message", "title", "version", "authors", "license"} <= set(cff)
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "Apache-2.0"
    assert cff["authors"] == [{"name": "apollo-restore contributors"}]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert str(cff["version"]) == project["version"] == __version__


def test_a_restoration_names_the_version_and_the_model_fingerprint(monkeypatch):
    """The folder's fingerprint, as ``load_restorer`` computes it for the calibration, is the one the
    restoration names (the model itself a stand-in: nothing is loaded)."""
    from apollo_restore.restoration import load
    from apollo_restore.restoration.driver import restore_text

    stub = FixedReadings([("δευτερου", 0.0)], name="stub")
    stub.neural = None
    monkeypatch.setattr(load, "_load_bare", lambda *args, **kwargs: stub)
    restorer = load.load_restorer(DEFAULT_MODEL)
    row = restore_text(restorer, validate(RestoreRequest(TEXT, k=1))).to_dict()
    assert row["version"] == __version__ and row["model_fingerprint"] == fingerprint(DEFAULT_MODEL)


def test_the_cli_names_them_in_json_and_in_every_export(tmp_path):
    done = CliRunner().invoke(app, ["attribute", TEXT, "--json", "--no-parallels"])
    answer = json.loads(done.stdout)
    assert answer["version"] == __version__
    assert answer["model_fingerprint"] == attribution_fingerprint(default_folder())  # its three files
    who = f"apollo-restore {__version__}, model «embedded default», fingerprint {fingerprint(DEFAULT_MODEL)}"
    leiden = CliRunner().invoke(app, ["export", TEXT, "--reading", "1=δευτέρου"]).stdout
    assert f"⁽ᵐ⁾ Machine-proposed readings ({who}): not the editor's; unverified." in leiden
    epidoc = CliRunner().invoke(app, ["export", TEXT, "--format", "epidoc"]).stdout
    assert f'<application ident="apollo-restore" version="{__version__}">' in epidoc and who in epidoc
    xml = tmp_path / "t.xml"
    xml.write_text(epidoc, encoding="utf-8")
    again = CliRunner().invoke(app, ["export", str(xml), "--format", "epidoc", "--reading", "1=δευτέρου"]).stdout
    assert f'<name type="software">{who}</name>' in again


def test_the_api_names_them():
    restorer = Presented(FixedReadings([("δευτερου", 0.0)], name="stub"), fingerprint="0123456789abcdef")
    client = TestClient(create_app(restorer))
    body = client.post("/api/restore", json={"text": TEXT, "k": 1}).json()
    assert body["version"] == __version__ and body["model_fingerprint"] == "0123456789abcdef"
    out = client.post("/api/export", json={"text": TEXT, "pins": {"1": "δευτέρου"}}).json()
    assert out["version"] == __version__ and out["model_fingerprint"] == "0123456789abcdef"
    assert f"apollo-restore {__version__}, model «stub», fingerprint 0123456789abcdef" in out["content"]
    assert client.post("/api/attribute", json={"text": TEXT, "parallels": False}).json()["version"] == __version__
