"""A tiny attribution folder (random arrays, three places, a formula reader of one reign and one
dated name) for the doors' tests: fast, and the same on every machine; what it answers is junk
(but for a regnal year of Hadrian and the name), how it answers is what is tested."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest

from apollo_restore.attribution.features import FEATURES
from apollo_restore.attribution.folder import LABELS_FILE
from apollo_restore.attribution.model import quantise
from apollo_restore.attribution.neighbours import build
from apollo_restore.attribution.train import BANDS, BIN_EDGES, save
from apollo_restore.data.normalise import NORMALISER
from apollo_restore.data.textindex import corpus_fingerprint
from apollo_restore.schema.attribution import ATTRIBUTION_FORMAT

PLACES = ["Oxyrhynchos", "Karanis", "Theben"]
#: The documents of the text indexes the tests build (ids, sources): the corpus the tiny folder's
#: labels are made for (its fingerprint depends on these, not on the texts).
INDEXED = (["bgu.1.100", "p.erl.26"], ["ddb", "ddb"])


@pytest.fixture(scope="session")
def tiny_attribution(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("attribution")
    rng = np.random.default_rng(0)
    buckets, dim, bins = 2**10, 8, len(BIN_EDGES) - 1
    embedding, scale = quantise(rng.normal(0, 1, (buckets, dim)))  # int8 rows, as shipped
    arrays = {
        "embedding": embedding,
        "embedding.scale": scale,
        "date.weight": rng.normal(0, 1, (dim, bins)).astype(np.float32),
        "date.bias": np.zeros(bins, np.float32),
        "place.weight": rng.normal(0, 1, (dim, len(PLACES))).astype(np.float32),
        "place.bias": np.zeros(len(PLACES), np.float32),
    }
    texts = ["ετους ιβ αυρηλιου καρανιδος", "σαραπιωνος οξυρυγχων πολεως", "αυρηλιου καρανιδος ηρακλειδου"]
    arrays |= build(texts, [1, 0, 1], [37, 40, -1], [38, 40, -1])  # the nearest documents' index
    # a formula reader of one era (Hadrian's: year − 116) that a following ``αδριανου`` makes sure
    arrays |= {"formula.weight": np.asarray([[6.0, -6.0]], np.float16),
               "formula.bias": np.asarray([0.0, 3.0], np.float16)}  # fmt: skip
    config = {
        "format": ATTRIBUTION_FORMAT,
        "normaliser": NORMALISER,
        "features": FEATURES,
        "buckets": buckets,
        "dim": dim,
        "bin_edges": BIN_EDGES,
        "places": PLACES,
        "bands": list(BANDS),
        "temperature": {"date": [8.0, 4.0, 2.0, 1.0, 1.0], "place": [8.0, 4.0, 2.0, 1.0, 1.0]},
        "neighbours": {"date": 0.3, "place": 0.2},
        "formulae": {
            "features": [">αδριανου"],
            "eras": [116],
            "longest": [21],
            "prior": 0.0,
            "calibration": [0.0, 2.0, 0.0, 0.0],
            "names": ["κλεανδρου"],  # a dated name (AD 190), sure when read alone
            "name_years": [190],
            "name_calibration": [2.0, 0.0, 0.0, 0.0],
        },
        "documents": {"rows": 1, "corpus": corpus_fingerprint(*INDEXED)},
    }
    save(arrays, config, folder)
    rows = "source\tid\tlo\thi\tplace\nddb\tbgu.1.100\t140\t160\tKaranis\n"
    (folder / LABELS_FILE).write_bytes(lzma.compress(rows.encode()))
    return folder
