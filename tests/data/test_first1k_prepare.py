"""First1KGreek-style plain running text in ``prepare``: read as literary, split by work, and
every run it shares with validation/test text cut out of its training documents."""

from __future__ import annotations

import io
import random
import tarfile

import pytest

from apollo_restore.data.normalise import letter_count, normalise
from apollo_restore.data.overlap import MIN_RUN
from apollo_restore.data.prepare import CorpusSpec, prepare
from apollo_restore.data.readers.plaintext import parse_plain, work_of
from apollo_restore.data.splits import split_of
from apollo_restore.data.table import load_documents

LETTERS = "αβγδεζηθικλμνξοπρστυφχψω"
#: work ids whose group (``literary:work:<work>``) falls into each split
TRAIN, VALIDATION, TEST = "tlg9999.tlg002", "tlg9999.tlg000", "tlg9999.tlg018"


def greek(seed: int, words: int) -> str:
    """Random Greek words (3–9 letters), reproducible."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 9))) for _ in range(words))


def letters_only(text: str) -> str:
    return "".join(ch for ch in text if ch in LETTERS)


def test_work_ids_fall_where_the_test_needs_them():
    assert [split_of(f"literary:work:{w}") for w in (TRAIN, VALIDATION, TEST)] == ["train", "validation", "test"]


def test_parse_plain_reads_lines_and_groups_editions_by_work():
    doc = parse_plain(
        "Ἐν ἀρχῇ ἦν\n\n ὁ λόγος \n".encode(), "first1k-grc.tar.xz:first1k-grc/tlg0031.tlg004.opp-grc1.txt"
    )
    assert doc.id == "tlg0031.tlg004.opp-grc1" and doc.group == "literary:work:tlg0031.tlg004"
    assert work_of("tlg0031.tlg004.1st1K-grc2") == "tlg0031.tlg004"
    with pytest.raises(Exception, match="not UTF-8"):
        parse_plain(b"\xff\xfe", "x.txt")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A First1K-like archive: a validation work, a test work, and a training work that quotes
    70 letters of each (and an edition of the validation work under another id)."""
    heldout_quote, test_quote = greek(1, 400), greek(2, 400)
    quoted_v = heldout_quote[200:300]  # ≥ 70 letters of the validation work
    quoted_t = test_quote[100:200]
    works = {
        f"{VALIDATION}.1st1K-grc1": heldout_quote,
        f"{TEST}.1st1K-grc1": test_quote,
        f"{TRAIN}.1st1K-grc1": greek(3, 300)
        + " "
        + quoted_v
        + " "
        + greek(4, 300)
        + "\n"
        + quoted_t
        + " "
        + greek(5, 50),
    }
    root = tmp_path_factory.mktemp("first1k")
    archive = root / "first1k-grc.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for work, text in works.items():
            data = text.encode()
            info = tarfile.TarInfo(f"first1k-grc/{work}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        manifest = b'{"id": "x"}\n'
        info = tarfile.TarInfo("first1k-grc/manifest.jsonl")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    report = prepare([CorpusSpec("literary", archive)], root / "out", progress=False, workers=1)
    return report, load_documents(root / "out"), works


def test_first1k_works_are_literary_documents_split_by_work(prepared):
    report, table, works = prepared
    rows = table.to_pylist()
    splits = {r["id"].split("#")[0]: r["split"] for r in rows}
    assert splits == {
        f"{TRAIN}.1st1K-grc1": "train",
        f"{VALIDATION}.1st1K-grc1": "validation",
        f"{TEST}.1st1K-grc1": "test",
    }
    assert {r["source"] for r in rows} == {"literary"}
    held = {r["id"]: r["text"] for r in rows if r["split"] != "train"}
    assert held[f"{VALIDATION}.1st1K-grc1"] == normalise(works[f"{VALIDATION}.1st1K-grc1"])  # held-out works whole


def test_training_pieces_share_no_heldout_run(prepared):
    report, table, works = prepared
    rows = table.to_pylist()
    train = [r for r in rows if r["split"] == "train"]
    assert [r["id"] for r in train] == [f"{TRAIN}.1st1K-grc1#{k}" for k in range(len(train))] and len(train) >= 2
    heldout = " ".join(letters_only(r["text"]) for r in rows if r["split"] != "train")
    windows = {heldout[i : i + MIN_RUN] for i in range(len(heldout) - MIN_RUN + 1)}
    for row in train:
        text = letters_only(row["text"])
        assert not any(text[i : i + MIN_RUN] in windows for i in range(len(text) - MIN_RUN + 1)), row["id"]
        assert row["letters"] == letter_count(row["text"])
    original = letter_count(normalise(works[f"{TRAIN}.1st1K-grc1"]))
    cut = report.masked[f"{TRAIN}.1st1K-grc1"]
    assert cut >= 2 * 70 and sum(r["letters"] for r in train) == original - cut
