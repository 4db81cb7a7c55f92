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
