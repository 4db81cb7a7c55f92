"""``apollo-restore serve``: the HTTP API and the web page (uvicorn)."""

from __future__ import annotations

from pathlib import Path

import typer


def serve_command(
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    index: Path = typer.Option(None, "--index", help="Text index folder for parallels and provenance (default: $APOLLO_RESTORE_INDEX, else the index over the packaged training text, built in the user cache on first use)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    max_concurrent: int = typer.Option(2, "--max-concurrent", help="Restorations running at once."),
    threads: int = typer.Option(None, "--threads", help="Torch threads (default: torch's choice)."),
) -> None:
    """Serve the restoration API (docs at /docs) and the web page at http://HOST:PORT/."""
    import uvicorn

    from apollo_restore.restore.ensemble import load_filler
    from apollo_restore.web.app import create_app
    from apollo_restore.web.limits import Limits

    parallels = load_parallels(index)  # first: the default model's members then share its text index
    try:
        restorer = load_filler(model, threads=threads)
    except (FileNotFoundError, ValueError) as err:
        raise typer.BadParameter(f"cannot load the model: {err}", param_hint="--model") from err
    app = create_app(restorer, parallels, Limits(max_concurrent=max_concurrent))
    typer.echo(f"serving model {restorer.name} on http://{host}:{port}/  (API docs: /docs)")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def load_parallels(folder: Path | None):
    """The parallel-passage index in ``folder`` (default: the packaged one), ready for the web app.

    Raises:
        typer.BadParameter: no readable index there.
    """
    from apollo_restore.web.parallels import IndexParallels

    try:
        return IndexParallels.open(folder, progress=lambda msg: typer.echo(msg, err=True))
    except (FileNotFoundError, ValueError, ImportError) as err:
        raise typer.BadParameter(str(err), param_hint="--index") from err


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
