"""The wide place model (NumPy head against scikit-learn), the districts and their doors (issue 62)."""

from __future__ import annotations

import json

import numpy as np
import pytest
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
from apollo_restore.attribution.train import save
from apollo_restore.attribution.wide import WidePlaces, grams
from apollo_restore.cli.app import app
from tests.attribution.conftest import DISTRICTS, PLACES

LONG = "αυρηλιου καρανιδος ηρακλειδου σαραπιωνος οξυρυγχων πολεως ετους ιβ " * 3


def test_grams_are_char_wb_without_lost_letters():
    assert grams("αβ") == [" ", "α", "β", " ", " α", "αβ", "β ", " αβ", "αβ ", " αβ "]
    assert all("-" not in g for g in grams("κα-ρανις")) and " κα" in grams("κα-ρανις")
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import TfidfVectorizer

    text = "ετει ιβ αυρηλιου καρανιδι"  # scikit-learn's char_wb cuts the same (no final sigma: ours is σ)
    ours = TfidfVectorizer(analyzer=grams).fit([text]).get_feature_names_out().tolist()
    theirs = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 5)).fit([text]).get_feature_names_out().tolist()
    assert ours == theirs


def test_numpy_head_equals_scikit_learn_decision_function():
    pytest.importorskip("sklearn")
    from apollo_restore.attribution.train_wide import fit_wide, vectoriser, wide_arrays

    rng = np.random.default_rng(0)
    words = [["καρανιδος", "αρσινοιτου", "σοκνοπαιου"], ["οξυρυγχων", "πολεως", "σαραπιωνος"],
             ["διοσπολεως", "μεγαλης", "αμμωνιου"]]  # fmt: skip
    common = ["ετους", "αυρηλιου", "χαιρειν", "ομολογω"]
    texts, y = [], []
    for _ in range(60):
        c = int(rng.integers(3))
        texts.append(" ".join(rng.choice(words[c] + common, size=8)))
        y.append(c)
    vec = vectoriser().fit(texts)
    y[:3] = [3, 3, 3]  # a fourth place of three documents: not a column of the wide model
    coef, bias, covered = fit_wide(vec.transform(texts), np.asarray(y), 4, alpha=1e-4, epochs=20, seed=0, min_docs=5)
    assert covered.tolist() == [0, 1, 2] and coef.shape == (len(vec.idf_), 3)
    head = WidePlaces(wide_arrays(vec, coef, bias, covered))
    for text in ["καρανιδος ετους αυρηλιου", "οξυρυγχων πολεως χαιρειν ομολογω", "μεγαλης αμμωνιου -- ετους"]:
        expected = (vec.transform([text]) @ coef + bias)[0]  # the decision function, one-vs-rest
        got = head.scores(text, 4)
        assert np.allclose(got[:3], expected, atol=0.02 * np.abs(expected).max())  # int8 weights, float16 IDF
        assert got.argmax() == expected.argmax() and got[3] == -np.inf
    assert np.allclose(head.columns("123 ·"), bias)  # no Greek word: the biases


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
    tsv.write_text("place\tdocuments\tnome\tregion\nKaranis\t9\tArsinoites\tÄgypten\nHermopolis\t9\t\t\n"
                   "Nome of Arsinoites\t9\tArsinoites\tÄgypten\nX\t3\tAntinoites bzw. Hermopolites\t\n",
                   encoding="utf-8")  # fmt: skip
    nomes = read_hierarchy(tsv)
    assert nome_of("Karanis", nomes) == nome_of("Nome of Arsinoites", nomes) == "Arsinoites"
    assert nome_of("Hermopolis", nomes) == "Hermopolis"  # HGV records none: its own (the measure)
    assert district_of("Hermopolis", nomes) == "Hermopolites"  # the answer: the nome named for it
    assert district_of("X", nomes) == "X" and district_of("Ta Memnoneia (Theben)", nomes) == "Theben"
    found = class_districts(["Karanis", "Lipara (Sicily)", "Crete", "Aphrodisias (Caria)"], nomes, {1, 2, 3})
    assert found == ["Arsinoites", "Sicily", "Crete", "Aphrodisias (Caria)"]


