"""The attribution model's parts on hand-made inputs: features, labels, the date summary, the scores.

python -m pytest -q tests/attribution/test_parts.py
"""

from __future__ import annotations

import numpy as np
import pytest

from apollo_restore.attribution.features import encode, featurise
from apollo_restore.attribution.labels import _place, read_hgv
from apollo_restore.attribution.model import bag, date_summary, quantile, quantise
from apollo_restore.attribution.neighbours import Neighbours, build, mix
from apollo_restore.attribution.train import crop, date_target, mask_supplied
from apollo_restore.data.normalise import letter_count
from apollo_restore.evaluate.attribution import attribution_report, covered, deviation, ece

BUCKETS = 2**16


def test_features_are_stable_unit_length_and_skip_lost_letters():
    ids, w = featurise("ετους ιβ αυτοκρατορος καισαρος", BUCKETS)
    again, w2 = featurise("ετους ιβ αυτοκρατορος καισαρος", BUCKETS)
    assert np.array_equal(ids, again) and np.allclose(w, w2)
    assert np.isclose(np.linalg.norm(w), 1.0) and ids.min() >= 0 and ids.max() < BUCKETS
    # a lost letter removes the n-grams and the word it is in, never adds any
    damaged, _ = featurise("ετους ιβ αυτοκρ-τορος καισαρος", BUCKETS)
    assert set(damaged) < set(ids)
    assert featurise("---- ---", BUCKETS)[0].size == 0
    # final sigma is sigma; punctuation and Latin separate words
    assert np.array_equal(featurise("καισαρος", BUCKETS)[0], featurise("καισαροσ", BUCKETS)[0])
    assert np.array_equal(encode("και·του"), encode("και του"))
    assert letter_count("και---του") == 6


def test_hgv_rows_join_into_one_label(tmp_path):
    table = tmp_path / "hgv.tsv"
    table.write_text(
        "tm\tplace\tyear\trange\tdate_as_given\n"
        "1\tKaranis\t150\t49\t150±49\n"
        "1\tKaranis\t210\t0\t210±0\n"
        "2\t\t\t\t\n"
        "3\tTheben\t-112\t0\t-112±0\n",
        encoding="utf-8",
    )
    labels = read_hgv(table)
    assert (labels["1"].lo, labels["1"].hi, labels["1"].place) == (101, 210, "Karanis")
    assert not labels["2"].dated and labels["2"].place == ""
    assert (labels["3"].lo, labels["3"].hi) == (-112, -112)


@pytest.mark.parametrize(
    ("text", "region", "place"),
    [
        ("Sicilia Lipara Lipari 38.48333", "Sicily", "Lipara"),
        ("Sicilia Sicilia Sicily", "Sicily", ""),
        ("Gortyna", "Crete", "Gortyna"),
        ("Findspot", "Cyrenaica", ""),
        ("Hadrianic Baths", "Aphrodisias (Caria)", ""),
        ("Chersonesos?", "Northern Black Sea", "Chersonesos"),
    ],
)
def test_inscription_places(text, region, place):
    assert _place(text, region) == place


def test_date_summary_median_and_central_interval():
    edges = np.arange(-100, 101, 25, dtype=float)  # 8 bins
    probs = np.zeros(8)
    probs[4] = 1.0  # all in [0, 25)
    year, low, high = date_summary(edges, probs)
    assert (year, low, high) == (12, 2, 22)
    flat = np.full(8, 1 / 8)
    assert date_summary(edges, flat) == (1, -80, 80)  # no year 0: 1 BC is followed by AD 1
    assert quantile(edges, flat, 0.0) == -100 and quantile(edges, flat, 1.0) == 100


def test_date_summary_names_the_year_that_holds_each_quantile():
    """Single-year bins: a distribution all on AD 137 is AD 137 (its median, 137.5 as a quantile,
    lies inside the year 137; rounding said 138), and the interval is that year alone."""
    edges = np.arange(100, 201, dtype=float)
    probs = np.zeros(100)
    probs[37] = 1.0
    assert date_summary(edges, probs) == (137, 137, 137)
    probs[37], probs[38] = 0.6, 0.4  # the median in 137, the 90 % point in 138
    assert date_summary(edges, probs) == (137, 137, 138)


def test_date_target_spreads_over_the_true_range():
    from apollo_restore.attribution.labels import Label

    edges = np.arange(-100, 101, 25)
    target = date_target(Label(-30, 20, ""), edges)
    assert np.isclose(target.sum(), 1) and np.count_nonzero(target) == 3  # [-50,-25), [-25,0), [0,25)
    assert date_target(Label(None, None, "x"), edges) is None
    assert np.count_nonzero(date_target(Label(5000, 5000, ""), edges)) == 1  # clipped to the last bin


def test_supplements_become_lost_letters_and_crops_are_windows():
    assert mask_supplied("και του θεου", [4], [7]) == "και --- θεου"
    rng = np.random.default_rng(0)
    text = "αβγδε ζηθικ λμνξο πρστυ φχψω" * 4
    for _ in range(20):
        piece = crop(text, rng)
        assert 15 <= len(piece) <= len(text) and piece in text


