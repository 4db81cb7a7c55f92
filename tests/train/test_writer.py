"""The one model-folder writer: atomic replacement, the FIM layout recorded, loadable."""

from __future__ import annotations

import json

import pytest

from apollo_restore.fim.layout import JOIN_V2, SPM_V1
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.checkpoint import load_model
from apollo_restore.model.folder import META_FILE, layout_of
from apollo_restore.train.writer import save_model_folder, write_model_folder

TOK = CharTokenizer()


def test_writer_records_layout_and_normaliser_and_loads(tmp_path):
    model = build_model("tiny", TOK, seed=0)
    folder = save_model_folder(model, TOK.save, tmp_path / "best", JOIN_V2, {"size": "tiny"})
    meta = json.loads((folder / META_FILE).read_text())
    assert meta["fim_format"] == JOIN_V2.name and meta["normaliser"] and meta["size"] == "tiny"
    loaded, _, meta = load_model(folder)
    assert layout_of(meta) == JOIN_V2
    assert sum(p.numel() for p in loaded.parameters()) == sum(p.numel() for p in model.parameters())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]  # no .tmp or .old left behind


def test_writer_replaces_a_folder_whole_and_keeps_it_when_writing_fails(tmp_path):
    folder = tmp_path / "model"
    write_model_folder(folder, SPM_V1, {"round": 1}, lambda tmp: (tmp / "old-only.txt").write_text("x"))
    (tmp_path / "model.tmp").mkdir()  # a torn write of an earlier, killed run
    write_model_folder(folder, SPM_V1, {"round": 2}, lambda tmp: (tmp / "weights.txt").write_text("y"))
    assert sorted(p.name for p in folder.iterdir()) == [META_FILE, "weights.txt"]
    assert json.loads((folder / META_FILE).read_text())["round"] == 2

    def failing(tmp):
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_model_folder(folder, SPM_V1, {"round": 3}, failing)
    assert json.loads((folder / META_FILE).read_text())["round"] == 2


def test_writer_refuses_meta_naming_another_layout(tmp_path):
    with pytest.raises(ValueError, match="fim_format"):
        write_model_folder(tmp_path / "m", JOIN_V2, {"fim_format": SPM_V1.name}, lambda tmp: None)
    assert not (tmp_path / "m").exists()
