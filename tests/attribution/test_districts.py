"""The districts (nomes above villages): from HGV's hierarchy, summed from the places, at every door (issue 62)."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from apollo_restore.attribution.attribute import attribute
from apollo_restore.attribution.districts import (
    class_districts,
    district_of,
    district_probs,
    districts,
    nome_of,
    read_hierarchy,
)
from apollo_restore.attribution.model import AttributionModel
from apollo_restore.attribution.train import refit_districts, save
from apollo_restore.cli.app import app
from tests.attribution.conftest import DISTRICTS, PLACES

HIERARCHY = (
    "place\tdocuments\tnome\tregion\nKaranis\t9\tArsinoites\tÄgypten\nHermopolis\t9\t\t\n"
    "Nome of Arsinoites\t9\tArsinoites\tÄgypten\nX\t3\tAntinoites bzw. Hermopolites\t\n"
)
LONG = "αυρηλιου καρανιδος ηρακλειδου σαραπιωνος οξυρυγχων πολεως ετους ιβ " * 3


def test_districts_sum_their_places_and_are_a_distribution():
    rng = np.random.default_rng(1)
    places = ["Karanis", "Nome of Arsinoites", "Oxyrhynchos", "Theben (Charax)", "Lipara (Sicily)", "Syene"]
    of = ["Arsinoites", "Arsinoites", "Oxyrhynchites", "Theben", "Sicily", "Syene"]
    probs = rng.dirichlet(np.ones(len(places)))
    found = districts(places, of, probs, top=10)
    assert np.isclose(sum(d["prob"] for d in found), 1, atol=1e-3)
    assert [d["prob"] for d in found] == sorted((d["prob"] for d in found), reverse=True)
    arsinoites = next(d for d in found if d["name"] == "Arsinoites")
    assert np.isclose(arsinoites["prob"], probs[0] + probs[1], atol=1e-4)
    assert {p["place"] for p in arsinoites["places"]} == {"Karanis", "Nome of Arsinoites"}
    names, many = district_probs(rng.dirichlet(np.ones(len(places)), size=4), of)
    assert many.shape == (4, 5) and np.allclose(many.sum(axis=1), 1) and names[0] == "Arsinoites"


def test_district_of_a_place(tmp_path):
    tsv = tmp_path / "h.tsv"
    tsv.write_text(HIERARCHY, encoding="utf-8")
    nomes = read_hierarchy(tsv)
    assert nome_of("Karanis", nomes) == nome_of("Nome of Arsinoites", nomes) == "Arsinoites"
    assert nome_of("Hermopolis", nomes) == "Hermopolis"  # HGV records none: its own (the measure)
    assert district_of("Hermopolis", nomes) == "Hermopolites"  # the answer: the nome named for it
    assert district_of("X", nomes) == "X" and district_of("Ta Memnoneia (Theben)", nomes) == "Theben"
    found = class_districts(["Karanis", "Lipara (Sicily)", "Crete", "Aphrodisias (Caria)"], nomes, {1, 2, 3})
    assert found == ["Arsinoites", "Sicily", "Crete", "Aphrodisias (Caria)"]


def test_answer_batch_and_cli_carry_districts(tiny_attribution, tmp_path):
    found = attribute(LONG, folder=str(tiny_attribution), parallels=False)
    assert found.districts and {d.name for d in found.districts} <= set(DISTRICTS)
    assert np.isclose(sum(d.prob for d in found.districts), 1, atol=1e-3)
    by_place = {p.place: p.prob for p in found.places}
    for d in found.districts:  # each district the sum of its places
        assert np.isclose(d.prob, sum(by_place[p] for p, o in zip(PLACES, DISTRICTS) if o == d.name), atol=1e-3)
    texts, out = tmp_path / "texts.jsonl", tmp_path / "out.jsonl"
    texts.write_text(json.dumps({"id": "a", "text": LONG}) + "\n", encoding="utf-8")
    runner = CliRunner()
    args = ["attribute", "--texts", str(texts), "--out", str(out), "--model", str(tiny_attribution), "--no-parallels"]
    assert runner.invoke(app, args).exit_code == 0
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["places"] and row["districts"][0].keys() == {"name", "prob", "places"}
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels"])
    assert result.exit_code == 0 and f"district {found.districts[0].name}" in result.output
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels", "--json"])
    assert json.loads(result.output)["districts"] == found.to_dict()["districts"]


def test_districts_are_written_into_the_config_alone_and_a_reloaded_folder_answers_the_same(tiny_attribution,
                                                                                            tmp_path):  # fmt: skip
    from safetensors.numpy import load_file

    first = AttributionModel.load(tiny_attribution).predict(LONG, 200)
    arrays = load_file(str(tiny_attribution / "attribution.safetensors"))
    config = json.loads((tiny_attribution / "attribution.json").read_text(encoding="utf-8"))
    save(arrays, {k: v for k, v in config.items() if k != "place_districts"}, tmp_path / "none")
    without = AttributionModel.load(tmp_path / "none").predict(LONG, 200)
    assert without.districts == [] and without.places == first.places  # a folder without them: no districts
    weights = (tmp_path / "none" / "attribution.safetensors").read_bytes()
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "hgv-place-hierarchy.tsv").write_text(HIERARCHY, encoding="utf-8")
    assert refit_districts(tmp_path / "none", corpora) == ["Oxyrhynchos", "Arsinoites", "Theben"]
    assert (tmp_path / "none" / "attribution.safetensors").read_bytes() == weights  # the arrays untouched
    again = AttributionModel.load(tmp_path / "none").predict(LONG, 200)
    assert again.places == first.places
    assert {d.name for d in again.districts} == {"Oxyrhynchos", "Arsinoites", "Theben"}
    assert np.isclose(sum(d.prob for d in again.districts), 1, atol=1e-3)
