"""The embedded default model: shipped in the package, loads offline, restores real Greek."""

from __future__ import annotations

import json
import socket

import pytest

from apollo_restore.data.textindex import build_text_index
from apollo_restore.model.folder import META_FILE
from apollo_restore.restoration.config import DEFAULT_MODEL
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.ensemble import Ensemble


def test_default_model_is_shipped_small_and_versioned():
    files = {p.name: p.stat().st_size for p in DEFAULT_MODEL.iterdir()}
    assert {"model.safetensors", "config.json", "tokenizer.json", META_FILE} <= set(files)
    corpus = sum(p.stat().st_size for p in (DEFAULT_MODEL.parent / "corpus").iterdir())
    assert sum(files.values()) + corpus <= 60e6
    meta = json.loads((DEFAULT_MODEL / META_FILE).read_text())
    assert meta["normaliser"] == "apollo_restore norm.v1" and meta["training"]["step"] > 0
    assert not any(name.startswith("optimizer") for name in files)


FORMULA = "ετους δευτερου και εικοστου αντωνινου καισαρος του κυριου τυβι"


@pytest.fixture
def tiny_index(monkeypatch, tmp_path):
    """A tiny text index standing in for the one built from the packaged text on first use."""
    build_text_index([f"d{i}" for i in range(3)], ["ddb"] * 3, [FORMULA] * 3, tmp_path / "ix")
    monkeypatch.setenv("APOLLO_RESTORE_INDEX", str(tmp_path / "ix"))


def test_default_model_restores_offline(monkeypatch, tiny_index):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def no_network(*args, **kwargs):
        raise AssertionError("the default model reached for the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    shown = load_restorer()
    assert isinstance(shown.restorer, Ensemble)
    result = restore_text(shown, "ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ [.6] Τῦβι", k=20)
    cands = result.gaps[0].candidates
    # calibrated: the probabilities sum to the chance that the list holds the reading (< 1)
    assert 1 <= len(cands) <= 20 and 0 < sum(c.prob for c in cands) < 1 and all(c.calibrated for c in cands)
    # the formula is common in the training papyri: κυρίου is among the readings, in edition form
    assert ("κυριου", "κυρίου") in [(c.text, c.display) for c in cands]


@pytest.mark.parametrize(
    "text",
    [
        "Κόμων Μουσαίου [.4] χαίρειν",  # issue 23: k = 20, 50, 200 gave υἱὸς, Μηνᾶ, τοῖς
        "Ἀπολλώνιος Ἡρακλείδῃ τῷ φιλτάτῳ πλεῖστα [.7] καὶ διὰ παντὸς ὑγιαίνειν",
    ],
)
def test_default_model_readings_do_not_depend_on_k(tiny_index, text):
    """k only cuts the ranked pool: the same readings in the same order with the same
    (calibrated) probabilities for k = 5, 20, 50 and 200."""
    restorer = load_restorer()
    lists = {k: restore_text(restorer, text, k=k).gaps[0].candidates for k in (5, 20, 50, 200)}
    pool = lists[200]
    for k, cands in lists.items():
        assert [(c.text, c.prob) for c in cands] == [(c.text, c.prob) for c in pool[:k]]
