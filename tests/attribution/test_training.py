"""The attribution's training path on a tiny synthetic corpus (a few dozen papyri of three places
and three centuries, written as a prepared parquet and an HGV table in ``tmp_path``): fit,
calibrate, save, reload and predict the same; the command and its config; the temperatures.

    python -m pytest -q tests/attribution/test_training.py
"""

from __future__ import annotations

import io
import json
import tarfile

import numpy as np
import pytest
from typer.testing import CliRunner

from apollo_restore.attribution.features import FEATURES
from apollo_restore.attribution.labels import HGV_FILE, Label
from apollo_restore.attribution.model import AttributionModel, date_summary, softmax
from apollo_restore.attribution.train import (
    BANDS,
    BIN_EDGES,
    DDB_ARCHIVE,
    HIERARCHY_FILE,
    Example,
    calibrate,
    central_interval,
    examples,
    fit,
    place_classes,
    run_config,
    save,
    temperatures,
)
from apollo_restore.cli.app import app
from apollo_restore.data.normalise import NORMALISER
from apollo_restore.data.table import DOCUMENTS_FILE, write_documents
from apollo_restore.schema.attribution import ATTRIBUTION_FORMAT
from apollo_restore.schema.training import AttributionTrainConfig, SettingError
from tests.conftest import document_row

#: Regnal years 1–4 as numerals: Oxyrhynchos's papyri are dated by Hadrian's years (AD 117–120).
NUMERALS = ["α", "β", "γ", "δ"]
HADRIAN = 116
#: Each place's own words and the year its documents are dated (a place and a century each).
PLACES = {
    "Oxyrhynchos": (["οξυρυγχων", "σαραπιωνος", "θεωνος", "πολεως"], HADRIAN),
    "Karanis": (["καρανιδος", "ηρακλειδου", "μεριδος", "κωμης"], 300),
    "Theben": (["διοσπολεως", "αμμωνιου", "πατσεους", "μεγαλης"], -150),
}
COMMON = ["και", "του", "χαιρειν", "ομολογω", "εχειν", "παρα", "σου", "δραχμας"]


def corpus(folder, per_place: int = 12) -> tuple:
    """``(prepared, corpora)`` folders: ``per_place`` training and 4 validation papyri of each
    place (seeded text from its words and the common ones), and their HGV rows."""
    rng = np.random.default_rng(0)
    rows, hgv = [], ["tm\tplace\tyear\trange"]
    for p, (place, (words, year)) in enumerate(PLACES.items()):
        for i in range(per_place + 4):
            tm = f"{p}{i:03d}"
            text = " ".join(rng.choice(words + COMMON, size=int(rng.integers(12, 40))))
            split = "train" if i < per_place else "validation"
            if place == "Oxyrhynchos":  # dated to the year by its formula
                n = i % len(NUMERALS) + 1
                text, year, spread = f"ετους {NUMERALS[n - 1]} αδριανου του κυριου {text}", HADRIAN + n, 0
            else:
                spread = 10
            rows.append(document_row(f"p.{place.lower()}.{i}", text, split, tm=tm))
            hgv.append(f"{tm}\t{place}\t{year}\t{spread}")
    prepared, corpora = folder / "prepared", folder / "corpora"
    prepared.mkdir()
    corpora.mkdir()
    write_documents(rows, prepared / DOCUMENTS_FILE)
    (corpora / HGV_FILE).write_text("\n".join(hgv) + "\n", encoding="utf-8")
    nomes = "place\tnome\nOxyrhynchos\tOxyrhynchites\nKaranis\tArsinoites\nTheben\tPerithebas\n"
    (corpora / HIERARCHY_FILE).write_text(nomes, encoding="utf-8")  # the places' districts
    edition = '<TEI><text><w original="Σαραπίωνος"/><w original="Θέωνος"/><w original="καὶ"/></text></TEI>'.encode()
    with tarfile.open(corpora / DDB_ARCHIVE, "w:xz") as archive:  # the editions' proper names
        info = tarfile.TarInfo("ddb/p.oxy.1.1.xml")
        info.size = len(edition)
        archive.addfile(info, io.BytesIO(edition))
    return prepared, corpora


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    return corpus(tmp_path_factory.mktemp("tiny-corpus"))


def test_fit_calibrate_save_reload_predict_the_same(tiny_corpus, tmp_path):
    prepared, corpora = tiny_corpus
    train = examples(prepared, corpora, "train", seed=0, crops=1, fill=0.5)
    valid = examples(prepared, corpora, "validation", seed=0, crops=1, fill=0.0)
    places = place_classes(train)
    assert sorted(places) == sorted(PLACES) and len(train) > 36  # every place a class; crops too
    arrays = fit(train, [e for e in valid if "#" not in e.doc], places, buckets=2**10, dim=16, epochs=30, seed=0)
    temperature = calibrate(arrays, valid, places, 2**10)
    assert set(temperature) == {"date", "place"} and all(len(t) == len(BANDS) for t in temperature.values())
    config = {"format": ATTRIBUTION_FORMAT, "normaliser": NORMALISER, "features": FEATURES, "buckets": 2**10,
              "dim": 16, "bin_edges": BIN_EDGES, "places": places, "bands": list(BANDS),
              "temperature": temperature}  # fmt: skip
    save(arrays, config, tmp_path / "model")
    fitted, reloaded = AttributionModel(arrays, config), AttributionModel.load(tmp_path / "model")
    right = 0
    for e in valid:
        a, b = fitted.predict(e.text, e.letters), reloaded.predict(e.text, e.letters)
        assert a.model_copy(update={"model_fingerprint": b.model_fingerprint}).to_dict() == b.to_dict()
        right += a.places[0].place == e.label.place
    assert right / len(valid) >= 0.8  # each place's own words are learnt
    long = [e for e in valid if "#" not in e.doc]
    years = [reloaded.predict(e.text, e.letters) for e in long]
    assert np.mean([y.low - 10 <= e.label.lo <= y.high + 10 for y, e in zip(years, long)]) >= 0.8  # dates too


