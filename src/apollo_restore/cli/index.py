"""``apollo-restore index``: a text index (:class:`~apollo_restore.data.textindex.TextIndex`) over the
training split of a prepared corpus, for parallel passages beyond the packaged text."""

from __future__ import annotations

from pathlib import Path

import typer


def index_command(
    prepared: Path = typer.Option(
        ..., "--prepared", exists=True, file_okay=False, help="Prepared folder (apollo-restore prepare)."
    ),
    out: Path = typer.Option(..., "--out", help="Index folder to write."),
    source: list[str] = typer.Option(None, "--source", help="Corpora to include (default: all); repeatable."),
) -> None:
    """Index the train split of a prepared corpus for parallel passages (never validation or test)."""
    from apollo_restore.retrieve.parallels import build_index

    report = build_index(prepared, out, sources=source or None)
    sources = ", ".join(f"{k} {v:,}" for k, v in report.sources.items())
    typer.echo(f"indexed {report.documents:,} train documents ({sources}), {report.letters:,} letters "
               f"in {report.seconds} s: {report.megabytes} MB in {report.path}")  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)
