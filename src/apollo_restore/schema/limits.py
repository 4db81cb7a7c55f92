"""What one request may ask, and what one server allows: declared once, checked when made.

    from apollo_restore.schema.limits import RequestLimits, Limits, WEB_LIMITS
    strict = RequestLimits(max_text_chars=20_000)        # a refused value: a ValidationError naming it
    Limits(max_concurrent=4, request_timeout_s=30.0)     # the web server's, with WEB_LIMITS per request

:class:`RequestLimits` is what every restoration request is validated against
(:mod:`apollo_restore.restoration.request`): the CLI's and the Python API's defaults
(:data:`DEFAULT_REQUEST_LIMITS`), the web server's stricter ones (:data:`WEB_LIMITS`).
:class:`Limits` adds the server's own (body sizes, slots, the time limit; :mod:`apollo_restore.web.limits`
enforces them). ``/api/health`` shows both (:meth:`Limits.to_dict`).
"""

from __future__ import annotations

from typing import Any

from apollo_restore.schema.base import Settings, number, whole

#: Most of any count a limit may allow (characters, gaps, letters, bytes): far above any real
#: text, low enough that no arithmetic on it overflows.
MOST = 10**9


class RequestLimits(Settings):
    """What one restoration request may ask (defaults: the CLI and the Python API)."""

    max_text_chars: whole(1, MOST, "longest text restored at once (characters)") = 1_000_000
    max_gaps: whole(1, MOST, "most gaps in one text") = 5_000
    max_gap_letters: whole(1, MOST, "most letters a gap may state, in the text or in a hint") = 200
    max_k: whole(1, MOST, "most candidates per gap") = 200
    max_pin_chars: whole(1, MOST, "longest pinned reading (characters)") = 500
    min_greek_letters: whole(0, MOST, "fewest Greek letters the context must hold") = 5
    max_foreign_share: number(0, 1, "largest share of non-Greek letters (above: refused)") = 0.5
    warn_foreign_share: number(0, 1, "share of non-Greek letters from which a warning is given") = 0.05

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


#: The CLI's and the Python API's limits (the defaults).
DEFAULT_REQUEST_LIMITS = RequestLimits()

#: The HTTP server's limits: a public service answers many users on a small machine.
WEB_LIMITS = RequestLimits(max_text_chars=10_000, max_gaps=20, max_gap_letters=50, max_k=50, max_pin_chars=200)


class Limits(Settings):
    """Per-request and per-server limits of the web app.

    Attributes:
        request: what one request may ask (:class:`RequestLimits`; default :data:`WEB_LIMITS`).
        max_body_bytes: largest JSON request body (bytes); larger ones get 413 unread.
        max_upload_bytes: largest EpiDoc upload (bytes, multipart body included).
        max_concurrent: restorations running at once (each in a worker thread).
        max_queued: requests that may wait for a free slot; more get 503 at once.
        request_timeout_s: longest time a restoration request may take, waiting included
            (seconds); past it the work stops between gaps and the answer is 503.
        read_timeout_s: longest time to receive a request body (seconds); then 408.
        retry_after_s: the ``Retry-After`` of a 503 (seconds).
    """

    request: RequestLimits = WEB_LIMITS
    max_body_bytes: whole(1, MOST, "largest JSON request body (bytes)") = 64 * 1024
    max_upload_bytes: whole(1, MOST, "largest EpiDoc upload (bytes)") = 512 * 1024
    max_concurrent: whole(1, 1024, "restorations running at once") = 2
    max_queued: whole(1, MOST, "requests that may wait for a slot") = 256
    request_timeout_s: number(0, 86_400, "longest time a restoration request may take (seconds)", above=True) = 60.0
    read_timeout_s: number(0, 86_400, "longest time to receive a request body (seconds)", above=True) = 10.0
    retry_after_s: whole(1, 86_400, "the Retry-After of a 503 (seconds)") = 5

    def to_dict(self) -> dict[str, Any]:
        """The limits as ``/api/health`` gives them: the server's and the request's, in one object."""
        own = self.model_dump(exclude={"request"})
        return {**own, **self.request.to_dict()}

    def deadline(self, arrived: float) -> float:
        """When a request that arrived at ``arrived`` must be answered by: the time limit less
        a margin (a tenth of it, at most 2 s) for the answer itself on a busy server."""
        return arrived + self.request_timeout_s - min(2.0, 0.1 * self.request_timeout_s)


#: The server's limits when ``serve`` is given none.
DEFAULT_SERVER_LIMITS = Limits()
