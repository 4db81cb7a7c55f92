"""HTTP API and web page: routes only (no logic of their own). Each route parses its request, calls the
restorer (or the parallels index, or the exporter) and returns a JSON-ready result.

    apollo-restore serve --model runs/small --port 8000     # then open http://127.0.0.1:8000/

    from apollo_restore.web.app import create_app
    app = create_app(load_restorer(), parallels=None)       # any ASGI server, or TestClient (restoration.load)

Endpoints (documented at ``/docs``, from packaged assets, and ``/openapi.json``):
``POST /api/restore``, ``POST /api/parallels``, ``POST /api/provenance``, ``POST /api/attribute``, ``POST /api/epidoc``,
``POST /api/export``, ``GET /api/health``, ``GET /`` (the page), ``/static/*`` (its script, style and icon) and
``/favicon.ico``.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, File, Request, UploadFile
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.middleware.trustedhost import TrustedHostMiddleware

from apollo_restore.attribution.attribute import attribute as attribute_text
from apollo_restore.data.document import Lacuna, to_leiden
from apollo_restore.data.readers.typed import read_epidoc
from apollo_restore.errors import RequestError, RestoreStopped
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.export import Alternative, MachineReading, export_checked
from apollo_restore.restoration.presentation.labels import model_label
from apollo_restore.restoration.request import RestoreRequest, check_k, check_text
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.web import schemas as s
from apollo_restore.web.errors import ApiError, install_handlers
from apollo_restore.web.limits import ARRIVED, DEFAULT_SERVER_LIMITS, BodyLimit, Gate, Limits, work_units

STATIC = Path(__file__).resolve().parent / "static"
_ERRORS = {code: {"model": s.ErrorOut} for code in (413, 422, 503)}
_SAFE_NAME = re.compile(r"[^\w.\-]+")
_POLL_S = 0.25  # how often a running restoration checks its client and its deadline


class ParallelsProvider(Protocol):
    """What the web app needs from the text index (:mod:`apollo_restore.retrieve`)."""

    def parallels(self, request: RestoreRequest, gap: int, k: int) -> dict[str, Any]: ...

    def provenance(self, text: str, min_run: int) -> dict[str, Any]: ...


#: Host names a server on loopback answers to (``testserver``: Starlette's test client).
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1", "testserver")


def create_app(
    restorer: Restorer,
    parallels: ParallelsProvider | None = None,
    limits: Limits = DEFAULT_SERVER_LIMITS,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
) -> FastAPI:
    """The FastAPI app serving ``restorer`` (and ``parallels`` when an index is loaded).

    Args:
        restorer: a loaded restorer (:func:`~apollo_restore.restoration.load.load_restorer`); it runs
            in worker threads.
        parallels: an object with ``parallels(request, gap, k) -> dict`` and
            ``provenance(text, min_run) -> dict`` (:class:`~apollo_restore.web.parallels.IndexParallels`), or ``None``
            (then ``/api/parallels`` answers 503 and the page says no index is loaded).
        limits: request, time and concurrency limits.
        allowed_hosts: ``Host`` headers answered (others get 400: no DNS rebinding);
            ``"*"`` allows any.
    """
    app = FastAPI(
        title="apollo-restore",
        version="1",
        description=(
            "Restore lacunae in Ancient Greek texts. Machine-proposed readings are proposals, "
            'not the editor\'s: exports mark them as such. Errors: `{"error": {"code", "message", ...}}`.'
        ),
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limits=limits)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    install_handlers(app)
    gate = Gate(limits)
    app.state.gate = gate
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _mount_docs(app)

    # HEAD too: uptime monitors and `curl -I` ask it (FastAPI answers GET alone otherwise: 405)
    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        """The page's icon, also where browsers look without a ``<link rel="icon">`` (no 404)."""
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/health", response_model=s.HealthOut, tags=["service"])
    async def health() -> dict:
        """Model name, whether parallels are available, the limits of this server and its load."""
        return {
            "status": "ok",
            "model": restorer.name,
            "model_label": model_label(restorer.name),
            "parallels": parallels is not None,
            "limits": limits.to_dict(),
            "running": gate.running,
            "waiting": gate.waiting,
            "seconds_per_unit": gate.cost.seconds_per_unit,
        }

    # HEAD as a route of its own, out of the schema: one route for both gives OpenAPI two
    # operations of one id
    app.add_api_route("/api/health", health, methods=["HEAD"], include_in_schema=False)

    @app.post("/api/restore", response_model=s.RestorationOut, responses=_ERRORS, tags=["restore"])
    async def restore(req: s.RestoreRequest, http: Request) -> dict:
        """Ranked candidates for every gap of a Leiden text (or those asked, `only`), filled left to
        right; pinned gaps keep the given reading and the gaps after them are restored with it in place.
        Answers 503 with ``Retry-After`` when the queue is full, when the work queued before it
        and its own would pass the time limit (at once), or when the time limit is reached."""
        deadline = limits.deadline(http.scope.get(ARRIVED, time.monotonic()))
        gate.admit(deadline - time.monotonic())  # a full server refuses before parsing the text
        stop = threading.Event()
        request = RestoreRequest(
            req.text, req.hints, req.pins, req.k, stop.is_set, only=req.only, fills=req.fills
        ).validate(limits.request)
        release = await gate.enter(deadline - time.monotonic(), work_units(request, limits.request.max_gap_letters))
        try:
            work = asyncio.ensure_future(run_in_threadpool(restore_text, restorer, request))
        except BaseException:
            release(False)
            raise
        work.add_done_callback(lambda w: release(_completed(w)))  # the slot is free once the thread has stopped
        result = await _wait(work, stop, deadline, http)
        if result is None:
            raise gate.busy("H014")
        return {**result.to_dict(), "gaps_in_text": len(request.hints)}

    @app.post("/api/parallels", response_model=s.ParallelsOut, responses=_ERRORS, tags=["restore"])
    async def find_parallels(req: s.ParallelsRequest) -> dict:
        """Parallel passages of one gap, with their documents' links: the same result as
        ``apollo-restore parallels --json`` (503 when the server has no index)."""
        if parallels is None:
            raise ApiError.of(503, "H010")
        check_k(req.k, limits.request)
        try:  # one gap asked: a text of any number of gaps has parallels
            request = RestoreRequest(req.text, req.hints, req.pins, 1, only=[req.gap]).validate(limits.request)
        except RequestError as err:
            if err.code != "E327":
                raise
            raise ApiError.of(
                422, "H013", reason=str(err).removeprefix("[E327] ").replace(" to restore (only)", "")
            ) from None
        return await run_in_threadpool(parallels.parallels, request, req.gap, req.k)

    @app.post("/api/provenance", response_model=s.ProvenanceOut, responses=_ERRORS, tags=["restore"])
    async def check_provenance(req: s.ProvenanceRequest) -> dict:
        """Training documents that share runs of at least ``min_run`` letters with the text: a
        restoration that reproduces one may be a memorised edition (503 when the server has no
        index)."""
        if parallels is None:
            raise ApiError.of(503, "H010")
        check_text(req.text, limits.request)
        try:
            return await run_in_threadpool(parallels.provenance, req.text, req.min_run)
        except ValueError as err:
            raise ApiError.of(422, "H016", reason=str(err)) from None

    @app.post("/api/attribute", response_model=s.AttributeOut, responses=_ERRORS, tags=["attribute"])
    async def attribute(req: s.AttributeRequest) -> dict:
        """When and where the text was written: a date distribution with its 80 % interval, the 10
        most probable places and the dated parallels (the same result as ``apollo-restore
        attribute --json``; parallels only when the server has a text index)."""
        check_text(req.text, limits.request)
        index = getattr(parallels, "index", None) if req.parallels else None
        found = await run_in_threadpool(attribute_text, req.text, None, index is not None, index)
        return found.to_dict()

    @app.post("/api/epidoc", response_model=s.EpidocOut, responses=_ERRORS, tags=["import/export"])
    async def epidoc(file: UploadFile = File(..., description="An EpiDoc TEI XML file.")) -> dict:
        """The Greek edition of an uploaded EpiDoc file as Leiden text (restore it next)."""
        content = await file.read()
        if not content.strip():
            raise ApiError.of(422, "H011", reason="the file is empty")
        name = _SAFE_NAME.sub("_", Path(file.filename or "upload.xml").name)[:80] or "upload.xml"
        doc = read_epidoc(content, name)  # the one reader of every door: E313, E314 as /api/restore answers
        meta = {k: v for k, v in doc.meta.items() if isinstance(v, (str, int, float, bool))}
        gaps = sum(isinstance(seg, Lacuna) for seg in doc.segments)
        return {"id": doc.id, "leiden": to_leiden(doc.segments), "gaps": gaps, "meta": meta}

    @app.post("/api/export", response_model=s.ExportOut, responses=_ERRORS, tags=["import/export"])
    async def export(req: s.ExportRequest) -> dict:
        """The text with the chosen readings filled in, each marked as a machine proposal:
        Leiden ``[αβγ]⁽ᵐ¹⁾`` plus an apparatus note, or EpiDoc
        ``<supplied reason="lost" resp="#apollo-restore" cert="low">`` plus a ``<note>``."""
        chosen = {**req.pins, **{n: _machine_reading(n, c) for n, c in req.choices.items()}}
        content = export_checked(req.text, chosen, restorer.name, req.format, limits.request)
        media, ext = ("application/tei+xml", "xml") if req.format == "epidoc" else ("text/plain", "txt")
        return {
            "format": req.format,
            "filename": f"restoration.{ext}",
            "media_type": media,
            "content": content,
            "machine_readings": len(chosen),
        }

    return app


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


def _mount_docs(app: FastAPI) -> None:
    """Swagger UI at ``/docs`` from the assets packaged in ``fastapi-offline`` (no CDN); without
    that package there is no ``/docs`` (the page also links ``/openapi.json``)."""
    try:
        import fastapi_offline
    except ImportError:
        return
    app.mount(
        "/docs-assets", StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static"), name="docs-assets"
    )

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="apollo-restore API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon.png",
        )


def _machine_reading(gap: int, choice: s.Choice) -> MachineReading:
    """An export choice, written in edition form where the page sent one."""
    alts = tuple(Alternative(a.display or a.text, a.prob) for a in choice.alternatives)
    return MachineReading(gap, choice.display or choice.text, choice.prob, alts)
