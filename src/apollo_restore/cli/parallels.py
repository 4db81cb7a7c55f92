"""``apollo-restore parallels``: parallel passages for a gap or a phrase."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_LIMIT, read_text_argument


def parallels_command(
    text: str = typer.Argument(
        None,
        help="Leiden text with gaps ([.5], [- - -], ...) or a phrase without brackets; a path to a text file, "
        "or '-' (or nothing) for stdin.",
    ),
    index: Path = typer.Option(
        None,
        "--index",
        help="Index folder (default: $APOLLO_RESTORE_INDEX, else the index over the packaged training text, "
        "built in the user cache on first use).",
    ),
    max_between: int = typer.Option(
        40, "--max-between", min=0, max=1000, help="Most letters between the contexts of a gap."
    ),
    limit: int = typer.Option(10, "--limit", min=1, max=MAX_LIMIT, help="Readings (gap) or documents (phrase) shown."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
) -> None:
    """Show where the gap's contexts stand together in the training corpus, and what stands
    between them; or, for a phrase, where it stands."""
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.errors import LeidenError
    from apollo_restore.retrieve.index import ParallelIndex, leiden_gap_parallels

    text = read_text_argument(text)
    try:
        idx = ParallelIndex.open(index, progress=lambda msg: typer.echo(msg, err=True))
    except (FileNotFoundError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err
    if "[" not in text and "?" not in text:
        try:
            result = idx.phrase_parallels(text, limit=limit)
        except ValueError as err:
            raise typer.BadParameter(str(err), param_hint="TEXT") from err
        if as_json:
            typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
            return
        sources = ", ".join(f"{k} {v}" for k, v in result.by_source.items())
        typer.echo(f"«{result.phrase}»: {result.count} occurrences in {result.n_docs} documents ({sources or 'none'})")
        for hit in result.hits:
            typer.echo(f"  {hit.doc}: …{hit.text[: hit.start]}[{hit.text[hit.start : hit.end]}]{hit.text[hit.end :]}…")
        return
    try:
        gaps = leiden_gap_parallels(idx, text, max_between=max_between, limit=limit)
    except LeidenError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err
    if as_json:
        typer.echo(json.dumps([g.to_dict() for g in gaps], ensure_ascii=False, indent=1))
        return
    for i, gap in enumerate(gaps, 1):
        typer.echo(f"gap {i}: «…{gap.left}» [{gap.hint.format()}] «{gap.right}…»: {gap.total} parallels"
                   + ("" if gap.anchor else " (context too short)"))  # fmt: skip
        for g in gap.groups:
            more = f" +{g.n_docs - len(g.docs)}" if g.n_docs > len(g.docs) else ""
            typer.echo(f"  {g.count:>5}× {g.between}   ({', '.join(g.docs)}{more})")


def register(app: typer.Typer) -> None:
    app.command("parallels")(parallels_command)
