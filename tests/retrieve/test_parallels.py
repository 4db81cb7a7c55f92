"""The parallel-passage index: gap parallels, backoff, hints, phrases, honesty."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from apollo_restore.data.table import load_documents
from apollo_restore.data.textindex import suffix_array
from apollo_restore.hint import Hint
from apollo_restore.restoration.request import validate
from apollo_restore.retrieve.gaps import text_parallels
from apollo_restore.retrieve.parallels import ParallelIndex, build_index
from apollo_restore.schema.restoration import RestoreRequest
from tests.retrieve.conftest import HELD_OUT, TRAIN


def test_index_suffix_array_sorted() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(1, 4, size=2000).astype(np.uint8)
    sa = suffix_array(codes)
    text = codes.tobytes()
    keys = [text[p:] for p in sa]
    assert keys == sorted(keys) and sorted(sa.tolist()) == list(range(2000))


def test_index_gap_parallels_between_and_counts(index: ParallelIndex) -> None:
    found = index.gap_parallels("του κυριου αυτοκρατορος καισαρος ", " σεβαστου")
    assert [(g.between, g.count) for g in found.groups] == [("τραιανου", 3), ("αδριανου", 1)]
    assert found.groups[0].docs == ["ddb:a", "ddb:b", "ddb:d"] and found.groups[0].n_docs == 3
    snippet = found.groups[0].examples[0]
    assert snippet.text[snippet.start : snippet.end] == "τραιανου" and snippet.doc == "ddb:a"
    assert found.total == 4


def test_index_gap_parallels_skip_lost_letters(index: ParallelIndex) -> None:
    found = index.gap_parallels("αυτοκρατορος καισαρος ", " σεβαστου")
    assert all("-" not in g.between for g in found.groups)  # ddb:e reads ---ανου


def test_index_gap_parallels_backoff(index: ParallelIndex) -> None:
    # 16 letters of left context never occur; the 8-letter anchors "καισαρος"/"σεβαστου" do
    found = index.gap_parallels("ο στρατηγος του μεγιστου καισαρος ", " σεβαστου ευχαριστω")
    assert found.anchor == 8 and found.left == "καισαροσ" and found.right == "σεβαστου"
    assert found.groups[0].between == "τραιανου"
    assert index.gap_parallels("ξξξξξξξξξ", "ψψψψψψψψψ").groups == []


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (Hint.exact(8), ["τραιανου", "αδριανου"]),
        (Hint.exact(2), []),
        (Hint.span(3, 5), []),
        (Hint.span(7, 9), ["τραιανου", "αδριανου"]),
    ],
)
def test_index_gap_parallels_hint(index: ParallelIndex, hint, expected) -> None:
    found = index.gap_parallels("αυτοκρατορος καισαρος ", " σεβαστου", hint=hint)
    assert [g.between for g in found.groups] == expected


def test_index_gap_parallels_letters_not_spaces(index: ParallelIndex) -> None:
    # "καισαρος τραιανου" and "καισαρος αδριανου" have 16 letters and one space
    found = index.gap_parallels("αυτοκρατορος ", " σεβαστου", hint=Hint.exact(16))
    assert [g.between for g in found.groups] == ["καισαρος τραιανου", "καισαρος αδριανου"]
    assert index.gap_parallels("αυτοκρατορος ", " σεβαστου", hint=Hint.exact(16), max_between=10).groups == []


def test_index_gap_parallels_stop_at_markers(index: ParallelIndex) -> None:
    # context beyond a lost letter is not part of the anchor
    found = index.gap_parallels("--- αυτοκρατορος καισαρος ", " σεβαστου … μηνος")
    assert found.left == "αυτοκρατοροσκαισαροσ"[-16:] and found.right == "σεβαστου"


def test_index_phrase_parallels(index: ParallelIndex) -> None:
    found = index.phrase_parallels("Καίσαρος Τραιανοῦ")
    assert (found.phrase, found.count, found.n_docs, found.by_source) == ("καισαρος τραιανου", 3, 3, {"ddb": 3})
    hit = found.hits[0]
    assert hit.doc == "ddb:a" and hit.text[hit.start : hit.end] == "καισαρος τραιανου"
    assert index.phrase_parallels("σεβαστου χαιρειν").count == 1  # across the ·
    with pytest.raises(ValueError):
        index.phrase_parallels("κα")


def test_index_leiden_gap(index: ParallelIndex) -> None:
    (gap,) = text_parallels(index, validate(RestoreRequest("αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ")))
    assert gap.gap == 1 and gap.hint == Hint.exact(8) and gap.groups[0].between == "τραιανου"
    assert gap.groups[0].display == "Τραιανοῦ"  # edition form, from the package's table
    assert gap.groups[0].urls == ["https://papyri.info/search?STRING=ddb%3Aa", *gap.groups[0].urls[1:]]
    assert len(gap.groups[0].urls) == len(gap.groups[0].docs)


def test_text_parallels_number_gaps_from_1_and_use_hints_and_pins(index: ParallelIndex) -> None:
    text = "αὐτοκράτορος Καίσαρος [.8] Σεβαστοῦ [- - -] αὐτοκράτορος [.8] Τραιανοῦ Σεβαστοῦ"
    request = validate(RestoreRequest(text, hints={3: 8}, pins={1: "τραιανου"}))
    third, first = text_parallels(index, request, [3, 1])
    assert (third.gap, first.gap) == (3, 1) and third.hint == Hint.exact(8)
    assert [g.between for g in third.groups] == ["καισαρος"]  # αυτοκρατορος [καισαρος] τραιανου
    (second,) = text_parallels(index, request, [2])
    assert second.prefix.endswith("αυτοκρατορος καισαρος τραιανου σεβαστου ")  # gap 1 holds its pin


def test_index_gap_parallels_one_sided_at_the_text_start(index: ParallelIndex) -> None:
    """A gap with no left context is anchored by its right one; a gap at a word start takes
    whole words only (the 7 letters ραιανου are no word)."""
    found = index.gap_parallels("", " σεβαστου μηνος θωθ", Hint.exact(8))
    assert (found.left, found.right) == ("", "σεβαστουμηνοσθωθ")
    assert [(g.between, g.count, g.docs) for g in found.groups] == [("τραιανου", 1, ["ddb:a"])]
    assert index.gap_parallels("", " σεβαστου μηνος θωθ", Hint.exact(7)).groups == []
    assert index.gap_parallels("", " σεβαστου μηνος θωθ").groups == []  # no hint: no letter count to take


def test_index_gap_parallels_one_sided_when_the_other_context_is_misspelt(index: ParallelIndex) -> None:
    found = index.gap_parallels("ετους δευτερου αυτοκρατορος ", " σεβαστυ μηνος", Hint.span(6, 9))
    assert found.right == "" and found.left and [g.between for g in found.groups] == ["καισαρος"]


def test_index_holds_train_only(index: ParallelIndex, prepared: Path) -> None:
    assert set(index.doc_ids) == set(TRAIN) and set(index.splits) == {"train"}
    assert index.meta["splits"] == ["train"] and index.meta["normaliser"] == "apollo_restore norm.v1"
    assert not set(HELD_OUT) & set(index.doc_ids)
    for reading in ("νερουα", "ουεσπασιανου"):  # found only in the validation and test documents
        assert index.phrase_parallels(reading).count == 0
        assert all(g.between != reading for g in index.gap_parallels("αυτοκρατορος καισαρος ", " σεβαστου").groups)
    train = set(load_documents(prepared, split="train").column("id").to_pylist())
    assert set(index.doc_ids) == train


def test_index_refuses_other_normaliser(index: ParallelIndex, tmp_path: Path) -> None:
    meta = dict(index.meta, normaliser="other.v9")
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="E405"):
        ParallelIndex.open(tmp_path)
    with pytest.raises(FileNotFoundError):
        ParallelIndex.open(tmp_path / "nothing")


def test_index_build_skips_held_out(prepared: Path, tmp_path: Path) -> None:
    report = build_index(prepared, tmp_path / "ix", sources=["ddb"])
    assert report.documents == sum(1 for d in TRAIN if d.startswith("ddb:"))
