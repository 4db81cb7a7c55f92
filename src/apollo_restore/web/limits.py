"""What one request may ask of the server, and how many restorations run at once.

:class:`Limits` holds the numbers; :class:`BodyLimit` refuses an oversized body with 413 before
anything parses it; :class:`Gate` lets ``max_concurrent`` restorations run, queues up to
``max_queued`` more for at most ``queue_timeout_s`` seconds, and answers 503 beyond that.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any, AsyncIterator

from apollo_restore.data.readers.leiden import GapMarker
from apollo_restore.web.errors import ApiError, WebErrors, error_body

EPIDOC_PATH = "/api/epidoc"
_BRACKETS = frozenset("[]{}()<>⟦⟧⟨⟩〈〉\\/|")


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
        queue_timeout_s: longest wait for a slot before 503 (seconds).
    """

    max_body_bytes: int = 64 * 1024
    max_upload_bytes: int = 512 * 1024
    max_text_chars: int = 10_000
    max_gaps: int = 20
    max_gap_letters: int = 50
    max_k: int = 50
    max_pin_chars: int = 200
    max_concurrent: int = 2
    max_queued: int = 64
    queue_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def check_text(self, text: str) -> None:
        """Raises ApiError (422 W003): the text is too long."""
        if len(text) > self.max_text_chars:
            raise ApiError.of(422, "W003", n=len(text), limit=self.max_text_chars)

    def check_gaps(self, gaps: list[GapMarker], overridden: set[int] = frozenset()) -> None:
        """Raises ApiError (422): too many gaps, or a gap of the text states too many letters
        (unless the request overrides that gap's hint)."""
        if len(gaps) > self.max_gaps:
            raise ApiError.of(422, "W004", n=len(gaps), limit=self.max_gaps)
        for i, gap in enumerate(gaps):
            top = gap.hint[1] if isinstance(gap.hint, tuple) else gap.hint
            if i not in overridden and top is not None and top > self.max_gap_letters:
                e = ApiError.of(422, "W005", gap=i + 1, n=top, limit=self.max_gap_letters)
                e.extra["position"] = gap.start
                raise e

    def check_k(self, k: int) -> None:
        if k > self.max_k:
            raise ApiError.of(422, "W006", k=k, limit=self.max_k)


class BodyLimit:
    """ASGI middleware: refuse bodies over the limit with 413 before any parsing.

    A declared ``Content-Length`` over the limit is refused without reading; otherwise the body
    is read up to the limit (chunked uploads included) and replayed to the app.
    """

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
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
        while True:
            message = await receive()
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
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class Gate:
    """At most ``max_concurrent`` holders at once; a bounded, time-limited queue before 503."""

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

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one restoration slot.

        Raises:
            ApiError: 503 ``W009`` when the queue is full or the wait times out.
        """
        sem = self._sem()
        if not sem.locked():
            await sem.acquire()  # a free slot: taken at once, without yielding to the loop
        elif self.waiting >= self.limits.max_queued:
            raise ApiError.of(503, "W009")
        else:
            self.waiting += 1
            try:
                await asyncio.wait_for(sem.acquire(), self.limits.queue_timeout_s)
            except asyncio.TimeoutError:
                raise ApiError.of(503, "W009") from None
            finally:
                self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            sem.release()


def checked_restore_args(limits: Limits, text: str, hints: dict[int, Any], pins: dict[int, str], k: int) -> tuple[dict, dict]:
    """Validate a restore request against ``limits`` before the model runs.

    Returns:
        ``(hints, pins)`` in the engine's types (hints as ``None | int | (lo, hi)``).

    Raises:
        ApiError: 422 for a text, gap count, hint, reading or ``k`` beyond the limits.
        LeidenError: the text is not well-formed Leiden.
    """
    from apollo_restore.data.formats import parse_hint
    from apollo_restore.data.readers.leiden import find_gaps

    limits.check_text(text)
    limits.check_k(k)
    gaps = find_gaps(text)
    limits.check_gaps(gaps, overridden=set(hints))
    parsed: dict[int, Any] = {}
    for i, value in hints.items():
        if not 0 <= i < len(gaps):
            raise ApiError.of(422, "W007", gap=i + 1, reason=f"the text has {len(gaps)} gaps")
        try:
            parsed[i] = parse_hint(value)
        except ValueError as err:
            raise ApiError.of(422, "W007", gap=i + 1, reason=str(err)) from None
        top = parsed[i][1] if isinstance(parsed[i], tuple) else parsed[i]
        if top is not None and top > limits.max_gap_letters:
            raise ApiError.of(422, "W005", gap=i + 1, n=top, limit=limits.max_gap_letters)
    check_readings(limits, pins, len(gaps))
    return parsed, dict(pins)


def check_readings(limits: Limits, readings: dict[int, str], n_gaps: int) -> None:
    """Raises ApiError (422 W008): a reading for a gap that does not exist, empty or too long."""
    for i, reading in readings.items():
        if not 0 <= i < n_gaps:
            raise ApiError.of(422, "W008", gap=i + 1, reason=f"the text has {n_gaps} gaps")
        if not reading.strip():
            raise ApiError.of(422, "W008", gap=i + 1, reason="empty reading")
        if len(reading) > limits.max_pin_chars:
            raise ApiError.of(422, "W008", gap=i + 1, reason=f"longer than {limits.max_pin_chars} characters")
        if any(ch in _BRACKETS for ch in reading):
            raise ApiError.of(422, "W008", gap=i + 1, reason="a reading may not contain Leiden brackets")
