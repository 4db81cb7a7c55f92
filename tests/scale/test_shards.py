"""Streaming Parquet shards: export, per-rank/per-worker slices, mid-epoch resume."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from apollo_restore.scale.shards import (
    MANIFEST_FILE,
    SHARD_FORMAT,
    ShardLoader,
    ShardReader,
    export_shards,
    read_manifest,
)

ROWS, BLOCK = 41, 128


@pytest.fixture(scope="module")
def shards(prepared, tmp_path_factory):
    out = tmp_path_factory.mktemp("shards")
    export_shards(
        prepared, out, "char", rows=ROWS, block_size=BLOCK, rows_per_shard=10, row_group_size=4, seed=7, progress=False
    )
    return out


def test_shards_manifest_names_everything(shards):
    manifest = read_manifest(shards)
    assert manifest["format"] == SHARD_FORMAT and manifest["rows"] == ROWS and manifest["block_size"] == BLOCK
    for key in ("fim_format", "normaliser", "gap_sampler", "seed", "tokenizer", "weights", "fim"):
        assert key in manifest
    assert manifest["tokenizer"]["source"] == "char" and manifest["tokenizer"]["middle_id"] == 6
    assert (shards / "tokenizer" / "tokenizer.json").exists()
    assert [s["rows"] for s in manifest["shards"]] == [10, 10, 10, 10, 1]
    table = pq.read_table(shards / "shard-00000.parquet")
    assert table.num_rows == 10 and len(table.column("input_ids")[0]) == BLOCK


def test_shards_export_is_deterministic(prepared, shards, tmp_path):
    export_shards(prepared, tmp_path, "char", rows=12, block_size=BLOCK, rows_per_shard=10, seed=7, progress=False)
    again = pq.read_table(tmp_path / "shard-00001.parquet").column("input_ids").to_pylist()
    first = pq.read_table(shards / "shard-00001.parquet").column("input_ids").to_pylist()[:2]
    assert again == first


def test_shards_reject_other_format(shards, tmp_path):
    manifest = json.loads((shards / MANIFEST_FILE).read_text())
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest, "fim_format": "other fim.v9"}))
    with pytest.raises(ValueError, match="fim_format"):
        read_manifest(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_manifest(tmp_path / "nothing")


def test_shards_slices_disjoint_and_complete_2_ranks_2_workers(shards):
    seen = []
    for rank in range(2):
        reader = ShardReader(shards, rank, 2, batch_size=3)
        per_worker = [[reader.global_row(i) for i in reader.local_rows(w, 2)] for w in range(2)]
        assert per_worker[0] and per_worker[1]
        seen += per_worker[0] + per_worker[1]
        # a real DataLoader with 2 workers hands the rank's rows back in order
        rows = [
            int(r) for batch in torch.utils.data.DataLoader(reader, batch_size=3, num_workers=2) for r in batch["row"]
        ]
        assert rows == list(range(rank * 20, rank * 20 + 20))
    assert len(seen) == len(set(seen)) == 40  # 41 rows, 2 ranks: the odd row is left out
    assert set(seen) == set(range(40))


def test_shards_rows_match_parquet(shards):
    reader = ShardReader(shards, 1, 2, batch_size=2)
    table = pq.read_table(shards / "shard-00002.parquet")
    item = next(iter(reader))  # global row 20 = first row of shard 2
    assert item["row"] == 20
    assert item["input_ids"].tolist() == table.column("input_ids")[0].as_py()
    assert item["labels"].tolist() == table.column("labels")[0].as_py()


def test_shards_resume_mid_epoch_yields_the_rest(shards):
    reader = ShardReader(shards, 0, 2, batch_size=3)
    loader = ShardLoader(reader, num_workers=2)
    everything = torch.cat([ids for ids, _ in loader])
    assert everything.shape == (20, BLOCK) and loader.state_dict() == {"rows": 20}

    first = ShardLoader(ShardReader(shards, 0, 2, batch_size=3), num_workers=2)
    it = iter(first)
    consumed = [next(it)[0] for _ in range(2)]
    state = first.state_dict()
    assert state == {"rows": 6}
    resumed = ShardLoader(ShardReader(shards, 0, 2, batch_size=3), num_workers=2)
    resumed.load_state_dict(state)
    rest = torch.cat([ids for ids, _ in resumed])
    assert torch.equal(torch.cat(consumed + [rest]), everything)
    assert resumed.state_dict() == {"rows": 20}


def test_shards_loop_over_epochs(shards):
    reader = ShardReader(shards, 0, 1, batch_size=4, epochs=None, start_row=39)
    rows = [item["row"] for _, item in zip(range(3), reader)]
    assert rows == [39, 40, 0]  # 41 rows, 1 rank: wraps around after row 40
    assert len(ShardReader(shards, 0, 1, epochs=2, start_row=5)) == 77
    assert np.all(reader.fetch(3)[0] == ShardReader(shards).fetch(3)[0])
