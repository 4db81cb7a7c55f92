"""Whole editions over the HTTP API (issue 51, item 4): a text of more gaps than one request may
restore (``max_gaps``, 20 on the web) is restored a few gaps per request (``only``), the earlier gaps
holding the first readings earlier requests gave them (``fills``), and every gap then reads the
context, and gets the readings, of one restoration of the whole text (``restore_text``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from apollo_restore.restoration.driver import restore_text
from apollo_restore.schema.limits import Limits
from apollo_restore.web.app import create_app
from tests.stubs import FixedReadings

#: a standard DDB file of 34 gaps (CC BY 3.0, papyri.info), more than one web request restores
OXY = Path(__file__).resolve().parents[1] / "fixtures" / "idp-sample" / "DDB_EpiDoc_XML" / "p.oxy" / "p.oxy.2"
OXY = OXY / "p.oxy.2.298.xml"
STUB = FixedReadings([("κυριωι", -1.0), ("θεου", -1.5), ("κυρ", -1.2)], name="stub")


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(STUB))


@pytest.fixture(scope="module")
def leiden(client) -> str:
    """The Leiden text the page opens p.oxy.2.298.xml as (``/api/epidoc``)."""
    body = client.post("/api/epidoc", files={"file": (OXY.name, OXY.read_bytes(), "application/xml")}).json()
    assert body["gaps"] == 34 > Limits().request.max_gaps
    return body["leiden"]


def _plain(gaps: list[dict]) -> list[dict]:
    """Gap results as JSON gives them, without their timings."""
    return [{k: v for k, v in gap.items() if k != "ms"} for gap in json.loads(json.dumps(gaps))]


def _in_parts(client: TestClient, text: str, size: int, pins: dict[int, str] | None = None) -> list[dict]:
    """Every gap of ``text`` restored ``size`` gaps per request, as the page asks for them."""
    pins = pins or {}
    gaps: list[dict] = []
    total = None
    while total is None or len(gaps) < total:
        first = len(gaps) + 1
        only = list(range(first, first + size)) if total is None else list(range(first, min(first + size, total + 1)))
        fills = {
            g["number"]: (g["candidates"][0]["text"] if g["candidates"] else "") for g in gaps if g["pinned"] is None
        }
        answer = client.post("/api/restore", json={"text": text, "k": 3, "only": only, "fills": fills, "pins": pins})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        total = body["gaps_in_text"]
        assert [g["number"] for g in body["gaps"]] == only
        gaps += body["gaps"]
    return gaps


@pytest.mark.parametrize("size", [1, 7])
def test_a_34_gap_edition_restored_in_parts_is_one_restoration(client, leiden, size):
    """34 requests of one gap (or 5 of at most 7) give what one restore_text gives: the same
    context for every gap, the same readings, spans and hints."""
    whole = restore_text(STUB, leiden, k=3).to_dict()["gaps"]
    assert len(whole) == 34
    assert _plain(_in_parts(client, leiden, size)) == _plain(whole)
    # a pin in the middle: the gaps after it read it, as in one restoration
    pinned = _in_parts(client, leiden, size, pins={"12": "θεου"})
    assert _plain(pinned) == _plain(restore_text(STUB, leiden, pins={12: "θεου"}, k=3).to_dict()["gaps"])
    assert "θεου" in pinned[12]["prefix"][-60:] and pinned[11]["pinned"] == "θεου"


def test_the_gap_limit_is_the_gaps_asked(client, leiden):
    """All 34 at once are refused (E303, naming `only`); 20 asked of the 34 are restored."""
    err = client.post("/api/restore", json={"text": leiden}).json()["error"]
    assert err["code"] == "E303" and "at most 20" in err["message"] and "`only`" in err["message"]
    body = client.post("/api/restore", json={"text": leiden, "k": 1, "only": list(range(1, 21))}).json()
    assert len(body["gaps"]) == 20 and body["gaps_in_text"] == 34
    err = client.post("/api/restore", json={"text": leiden, "only": list(range(1, 22))}).json()["error"]
    assert err["code"] == "E303" and "asks for 21 gaps" in err["message"]


@pytest.mark.parametrize(
    ("only", "fills", "code", "words"),
    [
        ([35], {}, "E327", "the text has 34 gaps"),
        ([3, 3], {"1": "α", "2": "β"}, "E327", "asked twice"),
        ([3], {"1": "α"}, "E328", "gap 2"),  # gap 2 holds nothing: its context would be a guess
        ([3], {"1": "α", "2": "β", "3": "γ"}, "E328", "is asked"),
        ([2], {"1": "α", "3": "γ"}, "E328", "after gap 2"),
        ([2], {"1": "abc"}, "E307", "gap 1"),
        ([], {}, "E310", "only"),
        (["2"], {}, "H002", "only"),
    ],
)
def test_only_and_fills_are_checked(client, leiden, only, fills, code, words):
    answer = client.post("/api/restore", json={"text": leiden, "only": only, "fills": fills})
    assert answer.status_code == 422
    err = answer.json()["error"]
    assert err["code"] == code and words in err["message"], err


def test_a_fill_for_a_pinned_gap_is_refused_and_an_empty_fill_is_a_gap_without_reading(client, leiden):
    err = client.post("/api/restore", json={"text": leiden, "only": [2], "pins": {"1": "α"}, "fills": {"1": "β"}})
    assert err.json()["error"]["code"] == "E328" and "pinned" in err.json()["error"]["message"]
    body = client.post("/api/restore", json={"text": leiden, "k": 1, "only": [2], "fills": {"1": ""}}).json()
    assert [g["number"] for g in body["gaps"]] == [2]


def test_parallels_of_a_gap_of_a_long_edition(leiden):
    """The page asks parallels gap by gap: a gap of a 34-gap text has them too."""
    from apollo_restore.web.parallels import IndexParallels
    from tests.web.test_api import FakeIndex

    client = TestClient(create_app(STUB, parallels=IndexParallels(FakeIndex())))
    assert client.post("/api/parallels", json={"text": leiden, "gap": 30}).json()["gap"] == 30
    err = client.post("/api/parallels", json={"text": leiden, "gap": 35}).json()["error"]
    assert err["code"] == "H013" and "no gap 35: the text has 34 gaps" in err["message"]


def test_an_epidoc_file_is_measured_by_its_edition_at_every_door(client, leiden):
    """The XML of p.oxy.2.298 is longer than a web text may be, its edition is not: restore reads
    it, as export does (one text-length limit, of the edition, at every door)."""
    xml = OXY.read_text(encoding="utf-8")
    assert len(xml) > Limits().request.max_text_chars > len(leiden)
    body = client.post("/api/restore", json={"text": xml, "k": 1, "only": [1]}).json()
    assert body["text"] == leiden and body["gaps_in_text"] == 34
    assert client.post("/api/export", json={"text": xml, "format": "epidoc"}).status_code == 200
