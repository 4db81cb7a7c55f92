"""One declared answer (:mod:`apollo_restore.schema.attribution`) at every door: for the same
text the CLI's ``--json``, the Python API and ``POST /api/attribute`` give the same JSON, of the
shape the schema declares (the API documents it in ``/openapi.json``); a text dated by its names
is answered, not a 500.

    python -m pytest -q tests/attribution/test_one_answer.py
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import apollo_restore
from apollo_restore.cli.app import app
from apollo_restore.schema.answers import Attribution, District
from apollo_restore.web.app import create_app
from tests.attribution.test_doors import LONG
from tests.attribution.test_web import NoRestorer, packaged_is_tiny  # noqa: F401 (a fixture)

TEXTS = {
    "plain": LONG,
    "a regnal year": "ἔτους ιβ Ἁδριανοῦ Καίσαρος " + LONG,
    "dated names": "κλεανδρου " + LONG,  # no regnal year, no era: the API answered 500 for these
    "short": "κομων μουσαιου",
}


@pytest.mark.parametrize("kind", TEXTS)
def test_the_cli_python_and_the_api_give_the_same_json(packaged_is_tiny, tiny_attribution, kind):  # noqa: F811
    text = TEXTS[kind]
    cli = CliRunner().invoke(app, ["attribute", text, "--no-parallels", "--json"])
    assert cli.exit_code == 0, cli.output
    python = apollo_restore.attribute(text, parallels=False)
    api = TestClient(create_app(NoRestorer())).post("/api/attribute", json={"text": text, "parallels": False})
    assert api.status_code == 200, api.text
    assert isinstance(python, Attribution)
    assert json.loads(cli.output) == python.to_dict() == api.json()
    assert Attribution.model_validate(api.json()).to_dict() == api.json()  # the JSON reads back as an answer
    assert [set(d) for d in api.json()["districts"]][:1] == [{"name", "prob", "places"}]  # declared, typed
    if kind == "dated names":
        assert api.json()["formula"]["kind"] == "name" and api.json()["formula"]["regnal_year"] is None


def test_the_api_documents_the_declared_answer(packaged_is_tiny):  # noqa: F811
    schema = TestClient(create_app(NoRestorer())).get("/openapi.json").json()
    answer = schema["paths"]["/api/attribute"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    name = answer["$ref"].rsplit("/", 1)[-1]
    models = schema["components"]["schemas"]
    assert set(models[name]["properties"]) == set(Attribution.model_fields)
    formula = next(m for n, m in models.items() if n.startswith("Formula"))
    assert formula["properties"]["kind"]["enum"] == ["year", "month", "title", "name"]


def test_districts_are_declared_for_the_model_that_gives_them(tiny_attribution):
    """The districts, declared once, are in the JSON as declared, and read back as declared."""
    found = apollo_restore.attribute(LONG, parallels=False, model=str(tiny_attribution))
    first = found.places[0]
    found.districts = [District(name="Oxyrhynchites", prob=first.prob, places=[first])]
    row = found.to_dict()
    assert row["districts"] == [{"name": "Oxyrhynchites", "prob": first.prob, "places": [first.model_dump()]}]
    assert Attribution.model_validate(row).districts[0].places[0].place == first.place
    with pytest.raises(ValueError):
        Attribution.model_validate({**row, "districts": [{"name": "Oxyrhynchites", "prob": 0.5, "what": 1}]})