def test_the_command_trains_a_folder_the_attribute_door_reads(tiny_corpus, tmp_path):
    prepared, corpora = tiny_corpus
    out = tmp_path / "folder"
    done = CliRunner().invoke(app, ["train-attribution", f"prepared={prepared}", f"corpora={corpora}", f"out={out}",
                                    "buckets=1024", "dim=8", "epochs=3"])  # fmt: skip
    assert done.exit_code == 0, done.output
    model = AttributionModel.load(out)
    assert model.buckets == 1024 and model.neighbours is not None and sorted(model.places) == sorted(PLACES)
    found = CliRunner().invoke(app, ["attribute", "--json", "--no-parallels", "--model", str(out),
                                     "καρανιδος ηρακλειδου μεριδος κωμης και χαιρειν"])  # fmt: skip
    assert found.exit_code == 0, found.output
    assert model.formulae is not None and HADRIAN in model.formulae.eras.tolist()  # the reign is learnt
    dated = model.predict("ετους γ αδριανου του κυριου οξυρυγχων σαραπιωνος θεωνος πολεως και χαιρειν", 60)
    assert dated.formula is not None and dated.formula.year == HADRIAN + 3 and dated.formula.regnal_year == 3
    scored = CliRunner().invoke(app, ["evaluate", "--task", "attribution", "--prepared", str(prepared), "--corpora",
                                      str(corpora), "--split", "validation", "--model", str(out),
                                      "--out", str(tmp_path / "report")])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["all"]["documents"] == 12 and metrics["all"]["top1"] >= 0.5  # 4 validation papyri a place
    assert "| all | 12 |" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("option", "code"),
    [("buckets=0", "E602"), ("fill=2", "E602"), ("what=1", "E602"), ("prepared=/nowhere", "E610")],
)
def test_the_command_refuses_a_bad_config_before_reading_anything(tiny_corpus, tmp_path, option, code):
    prepared, corpora = tiny_corpus
    done = CliRunner().invoke(app, ["train-attribution", f"prepared={prepared}", f"corpora={corpora}",
                                    f"out={tmp_path / 'x'}", option])  # fmt: skip
    assert done.exit_code == 2 and f"[{code}]" in done.output and "Traceback" not in done.output
    assert not (tmp_path / "x").exists()


def test_missing_labels_are_E611(tiny_corpus, tmp_path):
    prepared, _ = tiny_corpus
    with pytest.raises(Exception, match=r"\[E611\] train-attribution: no labels at corpora="):
        run_config(AttributionTrainConfig(prepared=str(prepared), corpora=str(tmp_path), out=str(tmp_path / "x")))
    with pytest.raises(SettingError, match=r"\[E602\] train-attribution"):
        AttributionTrainConfig.from_dict({"dim": 100000})


def test_central_interval_is_date_summary_s_interval_for_many_rows():
    rng = np.random.default_rng(1)
    edges = np.asarray(BIN_EDGES, float)
    probs = softmax(rng.normal(0, 3, (200, len(edges) - 1)), 1.0)
    probs[:20] = 0
    probs[np.arange(20), rng.integers(0, len(edges) - 1, 20)] = 1.0  # all in one bin
    low, high = central_interval(edges, probs)
    for row, a, b in zip(probs, low, high):
        _, lo, hi = date_summary(edges, row)
        assert abs(lo - a) <= 1 and abs(hi - b) <= 1  # the same year (a float a hair either side of one)
    assert (low == [date_summary(edges, row)[1] for row in probs]).mean() > 0.95


def test_temperatures_flatten_overconfident_logits_and_keep_sure_right_ones():
    """Place logits that are always sharp: right every time they get a small temperature,
    right half the time a large one (the NLL of a confident miss); dates likewise widen."""
    rng = np.random.default_rng(2)
    places, n = ["A", "B"], 200
    truth = rng.integers(0, 2, n)
    calib = [Example(f"d{i}", "ddb", "x", 100, Label(100, 100, places[t])) for i, t in enumerate(truth)]
    right = np.where(truth[:, None] == np.arange(2), 10.0, -10.0)
    guessed = rng.integers(0, 2, n)
    half = np.where(guessed[:, None] == np.arange(2), 10.0, -10.0)
    date = np.zeros((n, len(BIN_EDGES) - 1))
    date[:, 36] = 20.0  # sure of [100, 125): the truth, 100
    _, t_right = temperatures(date, right, calib, places)
    _, t_half = temperatures(date, half, calib, places)
    band = int(np.searchsorted(BANDS, 100, side="right")) - 1
    assert t_right[band] < 1 < 5 < t_half[band]
    wrong_date = np.zeros_like(date)
    wrong_date[:, 10] = 20.0  # sure of a bin centuries away: only a flat distribution covers
    t_sure, _ = temperatures(date, right, calib, places)
    t_wide, _ = temperatures(wrong_date, right, calib, places)
    assert t_wide[band] > t_sure[band]
