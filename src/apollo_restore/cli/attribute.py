"""``apollo-restore attribute``: when and where a text was written (its date and place, with the dated parallels)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from apollo_restore.cli.common import fail, read_text_argument, run_line_job, text_name


def attribute_command(
    text: str = typer.Argument(
        None, help="Greek text (Leiden, EpiDoc, Beta Code, or plain letters with '-' per lost letter), a file, or '-'."
    ),
    texts: Path = typer.Option(None, "--texts", help='Batch: a JSONL file of {"id": …, "text": …} lines.'),
    out: Path = typer.Option(None, "--out", help="Batch: the JSONL to write (whole, once every text is done)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    parallels: bool = typer.Option(True, "--parallels/--no-parallels", help="Look up the dated parallels."),
    model: Path = typer.Option(None, "--model", help="Attribution model folder (default: the packaged one)."),
    force: bool = typer.Option(False, "--force", help="Batch: replace an existing --out."),
    restart: bool = typer.Option(False, "--restart", help="Batch: discard an unfinished run instead of continuing it."),
) -> None:
    """Date and place a text: a distribution over years (point estimate and 80 % interval), the 10
    most probable places (calibrated probabilities), the most probable districts (nomes) and the
    dated training documents that share the longest runs with it. With --texts and --out, a file of
    texts as a resumable job."""
    from apollo_restore.attribution.attribute import attribute, load_model
    from apollo_restore.errors import (
        AttributionError,
        FileError,
        FormatError,
        LeidenError,
        ModelFolderError,
        RequestError,
    )
    from apollo_restore.schema.answers import percent, year_label

    folder = str(model) if model else None
    if texts is not None or out is not None:
        if texts is None or out is None or text is not None:
            fail(ValueError("[E601] a batch takes both --texts and --out, and no TEXT"))
        _batch(texts, out, folder, parallels, force, restart)
        return
    source = read_text_argument(text)
    try:
        load_model(folder)
        result = attribute(source, folder=folder, parallels=parallels, name=text_name(text, source))
    except (AttributionError, RequestError, LeidenError, FileError, FormatError, ModelFolderError) as err:
        fail(err)
    for warning in result.warnings:  # as restore gives them: on stderr, the answer on stdout
        typer.secho(f"warning: {warning}", err=True, fg="yellow")
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    typer.echo(result.summary())
    for p in result.places[:10]:
        typer.echo(f"  {100 * p.prob:5.1f} %  {p.place}")
    for d in result.districts[:3]:
        inside = ", ".join(f"{p.place} {percent(p.prob)}" for p in d.places[:3])
        typer.echo(f"  district {d.name} {percent(d.prob)}: {inside}")
    if result.formula:
        typer.echo(f"  {result.formula_line()}")
    for par in result.parallels:
        when = year_label(par.lo) if par.lo is not None else "undated"  # dated, every one (dated_parallels)
        if par.hi is not None and par.hi != par.lo:
            when += f" – {year_label(par.hi)}"
        typer.echo(f"  parallel {par.label} ({when}, {par.place or 'place unknown'}): "
                   f"{par.longest} letters shared  {par.url or ''}")  # fmt: skip


def _batch(texts: Path, out: Path, folder: str | None, parallels: bool, force: bool, restart: bool) -> None:
    """``--texts IN --out OUT``: every text of IN, one line each, as a durable job."""
    from apollo_restore.attribution.attribute import attribute, load_model
    from apollo_restore.attribution.batch import AttributeJob
    from apollo_restore.errors import AttributionError, FileError, FormatError, ModelFolderError

    try:
        settings = {"model": load_model(folder).fingerprint, "parallels": str(parallels)}  # hashed once, at load
        job = AttributeJob.open(texts, out, force=force, restart=restart, settings=settings)
    except (AttributionError, FileError, FormatError, ModelFolderError) as err:
        fail(err)
    if job.output.resumed:
        typer.echo(
            f"resuming: {job.total - len(job.todo)} of {job.total} texts already in {job.output.partial}", err=True
        )

    def run() -> int:
        try:
            return job.run(lambda t: attribute(t, folder=folder, parallels=parallels))
        except (AttributionError, ModelFolderError) as err:  # the model's failure: the lines so far stay
            fail(err)

    n = run_line_job(run, job.output.partial, "attributions")
    typer.echo(f"wrote {n} attributions to {out}")


def register(app: typer.Typer) -> None:
    app.command("attribute")(attribute_command)
