"""Cutting text shared with held-out documents out of an extra corpus before it is indexed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from apollo_restore.data.overlap import OverlapMask, window_hashes
from apollo_restore.data.textindex import TextIndex, build_text_index

HELD_OUT = [
    "μηνιν αειδε θεα πηληιαδεω αχιληος ουλομενην η μυρι αχαιοις αλγε εθηκε",  # 58 letters
    "ανδρα μοι εννεπε μουσα πολυτροπον",
]


@pytest.fixture(scope="module")
def mask(tmp_path_factory: pytest.TempPathFactory) -> OverlapMask:
    out = tmp_path_factory.mktemp("heldout") / "index"
    build_text_index(["v1", "v2"], ["literary"] * 2, HELD_OUT, out=out)
    return OverlapMask(TextIndex.open(out), min_run=20)


def test_overlap_window_hashes_match_one_window_at_a_time() -> None:
    codes = np.frombuffer(TextIndex.pattern("ετους δευτερου αυτοκρατορος"), np.uint8)
    hashes = window_hashes(codes, 5)
    assert len(hashes) == len(codes) - 4 and len(window_hashes(codes[:4], 5)) == 0
    assert [hashes[i] == window_hashes(codes[i : i + 5], 5)[0] for i in range(len(hashes))] == [True] * len(hashes)
    assert len(set(hashes.tolist())) == len({codes[i : i + 5].tobytes() for i in range(len(hashes))})


def test_overlap_cuts_out_a_quotation_and_keeps_the_rest(mask: OverlapMask) -> None:
    text = "ο ποιητης φησι· μηνιν αειδε θεα πηληιαδεω αχιληος ουλομενην· και ταυτα μεν ουτως"
    pieces, masked = mask.pieces(text)
    assert pieces == ["ο ποιητης φησι", "και ταυτα μεν ουτως"]
    assert masked == len("μηνιναειδεθεαπηληιαδεωαχιληοσουλομενην")
    for piece in pieces:  # nothing of min_run letters shared is left
        assert mask.shared(np.frombuffer(TextIndex.pattern(piece), np.uint8)).sum() == 0


def test_overlap_leaves_shorter_runs_and_unrelated_text(mask: OverlapMask) -> None:
    unrelated = "ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου"
    assert mask.pieces(unrelated) == ([unrelated], 0)
    nineteen = "λεγει γαρ μηνιν αειδε θεα πηλ ου γαρ"  # 19 letters shared: under min_run
    assert mask.pieces(nineteen) == ([nineteen], 0)
    assert mask.pieces("") == ([], 0)


def test_overlap_matches_across_spaces_punctuation_and_final_sigma(mask: OverlapMask, tmp_path: Path) -> None:
    spaced = "ανδρα· μοι εννεπε μουσα πολυτροπον ος μαλα πολλα"  # the run spaced differently
    pieces, masked = mask.pieces(spaced)
    assert masked == len("ανδραμοιεννεπεμουσαπολυτροπον") and pieces == ["ος μαλα πολλα"]
    with pytest.raises(ValueError, match="min_run"):
        OverlapMask(mask.index, min_run=0)
