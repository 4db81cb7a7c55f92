"""HTTP API and web page: routes only (STYLE habit 6). Each route parses its request, calls the
restorer (or the parallels index, or the exporter) and returns a JSON-ready result.

    apollo-restore serve --model runs/small --port 8000     # then open http://127.0.0.1:8000/

    from apollo_restore.web.app import create_app
    app = create_app(Restorer.load(), parallels=None)       # any ASGI server, or TestClient

Endpoints (documented at ``/docs`` and ``/openapi.json``):
``POST /api/restore``, ``POST /api/parallels``, ``POST /api/provenance``, ``POST /api/epidoc``, ``POST /api/export``,
``GET /api/health``, ``GET /`` (the page) and ``/static/*`` (its script and style).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, File, UploadFile
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from apollo_restore.data.document import Lacuna, to_leiden
from apollo_restore.data.readers.epidoc import parse_epidoc_file
from apollo_restore.data.readers.leiden import find_gaps
from apollo_restore.restore.engine import Restorer
from apollo_restore.web import schemas as s
from apollo_restore.web.errors import ApiError, install_handlers
from apollo_restore.web.export import MachineReading, export_epidoc, export_leiden, gap_context
from apollo_restore.web.limits import BodyLimit, Gate, Limits, check_readings, checked_restore_args

STATIC = Path(__file__).resolve().parent / "static"
_ERRORS = {code: {"model": s.ErrorOut} for code in (413, 422, 503)}
_SAFE_NAME = re.compile(r"[^\w.\-]+")


class ParallelsProvider(Protocol):
    """What the web app needs from the text index (:mod:`apollo_restore.retrieve`)."""

    def parallels(self, prefix: str, suffix: str, k: int) -> list[dict[str, Any]]: ...

    def provenance(self, text: str, min_run: int) -> dict[str, Any]: ...


def create_app(restorer: Restorer, parallels: ParallelsProvider | None = None, limits: Limits = Limits()) -> FastAPI:
    """The FastAPI app serving ``restorer`` (and ``parallels`` when an index is loaded).

    Args:
        restorer: a loaded :class:`Restorer`; its model runs in worker threads.
        parallels: an object with ``parallels(prefix, suffix, k) -> list[dict]``, or ``None``
            (then ``/api/parallels`` answers 503 and the page says no index is loaded).
        limits: request and concurrency limits.
    """
    app = FastAPI(
        title="apollo-restore",
        version="1",
        description=(
            "Restore lacunae in Ancient Greek texts. Machine-proposed readings are proposals, "
            "not the editor's: exports mark them as such. Errors: `{\"error\": {\"code\", \"message\", ...}}`."
        ),
    )
    app.add_middleware(BodyLimit, limits=limits)
    install_handlers(app)
    gate = Gate(limits)
    app.state.gate = gate
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/api/health", response_model=s.HealthOut, tags=["service"])
    async def health() -> dict:
        """Model name, whether parallels are available, and the limits of this server."""
        return {"status": "ok", "model": restorer.name, "parallels": parallels is not None, "limits": limits.to_dict()}

    @app.post("/api/restore", response_model=s.RestorationOut, responses=_ERRORS, tags=["restore"])
    async def restore(req: s.RestoreRequest) -> dict:
        """Ranked candidates for every gap of a Leiden text, filled left to right; pinned gaps
        keep the given reading and the gaps after them are restored with it in place."""
        hints, pins = checked_restore_args(limits, req.text, req.hints, req.pins, req.k)
        async with gate.slot():
            result = await run_in_threadpool(restorer.restore, req.text, hints=hints, pins=pins, k=req.k)
        return result.to_dict()

    @app.post("/api/parallels", response_model=s.ParallelsOut, responses=_ERRORS, tags=["restore"])
    async def find_parallels(req: s.ParallelsRequest) -> dict:
        """Parallel passages for one gap's context, with their document ids (503 when the
        server has no index)."""
        if parallels is None:
            raise ApiError.of(503, "W010")
        limits.check_k(req.k)
        if req.text is not None:
            limits.check_text(req.text)
            try:
                prefix, suffix = gap_context(req.text, req.gap, req.pins)
            except IndexError as err:
                raise ApiError.of(422, "W013", reason=str(err)) from None
        elif req.prefix is not None or req.suffix is not None:
            prefix, suffix = req.prefix or "", req.suffix or ""
            limits.check_text(prefix + suffix)
        else:
            raise ApiError.of(422, "W013", reason="give either text (and gap) or prefix/suffix")
        found = await run_in_threadpool(parallels.parallels, prefix, suffix, req.k)
        return {"prefix": prefix, "suffix": suffix, "parallels": list(found)}

    @app.post("/api/provenance", response_model=s.ProvenanceOut, responses=_ERRORS, tags=["restore"])
    async def check_provenance(req: s.ProvenanceRequest) -> dict:
        """Training documents that share runs of at least ``min_run`` letters with the text: a
        restoration that reproduces one may be a memorised edition (503 when the server has no
        index)."""
        if parallels is None:
            raise ApiError.of(503, "W010")
        limits.check_text(req.text)
        try:
            return await run_in_threadpool(parallels.provenance, req.text, req.min_run)
        except ValueError as err:
            raise ApiError.of(422, "W014", reason=str(err)) from None

    @app.post("/api/epidoc", response_model=s.EpidocOut, responses=_ERRORS, tags=["import/export"])
    async def epidoc(file: UploadFile = File(..., description="An EpiDoc TEI XML file.")) -> dict:
        """The Greek edition of an uploaded EpiDoc file as Leiden text (restore it next)."""
        content = await file.read()
        if not content.strip():
            raise ApiError.of(422, "W011", reason="the file is empty")
        name = _SAFE_NAME.sub("_", Path(file.filename or "upload.xml").name)[:80] or "upload.xml"
        doc = parse_epidoc_file(content, name, "user")
        meta = {k: v for k, v in doc.meta.items() if isinstance(v, (str, int, float, bool))}
        gaps = sum(isinstance(seg, Lacuna) for seg in doc.segments)
        return {"id": doc.id, "leiden": to_leiden(doc.segments), "gaps": gaps, "meta": meta}

    @app.post("/api/export", response_model=s.ExportOut, responses=_ERRORS, tags=["import/export"])
    async def export(req: s.ExportRequest) -> dict:
        """The text with the chosen readings filled in, each marked as a machine proposal:
        Leiden ``[αβγ]⁽ᵐ¹⁾`` plus an apparatus note, or EpiDoc
        ``<supplied reason="lost" resp="#apollo-restore" cert="low">`` plus a ``<note>``."""
        limits.check_text(req.text)
        chosen = {i: MachineReading(i, t) for i, t in req.pins.items()}
        chosen.update({i: MachineReading(i, c.text, c.prob) for i, c in req.choices.items()})
        check_readings(limits, {i: r.text for i, r in chosen.items()}, len(find_gaps(req.text)))
        if req.format == "epidoc":
            content, media, ext = export_epidoc(req.text, chosen, restorer.name), "application/tei+xml", "xml"
        else:
            content, media, ext = export_leiden(req.text, chosen, restorer.name), "text/plain", "txt"
        return {"format": req.format, "filename": f"restoration.{ext}", "media_type": media, "content": content, "machine_readings": len(chosen)}

    return app
