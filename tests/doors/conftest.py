"""Fixtures of the predict doors (``test_predict_doors``, ``test_job_doors``): stand-in restorers
the CLI's model loads give in turn, and a stand-in model folder whose files are fingerprinted."""

from __future__ import annotations

from pathlib import Path

import pytest

from apollo_restore.restoration import load


@pytest.fixture
def restorers(monkeypatch):
    """The restorers the CLI's model loads give, in turn (set ``.queue``)."""
    state = type("Queue", (), {"queue": []})()
    monkeypatch.setattr(load, "load_restorer", lambda *args, **kwargs: state.queue.pop(0))
    return state


@pytest.fixture
def folder(tmp_path) -> Path:
    """A stand-in model folder (the model itself is a stand-in restorer): its files are fingerprinted."""
    path = tmp_path / "model"
    path.mkdir()
    (path / "config.json").write_text('{"model_type": "mistral"}')
    (path / "model.safetensors").write_bytes(b"\0" * 64)
    (path / "tokenizer.json").write_text("{}")
    return path
