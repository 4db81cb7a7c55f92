"""``apollo-restore restore`` and ``apollo-restore predict``."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import typer

from apollo_restore.cli.common import (
    MAX_THREADS,
    fail,
    read_text_argument,
    run_line_job,
    setting_option,
    text_name,
    threads_option,
)
from apollo_restore.cli.progress import gap_progress
from apollo_restore.errors import FileError, FormatError, LeidenError, RequestError
from apollo_restore.inputs import file_digest
from apollo_restore.schema.search import RestoreConfig

# options shared by `restore` and `predict` (and `evaluate`); --k's bounds are the request's (E305)
K_OPTION = setting_option(RestoreConfig, "k", "--k", help="Candidates per gap", bounded=False)
EXACT_LENGTH_OPTION = setting_option(
    RestoreConfig,
    "exact_length",
    "--exact-length/--no-exact-length",
    help="Force exact hints as hard lengths (for length-bound comparisons)",
)
NEURAL_ONLY_OPTION = typer.Option(
    False,
    "--neural-only",
    help="The neural member alone: leave out the model folder's classical members "
    "(the shipped folder's unbounded-order, document and length-prior members).",
)
#: Most gaps one ``--batch`` may search together (16 × the GPU default; more only risks the GPU's memory).
MAX_BATCH = 4096
_DEVICE = re.compile(r"cpu|cuda(:[0-9]{1,2})?")


def _device(value: str) -> str:
    """The ``--device`` value, refused as a usage error (before any model loads) unless it is
    ``cpu``, ``cuda`` or ``cuda:N``."""
    if not _DEVICE.fullmatch(value):
        raise typer.BadParameter(f"{value!r}: give cpu, cuda or cuda:N")
    return value


DEVICE_OPTION = typer.Option(
    "cpu",
    "--device",
    callback=_device,
    help="cpu, or cuda (cuda:N): a GPU, many gaps' searches batched together (see --batch).",
)
BATCH_OPTION = typer.Option(
    None,
    "--batch",
    min=1,
    max=MAX_BATCH,
    help="Gaps searched together (default: 1 on the CPU, 256 on a GPU); results do not change.",
)
PARALLELS_OPTION = typer.Option(
    False, "--parallels", help="Also propose the readings of two-sided parallel passages, cited by document id."
)
THREADS_OPTION = threads_option("Torch threads (default: the cores idle now, at most 2).")
WORKERS_OPTION = typer.Option(
    1,
    "--workers",
    min=1,
    max=MAX_THREADS,
    help="Processes restoring gaps side by side, each with its own model and --threads torch threads "
    "(default 1 each): many gaps on a machine with many cores. Results do not change.",
)


def restore_command(
    text: str = typer.Argument(
        None, help="Leiden text (or EpiDoc XML, Beta Code), a path to a text file, or '-' (or nothing) for stdin."
    ),
    k: int = K_OPTION,
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    hint: list[str] = typer.Option(
        None, "--hint", help="GAP=HINT overrides, gaps numbered from 1 as printed: 1=7, 2=5-8, 3=ca.7, 4=none."
    ),
    show: int = typer.Option(5, "--show", min=0, max=200, help="Candidates printed per gap (all with --json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    neural_only: bool = NEURAL_ONLY_OPTION,
    parallels: bool = PARALLELS_OPTION,
    threads: int | None = THREADS_OPTION,
    kind: str = typer.Option(
        None,
        "--kind",
        help="documentary, literary or inscription: the kind of text, whose calibration its gaps take "
        "(default: read from the text).",
    ),
) -> None:
    """Restore every lacuna of a Leiden text and print ranked candidates with probabilities.

    Exits with status 2 and a numbered message when the text cannot be restored as asked
    (empty, no gap, not Greek, malformed, beyond the limits).
    """
    from apollo_restore.restoration.driver import restore_text
    from apollo_restore.restoration.request import validate
    from apollo_restore.schema.restoration import RestoreRequest

    source = read_text_argument(text)
    try:
        hints = dict(parse_hint(h) for h in hint or [])
        request = validate(RestoreRequest(source, hints, None, k, kind=kind), name=text_name(text, source))
    except (LeidenError, RequestError) as err:
        fail(err)
    restorer, _ = _load(partial(_restorer, model, parallels, neural_only=neural_only), threads)
    with gap_progress(enabled=not as_json) as progress:  # a bar on a terminal's stderr, nothing else
        result = restore_text(restorer, request, progress=progress)
    for warning in result.warnings:
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    _print(result, show)


def _load(make, threads: int | None, workers: int = 1):
    """:func:`~apollo_restore.restoration.loading.load_with_threads` of ``make`` (the model
    folder's restorer and the worker processes), or exit 2 with the numbered message when a file
    it names is missing (``E501``), a file is broken (``E503``–``E512``), its ensemble entry is
    unusable (``E502``), ``device`` is a GPU this PyTorch cannot see (``E513``) or ``threads`` is
    out of range (``E311``)."""
    from apollo_restore.restoration.loading import load_with_threads

    try:
        return load_with_threads(make, threads, workers)
    except (FileNotFoundError, ValueError) as err:
        fail(err)


def parse_hint(item: str) -> tuple[int | str, str]:
    """``GAP=VALUE`` → ``(gap, value)``; the request validates both."""
    gap, sep, value = item.partition("=")
    if not sep:
        raise typer.BadParameter(
            f"hint {item!r} must look like GAP=7, GAP=5-8, GAP=ca.7 or GAP=none", param_hint="--hint"
        )
    return gap.strip(), value


def _print(result, show: int) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from apollo_restore.data.splice import MACHINE_CLOSE, MACHINE_OPEN
    from apollo_restore.restoration.presentation.labels import model_label
    from apollo_restore.schema.restoration import percent

    console = Console()
    kind = f", {result.kind} text{' (read from it)' if result.kind_read else ''}" if result.kind else ""
    console.print(f"[bold]Restored text[/bold] ({escape(model_label(result.model))}{kind}, {result.ms:.0f} ms):")
    console.print(escape(result.restored_leiden), highlight=False)
    filled = sum(g.pinned is None and g.filled for g in result.gaps)
    console.print(
        f"[dim]{MACHINE_OPEN} {MACHINE_CLOSE} the model's reading ({filled} of {len(result.gaps)} gaps): written only "
        f"where its first reading is shown at ≥ {percent(result.fill_threshold)} and makes known words, in a gap "
        "of given extent; the other gaps stay as written, their readings below.[/dim]",
        highlight=False,
    )
    calibrated = any(c.calibrated for g in result.gaps for c in g.candidates)
    for gap in result.gaps:
        console.print(f"\n[bold]gap {gap.number}[/bold] · {gap.label} · {gap.ms:.0f} ms", highlight=False)
        if gap.lost_lines:  # never searched: no context line, no table
            continue
        console.print(f"…{gap.prefix[-40:]}[bold red][ ][/bold red]{gap.suffix[:40]}…", highlight=False)
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("reading")
        table.add_column("normalised", style="dim")
        table.add_column("prob", justify="right")
        table.add_column("note", style="dim")
        for rank, cand in enumerate(gap.candidates[:show], 1):
            notes = cand.notes + ([f"parallels in {', '.join(cand.citations[:3])}"] if cand.citations else [])
            table.add_row(str(rank), cand.display or cand.text, cand.text, percent(cand.prob), "; ".join(notes))
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
    gaps: Path = typer.Option(..., "--gaps", help="Gap set (JSONL, our interchange format)."),
    out: Path = typer.Option(..., "--out", help="Predictions JSONL to write (whole, once every gap is done)."),
    k: int = K_OPTION,
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    exact_length: bool = EXACT_LENGTH_OPTION,
    force: bool = typer.Option(False, "--force", help="Replace an existing --out (kept until the new one is whole)."),
    restart: bool = typer.Option(
        False, "--restart", help="Discard an unfinished run's OUT.partial instead of continuing it."
    ),
    neural_only: bool = NEURAL_ONLY_OPTION,
    parallels: bool = PARALLELS_OPTION,
    threads: int | None = THREADS_OPTION,
    device: str = DEVICE_OPTION,
    batch: int | None = BATCH_OPTION,
    workers: int = WORKERS_OPTION,
) -> None:
    """Run a gap set and write predictions with per-gap milliseconds, as a durable job.

    Everything is checked before the model loads (every gap as a restoration request, unique
    ids, --out not the gap set, its folder writable). Predictions go to OUT.partial, one line
    per gap as it is done (as each --batch of gaps is done); a run that is stopped or killed
    continues where it was when run again (--restart begins again); OUT appears only when every
    gap is there. An existing OUT is refused without --force, and kept until the new one is
    complete. A run continues an unfinished one only with the same gap set (its content), --k,
    --model (its weights, config, tokenizer, ensemble and calibration), search options, edition
    forms table and apollo-restore version (they are recorded in OUT.partial.json), and two runs
    never write one OUT at once.
    """
    from apollo_restore.model.folder import fingerprint
    from apollo_restore.restoration.config import DEFAULT_MODEL, batch_size
    from apollo_restore.restoration.predict import PredictJob

    try:
        settings = {
            "model": str(model.resolve()) if model else "embedded default",
            "model fingerprint": fingerprint(model or DEFAULT_MODEL),
            **probability_files(model or DEFAULT_MODEL),
            "exact length": str(exact_length), "neural only": str(neural_only), "parallels": str(parallels),
        }  # fmt: skip
        job = PredictJob.open(gaps, out, k, force=force, restart=restart, settings=settings)
    except (FileError, FormatError, RequestError) as err:
        fail(err)
    if job.output.resumed:
        done = job.total - len(job.todo)
        typer.echo(f"resuming: {done} of {job.total} gaps already in {job.output.partial}", err=True)
    options = {"config": RestoreConfig(k=k, exact_length=exact_length), "neural_only": neural_only, "device": device}
    # loaded here also with --workers: a broken folder fails at once, with its numbered message,
    # and the parallel index is built (once) before the workers read it
    try:
        restorer, pool = _load(partial(_restorer, model, parallels, **options), threads, workers)
    except BaseException:  # a broken folder, a missing GPU: the job leaves no file behind
        job.output.close()
        raise
    n = run_line_job(
        lambda: job.run(restorer, batch=batch_size(batch, device), workers=pool), job.output.partial, "predictions"
    )
    typer.echo(f"wrote {n} predictions to {out}")


def probability_files(folder: Path) -> dict[str, str]:
    """What changes a prediction's probabilities besides the model folder's
    :func:`~apollo_restore.model.folder.fingerprint` (which leaves its calibration out), for a
    resumed ``predict`` to continue only with the same: SHA-256 (16 hex digits) of the folder's
    ``calibration.json`` (``"none"`` without one), of the packaged edition-forms table (``"none"``
    where it is not installed), and the package version."""
    from apollo_restore import __version__
    from apollo_restore.data.orthography import FORMS_FILE

    return {
        "calibration": _file_digest(Path(folder) / "calibration.json"),
        "edition forms": _file_digest(FORMS_FILE),
        "version": __version__,
    }


def _file_digest(path: Path) -> str:
    """The fingerprint of ``path``'s bytes (:func:`~apollo_restore.inputs.file_digest`); ``"none"``
    when there is no such file, ``"unreadable"`` when it cannot be read (the load that follows
    names why)."""
    try:
        return file_digest(path)
    except (FileNotFoundError, NotADirectoryError):
        return "none"
    except (OSError, FileError):
        return "unreadable"


def _restorer(model: Path | None, parallels: bool, **options):
    """The model folder's restorer (:func:`~apollo_restore.restoration.load.load_restorer` with
    ``options``), with the parallel passages' readings when ``parallels``; module-level, so that
    ``--workers`` processes build their own from it."""
    from apollo_restore.restoration.load import load_restorer

    restorer = load_restorer(model, **options)
    if not parallels:
        return restorer
    from apollo_restore.retrieve.augment import with_parallels
    from apollo_restore.retrieve.parallels import ParallelIndex

    return with_parallels(restorer, ParallelIndex.shared(progress=lambda msg: typer.echo(msg, err=True)))


def register(app: typer.Typer) -> None:
    app.command("restore")(restore_command)
    app.command("predict")(predict_command)
