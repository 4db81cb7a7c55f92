"""A hardened server (issue #13): Host allow-list, bad characters refused before any model work,
EpiDoc → Leiden that always restores, local API docs, read timeouts, time limits and
cancellation of abandoned requests on a real uvicorn server."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from apollo_restore.schema.limits import Limits
from apollo_restore.schema.restoration import Candidate
from apollo_restore.web.app import create_app
from apollo_restore.web.server import background_server
from tests.stubs import FixedReadings

BGU = (
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. "
    "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην"
)
MANY_GAPS = " ".join(f"λόγος ἐστὶν [.{i % 5 + 1}] ἐν ἀρχῇ" for i in range(20))
EPIDOC = (Path(__file__).resolve().parent.parent / "fixtures" / "epidoc" / "61067.xml").read_bytes()


def slow(seconds: float) -> FixedReadings:
    """A restorer taking ``seconds`` per gap and counting the gaps it was asked for."""
    return FixedReadings([Candidate("αβγ", 1.0, 0.0)], name="slow", seconds=seconds)


@pytest.fixture(scope="module")
def client(tiny_restorer) -> TestClient:
    return TestClient(create_app(tiny_restorer))


def test_unknown_host_is_refused(client):
    assert client.get("/api/health", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/health", headers={"host": "localhost:8000"}).status_code == 200
    open_app = TestClient(create_app(slow(0), allowed_hosts=["*"]))
    assert open_app.get("/api/health", headers={"host": "anything.example"}).status_code == 200


@pytest.mark.parametrize("bad", ["\x00", "\x07", "\x1b[31m", "\x85", "\ufffd"])
def test_control_characters_are_422_before_any_model_work(bad):
    restorer = slow(0)
    client = TestClient(create_app(restorer))
    r = client.post("/api/restore", json={"text": BGU.replace("τοῦ", "τοῦ" + bad)})
    assert r.status_code == 422 and r.json()["error"]["code"] == "E309" and restorer.calls == 0
    export = client.post("/api/export", json={"text": BGU + bad, "format": "epidoc"})
    assert export.status_code == 422 and export.json()["error"]["code"] == "E309"


def test_lone_surrogate_is_422_and_the_connection_survives():
    restorer = slow(0)
    client = TestClient(create_app(restorer))
    body = ('{"text": "' + BGU.replace("τοῦ", "\\ud800") + '"}').encode()
    r = client.post("/api/restore", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and restorer.calls == 0
    assert client.get("/api/health").status_code == 200


@pytest.mark.parametrize("quantity", ["inf", "1e308", "-4", "99999999999999999999"])
def test_epidoc_with_absurd_gaps_is_a_numbered_error_naming_the_element(quantity):
    client = TestClient(create_app(slow(0)))
    xml = EPIDOC.replace(b'quantity="4"', f'quantity="{quantity}"'.encode(), 1)
    doc = client.post("/api/epidoc", files={"file": ("x.xml", xml, "text/xml")})
    assert doc.status_code == 422 and doc.json()["error"]["code"] == "E314"
    assert f'<gap quantity="{quantity}">' in doc.json()["error"]["message"]


def test_epidoc_with_bracket_text_restores():
    client = TestClient(create_app(slow(0)))
    xml = EPIDOC.replace(b"</ab>", b" [ ? ] 12 vac. - ( \xe2\x80\xa6 </ab>", 1)
    doc = client.post("/api/epidoc", files={"file": ("x.xml", xml, "text/xml")})
    assert doc.status_code == 200, doc.text
    leiden = doc.json()["leiden"]
    restored = client.post("/api/restore", json={"text": leiden, "k": 1})
    assert restored.status_code in (200, 422), restored.text
    if restored.status_code == 422:  # a web limit (gap count), never a Leiden syntax error
        assert restored.json()["error"]["code"].startswith("E3")
    else:
        assert len(restored.json()["gaps"]) == doc.json()["gaps"]


def test_api_docs_are_served_from_local_assets(client):
    page = client.get("/docs")
    assert page.status_code == 200 and "cdn" not in page.text.lower() and "https://" not in page.text
    assert client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200


def test_restore_reports_warnings_and_restored_text(client):
    body = client.post("/api/restore", json={"text": BGU + " Marcus Antonius", "k": 1}).json()
    assert body["warnings"] and body["warnings"][0].startswith("[W301]")
    assert body["restored_text"].startswith("κομων μουσαιου")


# -- a real server: timeouts, time limits, abandoned requests ---------------------------------


def _raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


def test_slow_request_head_and_body_time_out():
    limits = Limits(read_timeout_s=0.5)
    with background_server(create_app(slow(0), limits=limits), limits) as url:
        head = _raw(url)
        head.sendall(b"POST /api/restore HTTP/1.1\r\nHost: localhost\r\n")  # the head never ends
        started = time.monotonic()
        assert head.recv(100) == b""  # closed by the server
        assert time.monotonic() - started < 3
        body = _raw(url)
        body.sendall(
            b"POST /api/restore HTTP/1.1\r\nHost: localhost\r\n"
            b'Content-Type: application/json\r\nContent-Length: 27\r\n\r\n{"te'
        )
        assert b" 408 " in body.recv(1000).split(b"\r\n")[0]


def test_time_limit_stops_the_work_and_answers_503():
    restorer = slow(0.2)
    limits = Limits(request_timeout_s=1.0)
    with background_server(create_app(restorer, limits=limits), limits) as url:
        started = time.monotonic()
        r = httpx.post(url + "/api/restore", json={"text": MANY_GAPS}, headers={"host": "localhost"}, timeout=10)
        elapsed = time.monotonic() - started
    assert r.status_code == 503 and r.json()["error"]["code"] == "H014" and "retry-after" in r.headers
    assert elapsed < 1.0 + 0.2 + 0.6 and restorer.calls < 20


def test_abandoned_request_stops_and_does_not_delay_the_next():
    restorer = slow(0.2)  # 20 gaps: 4 s when left to run
    limits = Limits(max_concurrent=1, request_timeout_s=30)
    with background_server(create_app(restorer, limits=limits), limits) as url:
        client_gone = threading.Event()

        def abandon() -> None:
            try:
                httpx.post(url + "/api/restore", json={"text": MANY_GAPS}, timeout=0.5)
            except httpx.TimeoutException:
                client_gone.set()

        abandon()
        assert client_gone.is_set()
        started = time.monotonic()
        r = httpx.post(url + "/api/restore", json={"text": BGU}, timeout=10)
        waited = time.monotonic() - started
    assert r.status_code == 200
    assert waited < 1.5  # the abandoned restoration stopped within a gap or two, not after 4 s
    assert restorer.calls < 20
