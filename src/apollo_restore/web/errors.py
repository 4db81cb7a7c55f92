"""JSON errors of the HTTP API: one shape, numbered codes, nothing that names a server path.

Every error response is ``{"error": {"code", "message", ...}}``. Leiden, request and corpus
errors keep their package codes (``E0xx``, ``E3xx``, ``E101``, see :mod:`apollo_restore.errors`) and add
``position``/``line``/``column`` where known; errors of the web layer use the ``W`` codes
below. Messages pass through :func:`scrub` so that no file path of the server can reach a
client, whatever an underlying library puts in its exception text.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from apollo_restore.errors import AttributionError, CorpusError, LeidenError, RequestError

log = logging.getLogger(__name__)


class WebErrors:
    """Message templates of the web layer; format them with keyword arguments."""

    W001 = "request body larger than {limit} bytes; send a shorter text (or a smaller file)"
    W002 = "invalid request: {details}"
    W008 = "reading for gap {gap}: {reason}"
    W009 = "the server is busy restoring other texts (its queue is full); try again in a few seconds"
    W010 = (
        "no text index is loaded on this server: parallel passages and provenance need one "
        "(apollo-restore serve loads the packaged one, or --index DIR)"
    )
    W011 = "uploaded file: {reason}"
    W012 = "{reason}"
    W013 = "parallels request: {reason}"
    W014 = (
        "the restoration took longer than this server's limit of {seconds:g} s (it is busy, or the text is long); "
        "try again later, or restore fewer gaps at a time"
    )
    W015 = "request body not received within {seconds:g} s"
    W016 = "provenance request: {reason}"
    W017 = (
        "the server cannot finish this restoration within its limit of {seconds:g} s: about {wait:.0f} s of "
        "work is queued before it and it needs about {own:.0f} s; try again later, or restore fewer gaps at a time"
    )
    W500 = "internal error; the server log has the details"


class ApiError(Exception):
    """An error answered as JSON with ``status`` and ``{"error": {"code", "message", **extra}}``."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra
        self.headers: dict[str, str] = {}

    @classmethod
    def of(cls, status: int, code: str, **fields: Any) -> ApiError:
        """Build from a :class:`WebErrors` template: ``ApiError.of(422, "W003", n=.., limit=..)``."""
        return cls(status, code, getattr(WebErrors, code).format(**fields))


# Absolute POSIX paths of two or more components, Windows drive paths, file URLs.
_PATHS = re.compile(r"(?:file://)?(?:[A-Za-z]:\\[^\s'\"]*|(?<![\w.])/(?:[\w.\-]+/)+[\w.\-]*)")
_CODE = re.compile(r"^\[([EW]\d{3})\]\s*")


def scrub(message: str) -> str:
    """``message`` with anything that looks like a file path replaced by ``<path>``."""
    return _PATHS.sub("<path>", message)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The JSON body of an error response."""
    return {"error": {"code": code, "message": scrub(message), **extra}}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(error_body(code, message, **extra), status_code=status, headers=headers)


def leiden_error(err: LeidenError) -> ApiError:
    """A malformed Leiden text → 422 with the package code and the place of the problem."""
    text = str(err)
    m = _CODE.match(text)
    return ApiError(
        422,
        m.group(1) if m else "E000",
        text[m.end() :] if m else text,
        position=err.position,
        line=err.line,
        column=err.column,
    )


def request_error(err: RequestError) -> ApiError:
    """A request the core refuses (``E3xx``) → 422 with its code, and the gap and offset
    concerned where known; the model's own failure (``E317``: probabilities that are not finite)
    → 500, the server's fault, never a reading shown with ``prob: null``."""
    text = str(err)
    m = _CODE.match(text)
    extra = {k: v for k, v in (("gap", err.gap), ("position", err.position)) if isinstance(v, int)}
    return ApiError(500 if err.code == "E317" else 422, err.code, text[m.end() :] if m else text, **extra)


def corpus_error(err: CorpusError) -> ApiError:
    """An unreadable EpiDoc upload → 422 ``E101`` (the file name shown is the upload's own)."""
    return ApiError(422, "E101", WebErrors.W011.format(reason=err.reason))


def install_handlers(app: FastAPI) -> None:
    """Answer every error, expected or not, in the one JSON shape."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, err: ApiError) -> JSONResponse:
        return error_response(err.status, err.code, err.message, err.headers or None, **err.extra)

    @app.exception_handler(RequestError)
    async def _request(_: Request, err: RequestError) -> JSONResponse:
        e = request_error(err)
        return error_response(e.status, e.code, e.message, **e.extra)

    @app.exception_handler(LeidenError)
    async def _leiden(_: Request, err: LeidenError) -> JSONResponse:
        e = leiden_error(err)
        return error_response(e.status, e.code, e.message, **e.extra)

    @app.exception_handler(AttributionError)
    async def _attribution(_: Request, err: AttributionError) -> JSONResponse:
        text = str(err)  # E801 (too short) is the request's fault; E802 (no model) the server's
        m = _CODE.match(text)
        return error_response(503 if err.code == "E802" else 422, err.code, text[m.end() :] if m else text)

    @app.exception_handler(CorpusError)
    async def _corpus(_: Request, err: CorpusError) -> JSONResponse:
        e = corpus_error(err)
        return error_response(e.status, e.code, e.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, err: RequestValidationError) -> JSONResponse:
        fields = [
            {"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "message": str(e.get("msg", ""))}
            for e in err.errors()
        ]
        details = "; ".join(f"{f['field'] or 'body'}: {f['message']}" for f in fields) or "malformed body"
        return error_response(422, "W002", WebErrors.W002.format(details=details), fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, err: StarletteHTTPException) -> JSONResponse:
        reason = err.detail if isinstance(err.detail, str) else "request refused"
        return error_response(err.status_code, "W012", WebErrors.W012.format(reason=reason))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, err: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "W500", WebErrors.W500)
