"""Issue 35's probes of the web server: ``HEAD /`` and ``HEAD /api/health`` answer 200 (uptime
monitors and ``curl -I`` ask them), with no body."""

from __future__ import annotations

import warnings

import pytest
from fastapi.testclient import TestClient

from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.candidates import to_candidates
from apollo_restore.web.app import create_app


class Stub:
    batches = False
    name = "stub"
    config = RestoreConfig(k=3)

    def candidates(self, prefix, suffix, hint=None, k=None):
        return to_candidates([("κυριωι", -1.0)])


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Stub()))


@pytest.mark.parametrize(("path", "kind"), [("/", "text/html"), ("/api/health", "application/json")])
def test_head_answers_like_get_without_a_body(client: TestClient, path: str, kind: str) -> None:
    got = client.get(path)
    head = client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.headers["content-type"].startswith(kind) and head.content == b""


def test_head_elsewhere_is_still_refused(client: TestClient) -> None:
    assert client.head("/api/restore").status_code == 405  # POST only
    assert client.head("/nowhere").status_code == 404


def test_head_routes_stay_out_of_the_openapi_schema(client: TestClient) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # FastAPI warns of duplicate operation ids
        paths = client.get("/openapi.json").json()["paths"]
    assert list(paths["/api/health"]) == ["get"] and "/" not in paths


class Overflowing(Stub):
    """A model whose scores overflow: every probability NaN."""

    def candidates(self, prefix, suffix, hint=None, k=None):
        return to_candidates([("κυριωι", float("nan")), ("θεωι", float("nan"))])

    def score_readings(self, prefix, suffix, hint, readings):
        return [float("nan")] * len(readings)

    def language_model(self):
        return None


def test_probabilities_that_are_not_finite_are_E317_never_null() -> None:
    from apollo_restore.restoration.presentation.present import Presented

    client = TestClient(create_app(Presented(Overflowing())), raise_server_exceptions=False)
    r = client.post("/api/restore", json={"text": "Κόμων Μουσαίου [.4] χαίρειν", "k": 3})
    assert r.status_code == 500 and r.json()["error"]["code"] == "E317", r.text
    assert "null" not in r.text and "NaN" not in r.text
