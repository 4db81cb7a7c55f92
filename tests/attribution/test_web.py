"""``POST /api/attribute`` on the tiny random folder: the answer's shape, numbered refusals,
parallels only where the server has an index.

    python -m pytest -q tests/attribution/test_web.py
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from safetensors.numpy import load_file, save_file

from apollo_restore.attribution import attribute as attribute_module
from apollo_restore.attribution.folder import CONFIG_FILE, MAX_CONFIG_BYTES, WEIGHTS_FILE
from apollo_restore.data.textindex import build_text_index
from apollo_restore.retrieve.parallels import ParallelIndex
from apollo_restore.web.app import create_app
from apollo_restore.web.parallels import IndexParallels
from tests.attribution.conftest import INDEXED
from tests.attribution.test_doors import LONG
from tests.guards import unblocking


class NoRestorer:
    """The app's restorer, never asked to restore here."""

    name = "none"


@pytest.fixture
def packaged_is_tiny(tiny_attribution, monkeypatch):
    """The app's default attribution folder replaced by the tiny one."""
    monkeypatch.setattr(attribute_module, "default_folder", lambda: tiny_attribution)
    attribute_module.load_model.cache_clear()
    attribute_module.document_labels.cache_clear()
    yield
    attribute_module.load_model.cache_clear()
    attribute_module.document_labels.cache_clear()


def test_api_attribute_answers_and_refuses(packaged_is_tiny):
    client = TestClient(create_app(NoRestorer()))
    answer = client.post("/api/attribute", json={"text": LONG})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["date"]["low"] <= body["date"]["year"] <= body["date"]["high"]
    assert len(body["date"]["bins"]) == len(body["date"]["probs"]) + 1 and body["places"][0]["place"]
    assert body["parallels"] == [] and body["formula"] is None  # no index on this server, no formula in it
    assert body["warnings"] == []
    beta = client.post(
        "/api/attribute", json={"text": "e)/tous ib *(adrianou= kai/saros tou= kuri/ou *faw=fi e"}
    ).json()
    assert beta["warnings"][0].startswith("[W303]")  # as restore says it
    dated = client.post("/api/attribute", json={"text": "ἔτους ιβ Ἁδριανοῦ Καίσαρος " + LONG}).json()
    assert dated["formula"]["year"] == 128 and dated["formula"]["regnal_year"] == 12
    named = client.post("/api/attribute", json={"text": "κλεανδρου " + LONG})  # dated names: no regnal year
    assert named.status_code == 200, named.text
    assert named.json()["formula"]["kind"] == "name" and named.json()["formula"]["regnal_year"] is None
    short = client.post("/api/attribute", json={"text": "ἔτους β"})
    assert short.status_code == 422 and short.json()["error"]["code"] == "E801"
    latin = client.post("/api/attribute", json={"text": "the quick brown fox jumps over the lazy dog"})
    assert latin.status_code == 422 and latin.json()["error"]["code"] == "E308"
    extra = client.post("/api/attribute", json={"text": LONG, "what": 1})
    assert extra.status_code == 422


def test_api_attribute_gives_dated_parallels_with_an_index(packaged_is_tiny, tmp_path):
    build_text_index(*INDEXED, [LONG, "ετους δευτερου μηνος θωθ"], tmp_path / "ix")
    client = TestClient(create_app(NoRestorer(), parallels=IndexParallels(ParallelIndex.open(tmp_path / "ix"))))
    body = client.post("/api/attribute", json={"text": LONG}).json()
    assert body["parallels"][0]["doc"] == "bgu.1.100" and body["parallels"][0]["place"] == "Karanis"
    assert client.post("/api/attribute", json={"text": LONG, "parallels": False}).json()["parallels"] == []


def _damaged(tiny: Path, tmp_path: Path, what: str) -> Path:
    """A copy of the tiny folder with one thing damaged (issue 63's probes)."""
    folder = Path(shutil.copytree(tiny, tmp_path / what.replace(" ", "-")))
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    arrays = load_file(str(folder / WEIGHTS_FILE))
    if what == "a NaN place bias":
        arrays["place.bias"][0] = np.nan
    elif what == "a wrong-shaped date head":
        arrays["date.weight"] = arrays["date.weight"][:, :5].copy()
    elif what == "another normaliser":
        config["normaliser"] = "apollo_restore norm.v0"
    elif what == "a FIFO for its settings":
        (folder / CONFIG_FILE).unlink()
        os.mkfifo(folder / CONFIG_FILE)
        return folder
    elif what == "settings over the cap":
        with open(folder / CONFIG_FILE, "r+b") as f:
            f.truncate(MAX_CONFIG_BYTES + 1)
        return folder
    (folder / CONFIG_FILE).write_text(json.dumps(config), encoding="utf-8")
    save_file(arrays, str(folder / WEIGHTS_FILE))
    return folder


DAMAGED = {
    "a NaN place bias": "E518",
    "a wrong-shaped date head": "E509",
    "another normaliser": "E515",
    "a FIFO for its settings": "E220",
    "settings over the cap": "E505",
}


@pytest.mark.parametrize("what", list(DAMAGED))
def test_api_attribute_answers_a_damaged_folder_with_its_number(tiny_attribution, tmp_path, monkeypatch, what):
    folder = _damaged(tiny_attribution, tmp_path, what)
    monkeypatch.setattr(attribute_module, "default_folder", lambda: folder)
    attribute_module.load_model.cache_clear()
    client = TestClient(create_app(NoRestorer()))
    try:
        with unblocking(*[p for p in folder.iterdir() if p.is_fifo()]):
            answer = client.post("/api/attribute", json={"text": LONG})
    finally:
        attribute_module.load_model.cache_clear()
    assert answer.status_code == 503 and answer.json()["error"]["code"] == DAMAGED[what], answer.text
    assert str(tmp_path) not in answer.text  # the server's paths are not shown
