"""What one request may ask of the server, how long it may take, and how many run at once.

:class:`~apollo_restore.schema.limits.Limits` holds the numbers (declared in the schema; its
``request`` the :class:`~apollo_restore.schema.limits.RequestLimits` every restoration is validated against);
:class:`BodyLimit` refuses an oversized body with 413 before anything parses it, and a body
not received within ``read_timeout_s`` with 408; :class:`Gate` lets ``max_concurrent``
restorations run and queues up to ``max_queued`` more, answering 503 with ``Retry-After`` when
the queue is full, when a request's time is up, and — at once, before it waits — when the work
queued before it and its own would not end within its time limit, as :class:`CostModel`
estimates them from the restorations it has measured.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.request import CheckedRequest, validate
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.schema.limits import Limits
from apollo_restore.schema.restoration import EXAMPLE, RestoreRequest
from apollo_restore.web.errors import ApiError, error_body, web_message

EPIDOC_PATH = "/api/epidoc"
#: Scope key holding when the request reached the app (``time.monotonic()``).
ARRIVED = "apollo_restore.arrived"


class BodyLimit:
    """ASGI middleware: refuse bodies over the limit with 413 before any parsing.

    A declared ``Content-Length`` over the limit is refused without reading; otherwise the body
    is read up to the limit (chunked uploads included), within ``read_timeout_s`` (else 408),
    and replayed to the app.
    """

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope[ARRIVED] = time.monotonic()  # a request's time limit counts from here
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limits.max_upload_bytes if scope["path"] == EPIDOC_PATH else self.limits.max_body_bytes
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                await _send_json(send, 400, error_body("H012", "bad Content-Length header"))
                return
            if too_big:
                await _send_json(send, 413, error_body("H001", _too_large(limit)))
                return
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.limits.read_timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except TimeoutError:
                await _send_json(send, 408, error_body("H015", web_message("H015", seconds=self.limits.read_timeout_s)))
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _send_json(send, 413, error_body("H001", _too_large(limit)))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int) -> str:
    return web_message("H001", limit=limit)


async def _send_json(send: Any, status: int, body: dict) -> None:
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


#: Letters of a gap's search that cost as much as the gap itself (its prompt, its candidates):
#: one gap of the shipped model takes ≈ 1.5 s + 0.075 s per letter of its hint (one torch thread,
#: a busy 2-core machine; 1.5 s for [.1], 2.2 s for [.20], 5.3 s for [.50]).
LETTERS_PER_UNIT = 20


def work_units(request: CheckedRequest, no_hint_letters: int) -> float:
    """The work of a validated restoration, in units of :class:`CostModel`: per gap searched (one
    asked and not pinned), one unit and one more per :data:`LETTERS_PER_UNIT` letters its hint
    allows (``no_hint_letters`` for a gap without a hint)."""
    return sum(
        1.0 + request.hints[gap].letters(no_hint_letters)[1] / LETTERS_PER_UNIT
        for gap in request.only
        if gap not in request.pins
    )


class CostModel:
    """Seconds one restoration slot spends per unit of work (:func:`work_units`), measured.

    Each restoration that ran to its end adds its seconds per unit, from taking its slot to
    its last gap (so the slowdown of restorations running side by side is in it), to an
    exponentially weighted mean (the newest weighs :attr:`WEIGHT`). ``None`` until the first
    is measured.
    """

    WEIGHT = 0.2

    def __init__(self, seconds_per_unit: float | None = None) -> None:
        self.seconds_per_unit = seconds_per_unit

    def observe(self, units: float, seconds: float) -> None:
        """Add one restoration of ``units`` that took ``seconds`` in its slot."""
        if units <= 0:
            return
        rate = seconds / units
        old = self.seconds_per_unit
        self.seconds_per_unit = rate if old is None else (1 - self.WEIGHT) * old + self.WEIGHT * rate


class Gate:
    """At most ``max_concurrent`` holders at once; a bounded queue before 503; admission by cost.

    A request is refused at once (503 with ``Retry-After``) when ``max_queued`` requests are
    already waiting (``H009``), or when the estimated wait (the work running and queued before
    it, shared by the slots) plus its own work would pass its time limit (``H017``); until
    :attr:`cost` has measured a restoration, at most ``max_concurrent`` may wait. Once admitted,
    it waits for a slot until its own deadline (``H014`` if that passes).
    """

    #: The estimate is a mean; admission leaves this share of head room (1.2 let 3 of 13 admitted
    #: requests of tests/web/test_admission.py reach their deadline on a loaded machine).
    SAFETY = 1.5
    #: The least work a request can ask (one gap of one letter): what :meth:`admit` checks
    #: before the request is parsed, so that a full server refuses without parsing it.
    LEAST_UNITS = 1.0 + 1 / LETTERS_PER_UNIT

    def __init__(self, limits: Limits, cost: CostModel | None = None) -> None:
        self.limits = limits
        self.cost = cost or CostModel()
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.waiting = 0
        self.running = 0
        self._tickets = itertools.count()
        self._queued: dict[int, float] = {}  # ticket → units, requests waiting for a slot
        self._started: dict[int, tuple[float, float]] = {}  # ticket → (slot taken, units)

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:  # one semaphore per event loop
            self._semaphore, self._loop = asyncio.Semaphore(self.limits.max_concurrent), loop
        return self._semaphore

    def busy(self, code: str = "H009", retry_after_s: int | None = None, **fields: Any) -> ApiError:
        """503 with ``Retry-After`` (default: the limits' ``retry_after_s``)."""
        err = ApiError.of(503, code, seconds=self.limits.request_timeout_s, **fields)
        err.headers["Retry-After"] = str(retry_after_s or self.limits.retry_after_s)
        return err

    def estimate(self, units: float, slot_free: bool) -> tuple[float, float] | None:
        """``(wait, own)``: estimated seconds before a request of ``units`` gets a slot, and in
        it; ``None`` before any restoration was measured."""
        rate = self.cost.seconds_per_unit
        if rate is None:
            return None
        if slot_free:
            return 0.0, units * rate
        now = time.monotonic()
        running = sum(max(0.0, u * rate - (now - taken)) for taken, u in self._started.values())
        return (running + sum(self._queued.values()) * rate) / self.limits.max_concurrent, units * rate

    def admit(self, timeout: float, units: float = LEAST_UNITS, slot_free: bool | None = None) -> None:
        """Refuse at once a request that would not end within ``timeout`` seconds (``units``:
        its work; by default the least a request can ask; ``slot_free``: whether it would take
        a slot at once, by default whether one is free now).

        Raises:
            ApiError: 503 ``H017`` with ``Retry-After`` (about when the work before it will
                have drained enough), or ``H009`` when the cost is not measured yet and
                ``max_concurrent`` requests already wait.
        """
        if slot_free is None:
            slot_free = not self._sem().locked()
        estimate = self.estimate(units, slot_free)
        if estimate is None:
            if not slot_free and self.waiting >= self.limits.max_concurrent:
                raise self.busy()
            return
        wait, own = estimate
        late = self.SAFETY * (wait + own) - timeout
        if late > 0:
            retry = min(math.ceil(late), math.ceil(self.limits.request_timeout_s))
            raise self.busy("H017", max(1, retry), wait=wait, own=own)

    async def enter(self, timeout: float, units: float) -> Callable[[bool], None]:
        """Take one restoration slot for work of ``units`` (:func:`work_units`), waiting at most
        ``timeout`` seconds for it; returns the function that gives it back (call it once the
        work has really ended, with whether it ran to its end: then its time is measured).

        Raises:
            ApiError: 503 ``H009`` when the queue is full, ``H017`` when the request would not
                end within ``timeout`` (:meth:`admit`), ``H014`` when the wait outlasts it;
                all with ``Retry-After``.
        """
        sem = self._sem()
        ticket = next(self._tickets)
        if not sem.locked():
            self.admit(timeout, units, slot_free=True)
            await sem.acquire()  # a free slot: taken at once, without yielding to the loop
        elif self.waiting >= self.limits.max_queued:
            raise self.busy()
        else:
            self.admit(timeout, units, slot_free=False)
            self.waiting += 1
            self._queued[ticket] = units
            try:
                await asyncio.wait_for(sem.acquire(), max(0.0, timeout))
            except TimeoutError:
                raise self.busy("H014") from None
            finally:
                self.waiting -= 1
                del self._queued[ticket]
        self.running += 1
        self._started[ticket] = (time.monotonic(), units)

        def release(completed: bool = False) -> None:
            taken, _ = self._started.pop(ticket, (None, units))
            if taken is None:
                return
            if completed:
                self.cost.observe(units, time.monotonic() - taken)
            self.running -= 1
            sem.release()

        return release


def measure_cost(gate: Gate, restorer: Restorer) -> float:
    """Restore the API's example text in every restoration slot at once with ``restorer``, as
    requests would run side by side, and give each one's time to ``gate``'s cost model (so that
    admission works from the first request, with the slots' slowdown of each other in it);
    returns the slowest one's seconds. Run it before serving.
    """
    request = validate(RestoreRequest(EXAMPLE), gate.limits.request)
    units = work_units(request, gate.limits.request.max_gap_letters)

    def timed(_: int) -> float:
        started = time.monotonic()
        restore_text(restorer, request)
        return time.monotonic() - started

    with ThreadPoolExecutor(gate.limits.max_concurrent) as pool:
        seconds = list(pool.map(timed, range(gate.limits.max_concurrent)))
    for one in seconds:
        gate.cost.observe(units, one)
    return max(seconds)
