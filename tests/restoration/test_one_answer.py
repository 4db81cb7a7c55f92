"""One restoration request and answer (:mod:`apollo_restore.schema.restoration`) at every door:
for the same text the CLI's ``--json``, the Python API and ``POST /api/restore`` give the same
JSON, the fields ``/openapi.json`` documents (its body and its response model are the schema's own
classes, which the core runs and builds).

    python -m pytest -q tests/restoration/test_one_answer.py
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli import restore as cli_restore
from apollo_restore.cli.app import app
from apollo_restore.restoration.driver import restore_text
from apollo_restore.schema.restoration import Restoration, RestoreRequest
from apollo_restore.web.app import create_app
from tests.stubs import first_reading_at

TEXT = "ὁμολογῶ πεπρακέναι σοι [.7] θήλειαν [- - -] πυρρὰν κεχαραγμένην"


def test_the_cli_python_and_the_api_give_the_same_json(monkeypatch):
    restorer = first_reading_at(0.95)
    monkeypatch.setattr(cli_restore, "_load", lambda *args, **kwargs: (restorer, None))
    monkeypatch.setattr(apollo_restore, "load_restorer", lambda *args, **kwargs: restorer)
    cli = CliRunner().invoke(app, ["restore", TEXT, "--json"])
    assert cli.exit_code == 0, cli.output
    python = apollo_restore.restore(TEXT)
    api = TestClient(create_app(restorer)).post("/api/restore", json={"text": TEXT})
    assert api.status_code == 200, api.text
    assert isinstance(python, Restoration)
    answers = [json.loads(cli.stdout), python.to_dict(), api.json()]
    for answer in answers:
        answer["ms"] = 0.0  # the timings differ, nothing else may
        for gap in answer["gaps"]:
            gap["ms"] = 0.0
    assert answers[0] == answers[1] == answers[2]
    body = answers[2]
    assert body["gaps_in_text"] == 2 and [g["filled"] for g in body["gaps"]] == [True, False]
    assert body["restored_leiden"] == TEXT.replace("[.7]", "⁅δεύτερον⁆") and body["gaps"][0]["hint"] == 7


def test_the_api_documents_the_core_s_answer():
    schema = TestClient(create_app(first_reading_at())).get("/openapi.json").json()
    answer = schema["paths"]["/api/restore"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    models = schema["components"]["schemas"]
    restoration = models[answer["$ref"].rsplit("/", 1)[-1]]
    assert set(restoration["properties"]) == set(Restoration.model_fields) | {"restored_leiden"}
    gap = next(m for name, m in models.items() if name.startswith("GapResult"))
    assert {"filled", "hint", "length_estimate", "candidates"} <= set(gap["properties"])
    assert "fill_threshold" not in gap["properties"]  # the restoration's, not each gap's
    assert "edition form" in restoration["properties"]["restored_leiden"]["description"]


def test_one_request_and_one_answer_are_declared_once_in_the_schema():
    """Issue 63: two RestoreRequest classes (the web's pydantic body, the core's dataclass) were
    converted field by field, and the web mirrored the core's answer types by hand."""
    declared = {}
    for path in sorted(Path(apollo_restore.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in (
                "RestoreRequest",
                "Restoration",
                "GapResult",
                "Candidate",
            ):
                declared.setdefault(node.name, []).append(path.relative_to(Path(apollo_restore.__file__).parent))
    assert declared == {name: [Path("schema/restoration.py")] for name in declared} and len(declared) == 4
    assert apollo_restore.RestoreRequest is RestoreRequest and apollo_restore.Restoration is Restoration


def test_the_api_takes_the_schema_s_request_as_its_body():
    app = create_app(first_reading_at())
    (route,) = [r for r in app.routes if getattr(r, "path", "") == "/api/restore"]
    assert route.body_field.field_info.annotation is RestoreRequest
    schema = TestClient(app).get("/openapi.json").json()
    body = schema["paths"]["/api/restore"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    model = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    assert set(model["properties"]) == set(RestoreRequest.model_fields)
    assert "ca.7" in model["properties"]["hints"]["description"]  # the forms the CLI takes, the web takes too


def test_a_hint_as_typed_is_read_alike_at_every_door():
    restorer = first_reading_at(0.5)
    api = TestClient(create_app(restorer)).post("/api/restore", json={"text": TEXT, "hints": {"1": "ca.7"}, "k": 1})
    assert api.status_code == 200, api.text
    python = restore_text(restorer, RestoreRequest(TEXT, hints={1: "ca.7"}, k=1))
    assert api.json()["gaps"][0]["hint"] == python.gaps[0].hint.to_json() == [5, 9]


def test_the_python_api_takes_a_whole_request(monkeypatch):
    restorer = first_reading_at(0.95)
    monkeypatch.setattr(apollo_restore, "load_restorer", lambda *args, **kwargs: restorer)
    asked = apollo_restore.restore(apollo_restore.RestoreRequest(TEXT, k=1, only=[2], fills={1: ""}))
    assert [g.number for g in asked.gaps] == [2] and asked.gaps_in_text == 2
