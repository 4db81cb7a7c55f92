"""``apollo-restore restore`` and ``apollo-restore predict``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def restore_command(
    text: str = typer.Argument(None, help="Leiden text, a path to a text file, or '-' (or nothing) for stdin."),
    k: int = typer.Option(20, "--k", help="Candidates per gap."),
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    hint: list[str] = typer.Option(None, "--hint", help="GAP=HINT overrides, e.g. 0=7, 1=5-8, 2=none (0-based gaps)."),
    show: int = typer.Option(5, "--show", help="Candidates printed per gap (all with --json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    neural_only: bool = typer.Option(False, "--neural-only", help="Leave out the model folder's classical ensemble members."),
    parallels: bool = typer.Option(False, "--parallels", help="Also propose the readings of two-sided parallel passages, cited by document id."),
) -> None:
    """Restore every lacuna of a Leiden text and print ranked candidates with probabilities."""
    from apollo_restore.errors import LeidenError
    from apollo_restore.restore.ensemble import load_filler

    source = _read_text(text)
    try:
        hints = dict(_parse_hint(h) for h in hint or [])
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--hint") from err
    restorer = load_filler(model, use_ngram=not neural_only)
    if parallels:
        from apollo_restore.retrieve.augment import RetrievalAugmented
        from apollo_restore.retrieve.index import ParallelIndex

        restorer = RetrievalAugmented(restorer, ParallelIndex.shared(progress=lambda msg: typer.echo(msg, err=True)))
    try:
        result = restorer.restore(source, hints=hints, k=k)
    except LeidenError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    _print(result, show)


def _read_text(text: str | None) -> str:
    if text is None or text == "-":
        return sys.stdin.read()
    if "[" in text or "\n" in text or len(text.encode()) > 255:
        return text  # Leiden text itself (no file name holds brackets here)
    path = Path(text)
    return path.read_text(encoding="utf-8") if path.is_file() else text


def _parse_hint(item: str) -> tuple[int, object]:
    from apollo_restore.data.formats import parse_hint

    gap, sep, value = item.partition("=")
    if not sep or not gap.strip().isdigit():
        raise ValueError(f"hint {item!r} must look like GAP=7, GAP=5-8 or GAP=none")
    if value.strip().lower() == "none":
        return int(gap), None
    lo, dash, hi = value.partition("-")
    return int(gap), parse_hint([int(lo), int(hi)] if dash else int(lo))


def _print(result, show: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]Restored text[/bold] ({result.model}, {result.ms:.0f} ms):")
    console.print(result.restored_text, highlight=False)
    for gap in result.gaps:
        table = Table(title=f"gap {gap.index + 1}  hint {gap.hint}  ({gap.ms:.0f} ms)", title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("reading")
        table.add_column("prob", justify="right")
        table.add_column("parallels in")
        for rank, cand in enumerate(gap.candidates[:show], 1):
            table.add_row(str(rank), cand.text, f"{cand.prob:.3f}", ", ".join(cand.citations[:3]))
        console.print(f"…{gap.prefix[-40:]}[bold red][ ][/bold red]{gap.suffix[:40]}…", highlight=False)
        console.print(table)


def predict_command(
    gaps: Path = typer.Option(..., "--gaps", exists=True, dir_okay=False, help="Gap set (JSONL, our interchange format)."),
    out: Path = typer.Option(..., "--out", help="Predictions JSONL to write."),
    k: int = typer.Option(20, "--k", help="Candidates per gap."),
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    exact_length: bool = typer.Option(False, help="Force exact hints as hard lengths (for length-bound comparisons)."),
    neural_only: bool = typer.Option(False, "--neural-only", help="Leave out the model folder's classical ensemble members."),
    parallels: bool = typer.Option(False, "--parallels", help="Also propose the readings of two-sided parallel passages, cited by document id."),
) -> None:
    """Run a gap set and write predictions with per-gap milliseconds."""
    from apollo_restore.restore.engine import RestoreConfig
    from apollo_restore.restore.ensemble import load_filler
    from apollo_restore.restore.predict import predict_file

    restorer = load_filler(model, config=RestoreConfig(k=k, exact_length=exact_length), use_ngram=not neural_only)
    n = predict_file(restorer, gaps, out, k)
    typer.echo(f"wrote {n} predictions to {out}")


def register(app: typer.Typer) -> None:
    app.command("restore")(restore_command)
    app.command("predict")(predict_command)
