"""Fixtures of the web tests: a tiny random restorer (junk readings, fast) and its app."""

from __future__ import annotations

import pytest

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.restore.engine import Restorer, RestoreConfig


@pytest.fixture(scope="session")
def tiny_restorer() -> Restorer:
    """``tiny`` with random weights; short searches so each gap takes a fraction of a second."""
    tok = CharTokenizer()
    return Restorer(build_model("tiny", tok, seed=0).eval(), tok, name="tiny", config=RestoreConfig(k=5, max_chars=12))
