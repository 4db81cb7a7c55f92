"""Issue 35's probes of the web server: ``HEAD /`` and ``HEAD /api/health`` answer 200 (uptime
monitors and ``curl -I`` ask them), with no body."""

from __future__ import annotations

import warnings

import pytest
from fastapi.testclient import TestClient

from apollo_restore.web.app import create_app
from tests.stubs import FixedReadings


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(FixedReadings([("κυριωι", -1.0)], name="stub", k=3)))


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


def test_probabilities_that_are_not_finite_are_E317_never_null() -> None:
    from apollo_restore.restoration.presentation.present import Presented

    client = TestClient(
        create_app(Presented(FixedReadings([("κυριωι", float("nan")), ("θεωι", float("nan"))], name="overflowing"))),
        raise_server_exceptions=False,
    )
    r = client.post("/api/restore", json={"text": "Κόμων Μουσαίου [.4] χαίρειν", "k": 3})
    assert r.status_code == 500 and r.json()["error"]["code"] == "E317", r.text
    assert "null" not in r.text and "NaN" not in r.text
