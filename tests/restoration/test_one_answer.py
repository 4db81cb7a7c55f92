"""One restoration answer (:class:`~apollo_restore.restoration.types.Restoration`) at every door:
for the same text the CLI's ``--json``, the Python API and ``POST /api/restore`` give the same
JSON, the fields ``/openapi.json`` documents (its response model is the core's own class).

    python -m pytest -q tests/restoration/test_one_answer.py
"""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli import restore as cli_restore
from apollo_restore.cli.app import app
from apollo_restore.schema.restoration import Restoration
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
