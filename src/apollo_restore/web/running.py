"""A restoration run for an HTTP request: in a worker thread, under the server's
:class:`~apollo_restore.web.limits.Gate`, stopped at its deadline or when its client goes.

    result = await restore_gated(gate, restorer, request, stop, deadline, http, max_gap_letters)
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from apollo_restore.errors import RestoreStopped
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.request import CheckedRequest
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.schema.restoration import Restoration
from apollo_restore.web.limits import Gate, work_units

_POLL_S = 0.25  # how often a running restoration checks its client and its deadline


async def restore_gated(
    gate: Gate,
    restorer: Restorer,
    request: CheckedRequest,
    stop: threading.Event,
    deadline: float,
    http: Request,
    max_gap_letters: int,
) -> Restoration:
    """``restore_text(restorer, request)`` once ``gate`` gives it a slot, in a worker thread; the
    slot is free again once the thread has stopped (its time then measures the work's cost).

    Args:
        stop: the event behind ``request.should_stop``: set at ``deadline`` (``time.monotonic()``
            seconds) or when the client disconnects, and the thread ends before its next gap.
        max_gap_letters: the longest gap a request may state (the cost of an open gap).

    Raises:
        ApiError: 503 ``H009``/``H017`` (:meth:`Gate.enter`), ``H014`` when the deadline passes.
    """
    release = await gate.enter(deadline - time.monotonic(), work_units(request, max_gap_letters))
    try:
        work = asyncio.ensure_future(run_in_threadpool(restore_text, restorer, request))
    except BaseException:
        release(False)
        raise
    work.add_done_callback(lambda w: release(_completed(w)))  # the slot is free once the thread has stopped
    result = await _wait(work, stop, deadline, http)
    if result is None:
        raise gate.busy("H014")
    return result


async def _wait(work: asyncio.Future, stop: threading.Event, deadline: float, http: Request) -> Any:
    """The result of ``work`` (a restoration in a worker thread), or ``None`` at ``deadline`` or
    when the client disconnects: then ``stop`` (the request's ``should_stop``) is set, and the
    thread ends before its next gap, on its own time, not the client's."""
    while True:
        left = deadline - time.monotonic()
        done, _ = await asyncio.wait({work}, timeout=max(0.0, min(_POLL_S, left)))
        if done:
            break
        if left <= _POLL_S or await http.is_disconnected():
            stop.set()
            work.add_done_callback(_consume)
            return None
    try:
        return work.result()
    except RestoreStopped:
        return None


def _completed(work: asyncio.Future) -> bool:
    """Whether a restoration's work ran to its end (only then is its time a measure of its cost)."""
    return not work.cancelled() and work.exception() is None


def _consume(work: asyncio.Future) -> None:
    """Retrieve the outcome of abandoned work, so that nothing is logged as never retrieved."""
    if not work.cancelled():
        work.exception()
