"""``POST /api/attribute`` on the tiny random folder: the answer's shape, numbered refusals,
parallels only where the server has an index.

    python -m pytest -q tests/attribution/test_web.py
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from apollo_restore.attribution import attribute as attribute_module
from apollo_restore.data.textindex import build_text_index
from apollo_restore.retrieve.parallels import ParallelIndex
from apollo_restore.web.app import create_app
from apollo_restore.web.parallels import IndexParallels
from tests.attribution.test_doors import LONG


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
    build_text_index(["bgu.1.100"], ["ddb"], [LONG], tmp_path / "ix")
    client = TestClient(create_app(NoRestorer(), parallels=IndexParallels(ParallelIndex.open(tmp_path / "ix"))))
    body = client.post("/api/attribute", json={"text": LONG}).json()
    assert body["parallels"][0]["doc"] == "bgu.1.100" and body["parallels"][0]["place"] == "Karanis"
    assert client.post("/api/attribute", json={"text": LONG, "parallels": False}).json()["parallels"] == []
