"""JSON errors of the HTTP API: one shape, numbered codes, nothing that names a server path.

Every error response is ``{"error": {"code", "message", ...}}``. Leiden, request and corpus
errors keep their package codes (``E0xx``, ``E3xx``, ``E101``) and add ``position``/``line``/``column``
where known; the web layer's own answers use the ``H`` codes of the same catalogue
(:class:`~apollo_restore.errors.Errors`). Messages pass through :func:`scrub` so that no file
path of the server can reach a client, whatever an underlying library puts in its exception text.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from apollo_restore.errors import (
    AttributionError,
    CorpusError,
    Errors,
    FileError,
    LeidenError,
    ModelFolderError,
    RequestError,
)

log = logging.getLogger(__name__)


def web_message(code: str, **fields: Any) -> str:
    """The message of a web code (``H001``...) from :class:`~apollo_restore.errors.Errors`, without its
    ``[H001]`` prefix (the code travels in the JSON beside it)."""
    return _CODE.sub("", getattr(Errors, code).format(**fields), count=1)


class ApiError(Exception):
    """An error answered as JSON with ``status`` and ``{"error": {"code", "message", **extra}}``."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra
        self.headers: dict[str, str] = {}

    @classmethod
    def of(cls, status: int, code: str, **fields: Any) -> ApiError:
        """Build from a catalogue template: ``ApiError.of(503, "H010")``."""
        return cls(status, code, web_message(code, **fields))


# Absolute POSIX paths of two or more components, Windows drive paths, file URLs.
_PATHS = re.compile(r"(?:file://)?(?:[A-Za-z]:\\[^\s'\"]*|(?<![\w.])/(?:[\w.\-]+/)+[\w.\-]*)")
_CODE = re.compile(r"^\[([EHW]\d{3})\]\s*")


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
    return ApiError(422, "E101", web_message("H011", reason=err.reason))


def _folder_message(err: ModelFolderError | FileError) -> str:
    """A damaged model folder's message (``E5xx``, ``E220``), without its code: the server's
    fault (503), loaded when first asked (the attribution folder); its paths are scrubbed."""
    text = str(err)
    m = _CODE.match(text)
    return text[m.end() :] if m else text


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
        text = str(err)  # E801 (too short) is the request's fault; E802 (no model), E803 (it overflows) the server's
        m = _CODE.match(text)
        return error_response(422 if err.code == "E801" else 503, err.code, text[m.end() :] if m else text)

    @app.exception_handler(ModelFolderError)
    async def _folder(_: Request, err: ModelFolderError) -> JSONResponse:
        return error_response(503, err.code, _folder_message(err))

    @app.exception_handler(FileError)
    async def _file(_: Request, err: FileError) -> JSONResponse:
        return error_response(503, err.code, _folder_message(err))

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
        return error_response(422, "H002", web_message("H002", details=details), fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, err: StarletteHTTPException) -> JSONResponse:
        reason = err.detail if isinstance(err.detail, str) else "request refused"
        return error_response(err.status_code, "H012", web_message("H012", reason=reason))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, err: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "H500", web_message("H500"))
