"""``apollo-restore serve``: the HTTP API and the web page (uvicorn)."""

from __future__ import annotations

from pathlib import Path

import typer


def serve_command(
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    index: Path = typer.Option(
        None,
        "--index",
        help="Text index folder for parallels and provenance (default: $APOLLO_RESTORE_INDEX, else the index "
        "over the packaged training text, built in the user cache on first use).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    max_concurrent: int = typer.Option(2, "--max-concurrent", help="Restorations running at once."),
    max_queued: int = typer.Option(
        256, "--max-queued", help="Requests that may wait for a slot; more get 503 with Retry-After."
    ),
    request_timeout: float = typer.Option(
        60.0, "--request-timeout", help="Longest time (s) a restoration request may take, waiting included."
    ),
    allowed_host: list[str] = typer.Option(
        None,
        "--allowed-host",
        help="Host header answered "
        "(repeatable; default: loopback names, or --host when it is not loopback; '*' for any).",
    ),
    threads: int = typer.Option(None, "--threads", help="Torch threads (default: torch's choice)."),
) -> None:
    """Serve the restoration API (docs at /docs) and the web page at http://HOST:PORT/."""
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.restore.load import load_filler
    from apollo_restore.web.app import LOCAL_HOSTS, create_app
    from apollo_restore.web.limits import Limits
    from apollo_restore.web.server import serve

    parallels = load_parallels(index)  # first: the default model's members then share its text index
    try:
        restorer = load_filler(model, threads=threads)
    except (FileNotFoundError, ValueError) as err:
        raise typer.BadParameter(f"cannot load the model: {err}", param_hint="--model") from err
    limits = Limits(max_concurrent=max_concurrent, max_queued=max_queued, request_timeout_s=request_timeout)
    hosts = allowed_host or (LOCAL_HOSTS if host in LOCAL_HOSTS else (host, *LOCAL_HOSTS))
    app = create_app(restorer, parallels, limits, allowed_hosts=hosts)
    typer.echo(
        f"serving model {restorer.name} on http://{host}:{port}/  "
        f"(API docs: /docs; Host names answered: {', '.join(hosts)})"
    )
    serve(app, host, port, limits)


def load_parallels(folder: Path | None):
    """The parallel-passage index in ``folder`` (default: the packaged one), ready for the web app.

    Raises:
        typer.BadParameter: no readable index there.
    """
    # imported here, not at the top, to keep `apollo-restore --help` fast
    from apollo_restore.web.parallels import IndexParallels

    try:
        return IndexParallels.open(folder, progress=lambda msg: typer.echo(msg, err=True))
    except (FileNotFoundError, ValueError, ImportError) as err:
        raise typer.BadParameter(str(err), param_hint="--index") from err


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
