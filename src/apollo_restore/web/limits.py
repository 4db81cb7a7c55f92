"""What one request may ask of the server, how long it may take, and how many run at once.

:class:`Limits` holds the numbers (its :attr:`~Limits.request` the core
:class:`~apollo_restore.restore.request.RequestLimits` every restoration is validated against);
:class:`BodyLimit` refuses an oversized body with 413 before anything parses it, and a body
not received within ``read_timeout_s`` with 408; :class:`Gate` lets ``max_concurrent``
restorations run and queues up to ``max_queued`` more, answering 503 with ``Retry-After`` only
when the queue is full or a request's time is up.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from apollo_restore.restore.request import WEB_LIMITS, RequestLimits
from apollo_restore.web.errors import ApiError, WebErrors, error_body

EPIDOC_PATH = "/api/epidoc"
#: Scope key holding when the request reached the app (``time.monotonic()``).
ARRIVED = "apollo_restore.arrived"


@dataclass(frozen=True)
class Limits:
    """Per-request and per-server limits of the web app.

    Attributes:
        max_body_bytes: largest JSON request body (bytes); larger ones get 413 unread.
        max_upload_bytes: largest EpiDoc upload (bytes, multipart body included).
        max_text_chars: longest Leiden text restored in one request (characters).
        max_gaps: most gaps restored in one request.
        max_gap_letters: longest gap a hint (in the text or in the request) may state (letters).
        max_k: most candidates per gap.
        max_pin_chars: longest pinned or exported reading (characters).
        max_concurrent: restorations running at once (each in a worker thread).
        max_queued: requests that may wait for a free slot; more get 503 at once.
        request_timeout_s: longest time a restoration request may take, waiting included
            (seconds); past it the work stops between gaps and the answer is 503.
        read_timeout_s: longest time to receive a request body (seconds); then 408.
        retry_after_s: the ``Retry-After`` of a 503 (seconds).
    """

    max_body_bytes: int = 64 * 1024
    max_upload_bytes: int = 512 * 1024
    max_text_chars: int = WEB_LIMITS.max_text_chars
    max_gaps: int = WEB_LIMITS.max_gaps
    max_gap_letters: int = WEB_LIMITS.max_gap_letters
    max_k: int = WEB_LIMITS.max_k
    max_pin_chars: int = WEB_LIMITS.max_pin_chars
    max_concurrent: int = 2
    max_queued: int = 256
    request_timeout_s: float = 60.0
    read_timeout_s: float = 10.0
    retry_after_s: int = 5

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def deadline(self, arrived: float) -> float:
        """When a request that arrived at ``arrived`` must be answered by: the time limit less
        a margin (a tenth of it, at most 2 s) for the answer itself on a busy server."""
        return arrived + self.request_timeout_s - min(2.0, 0.1 * self.request_timeout_s)

    @property
    def request(self) -> RequestLimits:
        """The core limits every restoration request is validated against."""
        return replace(
            WEB_LIMITS,
            max_text_chars=self.max_text_chars,
            max_gaps=self.max_gaps,
            max_gap_letters=self.max_gap_letters,
            max_k=self.max_k,
            max_pin_chars=self.max_pin_chars,
        )


#: The server's limits when ``serve`` is given none.
DEFAULT_SERVER_LIMITS = Limits()


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
                await _send_json(send, 400, error_body("W012", "bad Content-Length header"))
                return
            if too_big:
                await _send_json(send, 413, error_body("W001", _too_large(limit)))
                return
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.limits.read_timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except TimeoutError:
                await _send_json(
                    send, 408, error_body("W015", WebErrors.W015.format(seconds=self.limits.read_timeout_s))
                )
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _send_json(send, 413, error_body("W001", _too_large(limit)))
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
    return WebErrors.W001.format(limit=limit)


async def _send_json(send: Any, status: int, body: dict) -> None:
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class Gate:
    """At most ``max_concurrent`` holders at once; a bounded queue before 503.

    A request waits for a slot until its own deadline; it is refused at once (503 with
    ``Retry-After``) only when ``max_queued`` requests are already waiting.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.waiting = 0
        self.running = 0

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:  # one semaphore per event loop
            self._semaphore, self._loop = asyncio.Semaphore(self.limits.max_concurrent), loop
        return self._semaphore

    def busy(self, code: str = "W009") -> ApiError:
        """503 with ``Retry-After``."""
        err = ApiError.of(503, code, seconds=self.limits.request_timeout_s)
        err.headers["Retry-After"] = str(self.limits.retry_after_s)
        return err

    async def enter(self, timeout: float) -> Callable[[], None]:
        """Take one restoration slot, waiting at most ``timeout`` seconds for it; returns the
        function that gives it back (call it once the work has really ended).

        Raises:
            ApiError: 503 ``W009`` when the queue is full, ``W014`` when the wait outlasts
                ``timeout``; both with ``Retry-After``.
        """
        sem = self._sem()
        if not sem.locked():
            await sem.acquire()  # a free slot: taken at once, without yielding to the loop
        elif self.waiting >= self.limits.max_queued:
            raise self.busy()
        else:
            self.waiting += 1
            try:
                await asyncio.wait_for(sem.acquire(), max(0.0, timeout))
            except TimeoutError:
                raise self.busy("W014") from None
            finally:
                self.waiting -= 1
        self.running += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.running -= 1
                sem.release()

        return release
