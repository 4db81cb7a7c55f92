"""``apollo-restore restore`` and ``apollo-restore predict``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer

from apollo_restore.errors import FormatError, LeidenError, RequestError

_FILE_NAME = re.compile(r"^(?:\S*[/\\]\S*|[^\s/\\]+\.[A-Za-z0-9]{1,5})$")  # a path, or one word with an extension


# options shared by `restore` and `predict`
NEURAL_ONLY_OPTION = typer.Option(
    False, "--neural-only", help="Leave out the model folder's classical ensemble members."
)
PARALLELS_OPTION = typer.Option(
    False, "--parallels", help="Also propose the readings of two-sided parallel passages, cited by document id."
)
THREADS_OPTION = typer.Option(None, "--threads", help="Torch threads (default: the cores idle now, at most 2).")


def restore_command(
    text: str = typer.Argument(None, help="Leiden text, a path to a text file, or '-' (or nothing) for stdin."),
    k: int = typer.Option(20, "--k", help="Candidates per gap (1 to 200)."),
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    hint: list[str] = typer.Option(
        None, "--hint", help="GAP=HINT overrides, e.g. 0=7, 1=5-8, 2=ca.7, 3=none (0-based gaps)."
    ),
    show: int = typer.Option(5, "--show", help="Candidates printed per gap (all with --json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    neural_only: bool = NEURAL_ONLY_OPTION,
    parallels: bool = PARALLELS_OPTION,
    threads: int | None = THREADS_OPTION,
) -> None:
    """Restore every lacuna of a Leiden text and print ranked candidates with probabilities.

    Exits with status 2 and a numbered message when the text cannot be restored as asked
    (empty, no gap, not Greek, malformed, beyond the limits).
    """
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.restore.driver import restore_text
    from apollo_restore.restore.load import load_filler
    from apollo_restore.restore.request import RestoreRequest
    from apollo_restore.restore.threads import use_threads

    source = _read_text(text)
    try:
        request = RestoreRequest(source, dict(_parse_hint(h) for h in hint or []), None, k).validate()
        use_threads(threads)
    except (LeidenError, RequestError) as err:
        _fail(err)
    restorer = _load(load_filler, model, use_ngram=not neural_only)
    if parallels:
        # imported here, not at the top, to keep `apollo-restore --help` fast
        from apollo_restore.retrieve.augment import RetrievalAugmented
        from apollo_restore.retrieve.index import ParallelIndex

        restorer = RetrievalAugmented(restorer, ParallelIndex.shared(progress=lambda msg: typer.echo(msg, err=True)))
    result = restore_text(restorer, request)
    for warning in result.warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    _print(result, show)


def _fail(err: Exception) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(2) from err


def _load(load_filler, model: Path | None, **options):
    """The model folder's filler, or exit 2 with the numbered message when a file it names is
    missing (``E501``) or its ensemble entry is unusable (``E502``)."""
    try:
        return load_filler(model, **options)
    except (FileNotFoundError, ValueError) as err:
        _fail(err)


def _read_text(text: str | None) -> str:
    """The text itself, a file's content, or stdin (with a prompt when it is a terminal).

    Raises:
        typer.Exit: a name that looks like a file name (one word with an extension, or a
            path) names no file.
    """
    if text is None or text == "-":
        if sys.stdin.isatty():
            typer.echo("Paste a Leiden text, then press Ctrl-D (Ctrl-Z Enter on Windows):", err=True)
        return sys.stdin.read()
    if "[" in text or "\n" in text or len(text.encode()) > 255:
        return text  # Leiden text itself (no file name holds brackets here)
    path = Path(text)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    if _FILE_NAME.match(text):
        typer.echo(
            f"error: no file named {text!r} (to restore a text, give it with its gaps marked, e.g. [.5])", err=True
        )
        raise typer.Exit(2)
    return text


def _parse_hint(item: str) -> tuple[int | str, str]:
    """``GAP=VALUE`` → ``(gap, value)``; the request validates both."""
    gap, sep, value = item.partition("=")
    if not sep:
        raise typer.BadParameter(
            f"hint {item!r} must look like GAP=7, GAP=5-8, GAP=ca.7 or GAP=none", param_hint="--hint"
        )
    return gap.strip(), value


def _print(result, show: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]Restored text[/bold] ({result.model}, {result.ms:.0f} ms):")
    console.print(result.restored_leiden, highlight=False)
    calibrated = any(c.calibrated for g in result.gaps for c in g.candidates)
    for gap in result.gaps:
        console.print(f"\n[bold]gap {gap.index + 1}[/bold] · {gap.hint_label} · {gap.ms:.0f} ms", highlight=False)
        console.print(f"…{gap.prefix[-40:]}[bold red][ ][/bold red]{gap.suffix[:40]}…", highlight=False)
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("reading")
        table.add_column("normalised", style="dim")
        table.add_column("prob", justify="right")
        table.add_column("note", style="yellow")
        for rank, cand in enumerate(gap.candidates[:show], 1):
            notes = [f"unknown word: {', '.join(cand.unknown_words)}"] if cand.unknown_words else []
            notes += [f"parallels in {', '.join(cand.citations[:3])}"] if cand.citations else []
            prob = f"{cand.prob:.0%}" if cand.prob >= 0.005 else "<1%"
            table.add_row(str(rank), cand.display or cand.text, cand.text, prob, "; ".join(notes))
        console.print(table)
    if calibrated:
        console.print(
            "\n[dim]prob: how often a reading shown with this probability was the edition's reading on held-out "
            "(validation) texts; a gap's probabilities sum to the chance that the list holds it.[/dim]"
        )
    else:
        console.print(
            "\n[dim]prob: normalised over the listed readings (this model folder has no calibration.json).[/dim]"
        )


def predict_command(
    gaps: Path = typer.Option(
        ..., "--gaps", exists=True, dir_okay=False, help="Gap set (JSONL, our interchange format)."
    ),
    out: Path = typer.Option(..., "--out", help="Predictions JSONL to write."),
    k: int = typer.Option(20, "--k", help="Candidates per gap."),
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    exact_length: bool = typer.Option(False, help="Force exact hints as hard lengths (for length-bound comparisons)."),
    neural_only: bool = NEURAL_ONLY_OPTION,
    parallels: bool = PARALLELS_OPTION,
    threads: int | None = THREADS_OPTION,
) -> None:
    """Run a gap set and write predictions with per-gap milliseconds."""
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.restore.config import RestoreConfig
    from apollo_restore.restore.load import load_filler
    from apollo_restore.restore.predict import predict_file
    from apollo_restore.restore.request import DEFAULT_REQUEST_LIMITS, check_k
    from apollo_restore.restore.threads import use_threads

    try:
        check_k(k, DEFAULT_REQUEST_LIMITS)
        use_threads(threads)
    except RequestError as err:
        _fail(err)
    config = RestoreConfig(k=k, exact_length=exact_length)
    restorer = _load(load_filler, model, config=config, use_ngram=not neural_only)
    try:
        n = predict_file(restorer, gaps, out, k)
    except (RequestError, FormatError) as err:
        _fail(err)
    typer.echo(f"wrote {n} predictions to {out}")


def register(app: typer.Typer) -> None:
    app.command("restore")(restore_command)
    app.command("predict")(predict_command)
