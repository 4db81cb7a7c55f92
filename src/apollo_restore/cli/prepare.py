"""``apollo-restore prepare``: corpora → normalised, split, de-duplicated Parquet."""

from __future__ import annotations

from pathlib import Path

import typer

from apollo_restore.cli.common import fail
from apollo_restore.errors import FileError


def prepare_command(
    corpus: list[str] = typer.Option(
        ...,
        "--corpus",
        metavar="SOURCE=PATH",
        help="A corpus to read: SOURCE is ddb, dclp, inscription or literary; PATH a .tar/.tar.gz/.tar.xz "
        "archive, a folder or a file, read in place. Repeatable. Where the corpora come from: docs/training.md.",
    ),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    dedup_threshold: float = typer.Option(
        0.5,
        min=0.0,
        max=1.0,
        help="Drop a validation/test document when this share of its 25-letter runs is in train.",
    ),
) -> None:
    """Read corpora in place and write documents.parquet, stats.md/json and skipped.jsonl."""
    from apollo_restore.data.prepare import CorpusSpec, format_stats, prepare

    try:
        specs = [CorpusSpec.parse(c) for c in corpus]
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--corpus") from err
    for spec in specs:
        if not spec.path.exists():
            raise typer.BadParameter(f"{spec.path} does not exist", param_hint="--corpus")
    if out.exists() and not out.is_dir():
        fail(FileError("E205", str(out), reason="it is a file; --out names a folder"))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(FileError("E205", str(out), reason=err.strerror or str(err)))
    report = prepare(specs, out, dedup_threshold=dedup_threshold)
    typer.echo(format_stats(report))
    if report.documents == 0:
        typer.echo(f"error: no document could be read; see {out / 'skipped.jsonl'} for why", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("prepare")(prepare_command)
