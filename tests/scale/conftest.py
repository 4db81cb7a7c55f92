"""Shared fixtures of the scale-out tests: a tiny prepared folder and a tiny model folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from apollo_restore.data.prepare import CorpusSpec, prepare
from apollo_restore.data.table import DOCUMENTS_FILE, load_documents, write_documents

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def make_prepared(out: Path) -> Path:
    """The DDB fixtures prepared, every document moved to the train split (5 short papyri)."""
    prepare([CorpusSpec("ddb", FIXTURES / "ddb")], out, progress=False)
    rows = load_documents(out).to_pylist()
    for row in rows:
        row["split"] = "train"
    write_documents(rows, out / DOCUMENTS_FILE)
    return out


@pytest.fixture(scope="session")
def prepared(tmp_path_factory) -> Path:
    return make_prepared(tmp_path_factory.mktemp("prepared"))


@pytest.fixture(scope="session")
def tiny_model_folder(tmp_path_factory) -> Path:
    """A randomly initialised ``tiny`` Mistral with the character tokenizer, as a model folder."""
    from apollo_restore.fim.tokenizer import CharTokenizer
    from apollo_restore.model.builders import build_model
    from apollo_restore.model.checkpoint import save_model

    folder = tmp_path_factory.mktemp("tiny_model")
    tok = CharTokenizer()
    save_model(build_model("tiny", tok, seed=0), tok, folder, {"size": "tiny"})
    return folder
