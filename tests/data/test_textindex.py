"""The text index: packed text, first-use build into the cache, held-out documents kept out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from apollo_restore.data.textindex import (
    PACKED_TEXT,
    TextIndex,
    default_index_path,
    ensure_index,
    expand_ranges,
    pack_train_text,
    read_packed,
)  # fmt: skip

DOCS = {
    "ddb:a": ("train", "ετους δευτερου αυτοκρατορος καισαρος τραιανου σεβαστου"),
    "ddb:b": ("train", "του κυριου αυτοκρατορος καισαρος αδριανου σεβαστου"),
    "ddb:v": ("validation", "αυτοκρατορος καισαρος νερουα σεβαστου"),
    "ddb:t": ("test", "αυτοκρατορος καισαρος ουεσπασιανου σεβαστου"),
}


def _pack(path: Path, splits: tuple[str, ...] = ("train",)) -> Path:
    rows = [(i, s, t) for i, (s, t) in DOCS.items() if s in splits]
    pack_train_text([r[0] for r in rows], ["ddb"] * len(rows), [r[2] for r in rows], [r[1] for r in rows], path)
    return path


def test_textindex_pack_refuses_held_out_documents(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="E401"):
        _pack(tmp_path / "t.xz", splits=("train", "validation"))
    with pytest.raises(FileNotFoundError, match="E402"):
        read_packed(tmp_path / "none.xz")


def test_textindex_built_on_first_use_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APOLLO_RESTORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APOLLO_RESTORE_INDEX", raising=False)
    packed = _pack(tmp_path / "train-text.tsv.xz")
    said: list[str] = []
    path = ensure_index(packed, progress=said.append)
    assert path.parent == tmp_path / "cache" and path == default_index_path(packed)
    assert len(said) == 2 and "first use" in said[0]
    assert ensure_index(packed, progress=said.append) == path and len(said) == 2  # built once
    assert not any(p.name.startswith(".") for p in path.parent.iterdir())  # no half-written folder left
    index = TextIndex.open(path)
    assert index.doc_ids == ["ddb:a", "ddb:b"] and set(index.splits) == {"train"}
    for held_out in ("νερουα", "ουεσπασιανου"):
        assert index.count(TextIndex.pattern(held_out)) == 0
    assert index.count(TextIndex.pattern("καισαρος τραιανου")) == 1


@pytest.mark.slow  # unpacks the whole packaged text (~7 s): pytest -m slow
def test_textindex_packaged_text_is_train_only() -> None:
    prepared = Path(__file__).resolve().parents[2].parent / "main" / "data" / "prepared" / "documents.parquet"
    if not prepared.exists() or not PACKED_TEXT.exists():
        pytest.skip("the prepared corpus is not here")
    rows = pq.read_table(prepared, columns=["id", "source", "split"]).to_pylist()
    held_out = {(r["source"], r["id"]) for r in rows if r["split"] != "train"}
    ids, sources, _ = read_packed(PACKED_TEXT)
    assert held_out and not held_out & set(zip(sources, ids))


def test_expand_ranges_lists_every_index_of_each_range_in_order():
    owner, index = expand_ranges(np.array([5, 0, 9, 2]), np.array([3, 0, 1, 2]))
    assert owner.tolist() == [0, 0, 0, 2, 3, 3] and index.tolist() == [5, 6, 7, 9, 2, 3]
