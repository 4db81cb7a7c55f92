"""A toy prepared corpus with all three splits, and its index."""

from __future__ import annotations

from pathlib import Path

import pytest

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.table import DOCUMENTS_FILE, write_documents
from apollo_restore.retrieve.parallels import ParallelIndex, build_index

TRAIN = {
    "ddb:a": "ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου μηνος θωθ",
    "ddb:b": "ετους τριτου αυτοκρατορος καισαρος τραιανου σεβαστου· χαιρειν",
    "ddb:c": "ετους δ αυτοκρατορος καισαρος αδριανου σεβαστου μηνος",
    "ddb:d": "του κυριου αυτοκρατορος καισαρος τραιανου σεβαστου και",
    "ddb:e": "αυτοκρατορος καισαρος ---ανου σεβαστου",
    "literary:f": "ανδρα μοι εννεπε μουσα πολυτροπον ος μαλα πολλα πλαγχθη",
    "inscription:g": "ο δημος ετιμησεν αυτοκρατορα καισαρα θεου υιον σεβαστον",
}
HELD_OUT = {
    "ddb:v": ("validation", "αυτοκρατορος καισαρος νερουα σεβαστου μηνος"),
    "ddb:t": ("test", "αυτοκρατορος καισαρος ουεσπασιανου σεβαστου μηνος"),
}


def _row(doc_id: str, split: str, text: str) -> dict:
    return {
        "id": doc_id, "source": doc_id.split(":")[0], "split": split, "group": doc_id, "tm": None,
        "date": None, "text": text, "text_uncertain_excluded": text, "supplied_start": [],
        "supplied_end": [], "letters": letter_count(text), "lacunae": text.count("-"),
    }  # fmt: skip


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("prepared")
    rows = [_row(i, "train", t) for i, t in TRAIN.items()] + [_row(i, s, t) for i, (s, t) in HELD_OUT.items()]
    write_documents(rows, folder / DOCUMENTS_FILE)
    return folder


@pytest.fixture(scope="session")
def index(prepared: Path, tmp_path_factory: pytest.TempPathFactory) -> ParallelIndex:
    out = tmp_path_factory.mktemp("index")
    build_index(prepared, out)
    return ParallelIndex.open(out)
