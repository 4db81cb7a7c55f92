"""``apollo-restore serve``: the HTTP API and the web page (uvicorn).

Every option is bounded here, before anything loads: a value out of range is a usage error
(exit 2), never a traceback at start-up.
"""

from __future__ import annotations

import socket
from functools import partial
from pathlib import Path

import typer

from apollo_restore.cli.common import MAX_THREADS

#: Most restorations at once: each holds a worker thread of the server's pool (40 threads).
MAX_CONCURRENT = 32


def serve_command(
    model: Path = typer.Option(None, "--model", help="Model folder (default: the embedded model)."),
    index: Path = typer.Option(
        None,
        "--index",
        help="Text index folder for parallels and provenance (default: $APOLLO_RESTORE_INDEX, else the index "
        "over the packaged training text, built in the user cache on first use).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port (1 to 65535)."),
    max_concurrent: int = typer.Option(
        2, "--max-concurrent", min=1, max=MAX_CONCURRENT, help=f"Restorations running at once (1 to {MAX_CONCURRENT})."
    ),
    max_queued: int = typer.Option(
        256,
        "--max-queued",
        min=1,
        max=10_000,
        help="Requests that may wait for a slot (1 to 10000); more get 503 with Retry-After.",
    ),
    request_timeout: float = typer.Option(
        60.0,
        "--request-timeout",
        min=1.0,
        max=3600.0,
        help="Longest time (s) a restoration request may take, waiting included (1 to 3600).",
    ),
    allowed_host: list[str] = typer.Option(
        None,
        "--allowed-host",
        help="Host header answered "
        "(repeatable; default: loopback names, or --host when it is not loopback; '*' for any).",
    ),
    threads: int = typer.Option(
        None,
        "--threads",
        min=1,
        max=MAX_THREADS,
        help=f"Torch threads (1 to {MAX_THREADS}; default: the cores idle at start-up, at most 2).",
    ),
) -> None:
    """Serve the restoration API (docs at /docs) and the web page at http://HOST:PORT/."""
    check_address(host, port)  # before the imports below: a bad value fails in a moment
    check_allowed_hosts(allowed_host or [])
    from apollo_restore.restoration.load import load_restorer
    from apollo_restore.restoration.loading import load_with_threads
    from apollo_restore.schema.limits import Limits
    from apollo_restore.web.app import LOCAL_HOSTS, create_app
    from apollo_restore.web.limits import measure_cost
    from apollo_restore.web.server import serve

    hosts = allowed_host or (LOCAL_HOSTS if host in LOCAL_HOSTS else (host, *LOCAL_HOSTS))
    parallels = load_parallels(index)  # first: the default model's members then share its text index
    try:
        restorer, _ = load_with_threads(partial(load_restorer, model), threads)  # as every door loads one
    except (FileNotFoundError, ValueError) as err:
        raise typer.BadParameter(f"cannot load the model: {err}", param_hint="--model") from err
    limits = Limits(max_concurrent=max_concurrent, max_queued=max_queued, request_timeout_s=request_timeout)
    app = create_app(restorer, parallels, limits, allowed_hosts=hosts)
    seconds = measure_cost(app.state.gate, restorer)  # admission works from the first request
    typer.echo(f"a typical restoration takes {seconds:.2f} s here, {max_concurrent} side by side", err=True)
    typer.echo(
        f"serving model {restorer.name} on http://{host}:{port}/  "
        f"(API docs: /docs; Host names answered: {', '.join(hosts)})"
    )
    serve(app, host, port, limits)


def check_address(host: str, port: int) -> None:
    """``host`` names an interface of this machine and ``port`` is free on it, checked by
    binding it once (before the model loads, so that a bad address fails in a second).

    Raises:
        typer.BadParameter: an unknown host, or an address that cannot be bound (in use, not ours).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        raise typer.BadParameter(f"cannot resolve {host!r}: {err}", param_hint="--host") from None
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as err:
        message = f"cannot listen on {host}:{port}: {err.strerror}"
        raise typer.BadParameter(message, param_hint="--host/--port") from None


def check_allowed_hosts(hosts: tuple[str, ...] | list[str]) -> None:
    """Each ``--allowed-host`` is ``*``, a host name, or ``*.domain`` (the forms the Host check
    understands).

    Raises:
        typer.BadParameter: an empty name, one with spaces, or a ``*`` elsewhere.
    """
    for name in hosts:
        rest = name[2:] if name.startswith("*.") else name
        if name != "*" and (not rest or "*" in rest or any(ch.isspace() for ch in rest)):
            raise typer.BadParameter(
                f"{name!r} is not a host name: give a name, '*.domain' or '*'", param_hint="--allowed-host"
            )


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