def test_scores_deviation_coverage_and_ece():
    lo, hi = np.array([100, 100, 100]), np.array([150, 150, 150])
    assert deviation(np.array([120, 90, 175]), lo, hi).tolist() == [0, 10, 25]
    assert covered(np.array([140, 160, 0]), np.array([200, 200, 99]), lo, hi).tolist() == [True, False, False]
    assert ece(np.array([0.9, 0.9]), np.array([1.0, 1.0])) == pytest.approx(0.1)
    rows = [
        {"source": "ddb", "letters": 40, "lo": 100, "hi": 150, "place": "Karanis", "year": 120, "low": 80,
         "high": 200, "places": ["Karanis", "Theben"], "place_probs": [0.6, 0.3], "formula_year": 152},
        {"source": "ddb", "letters": 400, "lo": None, "hi": None, "place": "Theben", "year": 0, "low": -50,
         "high": 50, "places": ["Karanis", "Theben"], "place_probs": [0.7, 0.2]},
    ]  # fmt: skip
    report = attribution_report(rows)
    assert report["all"]["dated"] == 1 and report["all"]["date_median"] == 0 and report["all"]["coverage80"] == 1
    assert report["all"]["top1"] == 0.5 and report["all"]["top3"] == 1.0
    # the one dated text's formula said 152: read, and two years after its range, so not right
    assert report["all"]["formula_read"] == 1.0 and report["all"]["formula_right"] == 0.0
    by_length = report["by_length"]
    assert by_length["0-49"]["documents"] == 1
    assert by_length["200-499"]["documents"] + by_length["500-999"]["documents"] == 1
    # the nome and district scores where the rows carry them; the weighted scores need every band ≥ 50
    rows[1] |= {"nome_right": True, "district_right": True, "district_prob": 0.9, "letters": 300}
    more = [dict(rows[1], letters=n, nome_right=False) for n in (100, 700, 1500)]
    report = attribution_report(rows + more)
    assert report["by_length"]["200-499"]["nome1"] == 1.0 and report["by_length"]["50-199"]["nome1"] == 0.0
    assert report["weighted"]["ddb"]["nome1"] == pytest.approx(0.28)  # the 200-499 band's weight
    assert report["weighted"]["ddb"]["district1"] == pytest.approx(1.0)


def test_int8_embedding_keeps_the_bag_within_a_percent():
    rng = np.random.default_rng(1)
    embedding = rng.normal(0, 0.05, (64, 16)).astype(np.float32)
    rows, scale = quantise(embedding)
    assert rows.dtype == np.int8 and scale.shape == (64,)
    ids, weights = np.asarray([3, 7, 40]), np.asarray([0.6, 0.6, 0.53], np.float32)
    exact = weights @ embedding[ids]
    assert np.abs(bag(rows, scale, ids, weights) - exact).max() < 0.01 * np.abs(exact).max() + 1e-3


def test_neighbours_vote_for_the_documents_sharing_rare_words():
    texts = ["ετους ιβ αυρηλιου καρανιδος", "ετους ιβ σαραπιωνος οξυρυγχων", "ετους γ αυρηλιου καρανιδος ηρακλειδου",
             "ετους δ οξυρυγχων"]  # fmt: skip
    near = Neighbours(build(texts, [0, 1, 0, 1], [3, 4, -1, 2], [3, 5, -1, 2]))
    docs, sims = near.nearest("αυρηλιου καρανιδος", 3)
    assert set(docs.tolist()) == {0, 2} and (sims > 0).all()
    date, place = near.votes("αυρηλιου καρανιδος", bins=8, places=2)
    assert place.tolist() == [1.0, 0.0]  # both neighbours are of place 0
    assert date.argmax() == 3 and np.isclose(date.sum(), 1)  # the undated neighbour gives no date vote
    assert np.allclose(mix(np.asarray([0.5, 0.5]), place, 0.2), [0.6, 0.4])
    # a text sharing no indexed word gets no votes, and mixing leaves the model's answer
    date, place = near.votes("ξξξ λλλ", bins=8, places=2)
    assert not place.any() and np.allclose(mix(np.asarray([0.3, 0.7]), place, 0.2), [0.3, 0.7])


def test_packaged_model_fits_its_budget_and_answers():
    from apollo_restore.attribution.model import AttributionModel, default_folder

    assert sum(p.stat().st_size for p in default_folder().iterdir()) <= 30e6  # issue 54: ≤ 30 MB
    model = AttributionModel.load()
    assert model.neighbours is not None and model.embedding.dtype == np.int8
    assert len(model.districts) == len(model.places) and "Arsinoites" in model.districts
    found = model.predict("ετους ιβ αυτοκρατορος καισαρος τραιανου αδριανου σεβαστου φαωφι", 50)
    assert found.low <= found.year <= found.high and np.isclose(sum(found.date.probs), 1, atol=1e-4)
    assert 0 < found.places[0].prob <= 1
