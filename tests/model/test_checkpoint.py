"""Model folders and training checkpoints: round trips, refusals, crash recovery."""

from __future__ import annotations

import json

import pytest
import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_config, build_model
from apollo_restore.model.checkpoint import (
    META_FILE,
    load_model,
    load_optimizer_state,
    recover_checkpoint,
    save_checkpoint,
    save_model,
)

TOK = CharTokenizer()


@pytest.fixture(scope="module")
def model() -> torch.nn.Module:
    return build_model("tiny", TOK, seed=3).eval()


def _logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([TOK.encode("κομων μουσαιου")])).logits


def test_model_folder_round_trip(model, tmp_path):
    save_model(model, TOK, tmp_path / "m", {"size": "tiny"})
    loaded, tok, meta = load_model(tmp_path / "m")
    assert torch.equal(_logits(loaded), _logits(model))
    assert tok.encode("αβγ") == TOK.encode("αβγ") and meta["size"] == "tiny"
    assert meta["normaliser"] == "apollo_restore norm.v1" and not loaded.training


def test_model_folder_refuses_other_normaliser_and_missing_folder(model, tmp_path):
    save_model(model, TOK, tmp_path / "m", {})
    meta = json.loads((tmp_path / "m" / META_FILE).read_text())
    (tmp_path / "m" / META_FILE).write_text(json.dumps({**meta, "normaliser": "other.v9"}))
    with pytest.raises(ValueError, match="normaliser 'other.v9'"):
        load_model(tmp_path / "m")
    with pytest.raises(FileNotFoundError, match=r"\[E514\] no model folder at .*config.json is missing"):
        load_model(tmp_path / "nothing")


def test_checkpoint_optimizer_round_trip_and_recovery(tmp_path):
    model = build_model("tiny", TOK, seed=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.tensor([TOK.encode("κομων")])).logits.sum().backward()
    optimizer.step()
    folder = tmp_path / "checkpoint"
    save_checkpoint(folder, model, TOK, optimizer, {"step": 1}, {})
    fresh = torch.optim.AdamW(model.parameters(), lr=1e-3)
    assert load_optimizer_state(folder, fresh)["step"] == 1
    for p in model.parameters():
        assert torch.equal(fresh.state[p]["exp_avg"], optimizer.state[p]["exp_avg"])
    # a kill between the two renames of the next save leaves only the .old copy
    folder.rename(folder.with_name("checkpoint.old"))
    assert recover_checkpoint(folder) == folder.with_name("checkpoint.old")
    assert recover_checkpoint(tmp_path / "none") is None


def test_unknown_size_is_refused():
    with pytest.raises(ValueError, match="unknown model size 'huge'"):
        build_config("huge", TOK)
