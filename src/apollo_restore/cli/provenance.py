"""``apollo-restore provenance``: training documents that share long runs with a text."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_LIMIT, fail, read_text_argument


def provenance_command(
    text: str = typer.Argument(
        None, help="Greek text (Leiden or plain), a path to a text file, or '-' (or nothing) for stdin."
    ),
    min_run: int = typer.Option(40, "--min-run", min=10, max=10_000, help="Shortest shared run reported (letters)."),
    limit: int = typer.Option(20, "--limit", min=1, max=MAX_LIMIT, help="Documents shown."),
    index: Path = typer.Option(
        None, "--index", help="Text index folder (default: the one over the packaged training text)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
) -> None:
    """Was this text in the training data? Lists the training documents sharing runs of at least
    --min-run letters with it (spaces, accents and brackets ignored), with links to their editions."""
    from apollo_restore.errors import RequestError
    from apollo_restore.retrieve.parallels import ParallelIndex
    from apollo_restore.retrieve.provenance import check_query, provenance

    source = read_text_argument(text)
    try:  # an empty text, a machine reading ⁅…⁆ (no letter of the text): refused before the index is opened
        check_query(source)
    except RequestError as err:
        fail(err)
    try:
        idx = ParallelIndex.open(index, progress=lambda msg: typer.echo(msg, err=True))
        result = provenance(source, idx, min_run=min_run, limit=limit)
    except (FileNotFoundError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    typer.echo(result.summary)
    for d in result.documents:
        typer.echo(
            f"  {d.label or d.doc} ({d.source}): longest run {d.longest} letters, {d.covered} shared  {d.url or ''}"
        )
        typer.echo(f"      «{d.snippet}»")


def register(app: typer.Typer) -> None:
    app.command("provenance")(provenance_command)