def test_answer_batch_and_cli_carry_districts(tiny_attribution, tmp_path):
    found = attribute(LONG, folder=str(tiny_attribution), parallels=False)
    assert found.districts and {d["name"] for d in found.districts} <= set(DISTRICTS)
    assert np.isclose(sum(d["prob"] for d in found.districts), 1, atol=1e-3)
    by_place = {p["place"]: p["prob"] for p in found.places}
    for d in found.districts:  # each district the sum of its places
        assert np.isclose(d["prob"], sum(by_place[p] for p, o in zip(PLACES, DISTRICTS) if o == d["name"]), atol=1e-3)
    texts, out = tmp_path / "texts.jsonl", tmp_path / "out.jsonl"
    texts.write_text(json.dumps({"id": "a", "text": LONG}) + "\n", encoding="utf-8")
    runner = CliRunner()
    args = ["attribute", "--texts", str(texts), "--out", str(out), "--model", str(tiny_attribution), "--no-parallels"]
    assert runner.invoke(app, args).exit_code == 0
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["places"] and row["districts"][0].keys() == {"name", "prob", "places"}
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels"])
    assert result.exit_code == 0 and f"district {found.districts[0]['name']}" in result.output
    result = runner.invoke(app, ["attribute", LONG, "--model", str(tiny_attribution), "--no-parallels", "--json"])
    assert json.loads(result.output)["districts"] == found.to_dict()["districts"]


def test_the_wide_model_moves_the_places_and_a_reloaded_folder_answers_the_same(tiny_attribution, tmp_path):
    from safetensors.numpy import load_file

    model = AttributionModel.load(tiny_attribution)
    assert model.wide is not None
    first = model.predict(LONG, 200)
    arrays = load_file(str(tiny_attribution / "attribution.safetensors"))
    config = json.loads((tiny_attribution / "attribution.json").read_text(encoding="utf-8"))
    save(arrays, config, tmp_path / "again")
    again = AttributionModel.load(tmp_path / "again").predict(LONG, 200)
    assert [p["place"] for p in again.places] == [p["place"] for p in first.places]
    assert np.allclose([p["prob"] for p in again.places], [p["prob"] for p in first.places], atol=1e-6)
    assert again.districts == first.districts
    bag_only = AttributionModel({k: v for k, v in arrays.items() if not k.startswith("wide.")}, config)
    assert bag_only.wide is None
    without = bag_only.predict(LONG, 200)
    assert not np.allclose([p["prob"] for p in without.places], [p["prob"] for p in first.places], atol=1e-3)
    assert without.year == first.year  # the date does not read the wide model


def test_a_damaged_wide_model_is_refused_with_its_number(tiny_attribution, tmp_path):
    from safetensors.numpy import load_file

    from apollo_restore.errors import ModelFolderError

    arrays = load_file(str(tiny_attribution / "attribution.safetensors"))
    config = json.loads((tiny_attribution / "attribution.json").read_text(encoding="utf-8"))
    beyond = dict(arrays, **{"wide.classes": np.asarray([0, 1, 7], np.int16)})  # a place there is not
    save(beyond, config, tmp_path / "beyond")
    with pytest.raises(ModelFolderError) as err:
        AttributionModel.load(tmp_path / "beyond")
    assert err.value.code == "E533" and "wide.classes" in str(err.value)
    fewer = dict(config, wide=dict(config["wide"], n_grams=config["wide"]["n_grams"] - 1))  # vocabulary ≠ IDF
    save(arrays, fewer, tmp_path / "fewer")
    with pytest.raises(ModelFolderError) as err:
        AttributionModel.load(tmp_path / "fewer")
    assert err.value.code == "E509" and "wide.idf" in str(err.value)
