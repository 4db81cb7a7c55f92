"""Running the web app under uvicorn with read timeouts: a request head not complete within the
limit closes the connection (no slow-loris), a body not complete gets 408
(:class:`~apollo_restore.web.limits.BodyLimit`).

    serve(app, "127.0.0.1", 8000, limits)                 # blocks, as ``apollo-restore serve``
    with background_server(app, limits) as url: ...       # a free loopback port, in a thread
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from apollo_restore.schema.limits import Limits

#: Seconds an idle keep-alive connection is kept open.
KEEP_ALIVE_S = 5


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head (request line and
    headers) has not arrived within :attr:`head_timeout_s` of the connection or of the
    previous response."""

    head_timeout_s: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timeout)

    def _head_timeout(self) -> None:
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def protocol_for(limits: Limits) -> type[TimedH11Protocol]:
    """:class:`TimedH11Protocol` with the head timeout of ``limits`` (``read_timeout_s``)."""
    return type("TimedH11", (TimedH11Protocol,), {"head_timeout_s": limits.read_timeout_s})


def config(app: Any, host: str, port: int, limits: Limits) -> uvicorn.Config:
    """The uvicorn configuration of :func:`serve`."""
    return uvicorn.Config(
        app, host=host, port=port, http=protocol_for(limits), timeout_keep_alive=KEEP_ALIVE_S, log_level="warning"
    )


def serve(app: Any, host: str, port: int, limits: Limits) -> None:
    """Serve ``app`` until interrupted."""
    uvicorn.Server(config(app, host, port, limits)).run()


@contextmanager
def background_server(app: Any, limits: Limits) -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a daemon thread; yields its base URL and stops
    the server on exit."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(config(app, "127.0.0.1", port, limits))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
