"""``apollo-restore ngram``: builds a model file from a prepared folder; clear errors."""

from __future__ import annotations

from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.ngram.model import NgramModel


def test_ngram_command_builds_and_saves(tiny_prepared, tmp_path):
    out = tmp_path / "lm.npz"
    args = ["ngram", "--prepared", str(tiny_prepared), "--source", "ddb", "--order", "4", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{out}: order 4, min_count 1, ")
    model = NgramModel.load(out)
    assert model.order == 4 and model.meta["direction"] == "forward"


def test_ngram_command_without_prepared_corpus(tmp_path):
    result = CliRunner().invoke(app, ["ngram", "--prepared", str(tmp_path), "--out", str(tmp_path / "lm.npz")])
    expected = f"error: no documents.parquet in {tmp_path}: run `apollo-restore prepare` first\n"
    assert (result.exit_code, result.output) == (2, expected)
