"""Parallels that are columns of numerals are left out, and documents are named with their corpus
where the id alone does not say it (issue 36, item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from apollo_restore.data.normalise import letter_count
from apollo_restore.data.orthography import default_forms
from apollo_restore.data.table import DOCUMENTS_FILE, write_documents
from apollo_restore.retrieve.links import edition_label
from apollo_restore.retrieve.noise import is_noise
from apollo_restore.retrieve.parallels import ParallelIndex, build_index
from apollo_restore.retrieve.provenance import provenance

ACCOUNT = "λογος σιτου εν θησαυρωι ζ φκ· θ υπ α πυρου αρταβαι"
PROSE = "λογος σιτου εν θησαυρωι καλου και καθαρου πυρου αρταβαι"


@pytest.mark.parametrize(
    "reading,noise",
    [
        ("ζ φκ· θ ὑπ α", True),  # the example
        ("α β γ", True),
        ("ιβ ιγ ιδ", True),  # numerals are in the editions, but never with an accent or breathing
        ("ιβ", False),  # one numeral may be the reading (a year, a sum)
        ("κβ ιγ", False),  # two tokens: too few to call
        ("ὁ δὲ", False),
        ("καὶ ὁ ἡ", False),  # one-letter words
        ("ἐν τῷ αὐτῷ", False),
        ("ὑπὲρ τοῦ α ἔτους", False),
    ],
)
def test_noise_is_mostly_numerals_and_stray_letters(reading, noise):
    assert is_noise(reading, default_forms()) is noise


@pytest.mark.parametrize(
    "doc,source,label",
    [
        ("3.26", "inscription", "IOSPE 3.26"),
        ("akko0001", "inscription", "IIP akko0001"),
        ("C.123", "inscription", "IRCyr C.123"),
        ("ISic003024", "inscription", "ISic003024"),  # the id names its corpus
        ("bgu.1.100", "ddb", "bgu.1.100"),
        ("3.26", "ddb", "3.26"),  # only inscription ids are read this way
    ],
)
def test_documents_are_named_with_their_corpus(doc, source, label):
    assert edition_label(doc, source) == label


def _row(doc_id: str, source: str, text: str) -> dict:
    return {
        "id": doc_id, "source": source, "split": "train", "group": doc_id, "tm": None, "date": None,
        "text": text, "text_uncertain_excluded": text, "supplied_start": [], "supplied_end": [],
        "letters": letter_count(text), "lacunae": 0,
    }  # fmt: skip


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ParallelIndex:
    prepared, out = tmp_path_factory.mktemp("prepared"), tmp_path_factory.mktemp("index")
    rows = [_row(f"p.acc.{i}", "ddb", ACCOUNT) for i in range(4)] + [_row("3.26", "inscription", PROSE)]
    write_documents(rows, Path(prepared) / DOCUMENTS_FILE)
    build_index(prepared, out)
    return ParallelIndex.open(out)


def test_gap_parallels_leave_out_numeral_columns(index: ParallelIndex):
    found = index.gap_parallels("λογος σιτου εν θησαυρωι ", " πυρου αρταβαι")
    assert [g.between for g in found.groups] == ["καλου και καθαρου"]  # the account's ×4 numerals dropped
    assert found.groups[0].labels == ["IOSPE 3.26"] and found.groups[0].docs == ["3.26"]


def test_provenance_names_the_corpus(index: ParallelIndex):
    found = provenance(PROSE, index, min_run=20)
    assert [d.label for d in found.documents if d.doc == "3.26"] == ["IOSPE 3.26"]
