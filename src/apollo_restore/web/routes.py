"""The HTTP API's routes: each parses its request, calls one library function (a restoration,
the parallels index, the attribution, the EpiDoc reader, the exporter) and returns its JSON-ready
result; :func:`~apollo_restore.web.app.create_app` adds them to the app.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, File, Request, UploadFile
from starlette.concurrency import run_in_threadpool

from apollo_restore.attribution.attribute import attribute as attribute_text
from apollo_restore.data.document import Lacuna, to_leiden
from apollo_restore.data.readers.typed import read_epidoc
from apollo_restore.data.textchecks import check_text
from apollo_restore.errors import RequestError
from apollo_restore.restoration.export import Alternative, MachineReading, export_checked
from apollo_restore.restoration.presentation.labels import model_label
from apollo_restore.restoration.request import CheckedRequest, check_k, validate
from apollo_restore.restoration.restorer import Restorer
from apollo_restore.schema.answers import AttributeRequest, Attribution
from apollo_restore.schema.limits import Limits
from apollo_restore.schema.restoration import Restoration, RestoreRequest
from apollo_restore.version import __version__
from apollo_restore.web import schemas as s
from apollo_restore.web.errors import ApiError
from apollo_restore.web.limits import ARRIVED, Gate
from apollo_restore.web.running import restore_gated

_ERRORS = {code: {"model": s.ErrorOut} for code in (413, 422, 503)}
_SAFE_NAME = re.compile(r"[^\w.\-]+")


class ParallelsProvider(Protocol):
    """What the web app needs from the text index (:mod:`apollo_restore.retrieve`)."""

    def parallels(self, request: CheckedRequest, gap: int, k: int) -> dict[str, Any]: ...

    def provenance(self, text: str, min_run: int) -> dict[str, Any]: ...


def add_api_routes(
    app: FastAPI, restorer: Restorer, parallels: ParallelsProvider | None, limits: Limits, gate: Gate
) -> None:
    """The ``/api/*`` routes of ``app`` (in the order OpenAPI lists them)."""
    _service_routes(app, restorer, parallels, limits, gate)
    _restore_routes(app, restorer, limits, gate)
    _index_routes(app, parallels, limits)
    _edition_routes(app, restorer, limits)


def _service_routes(
    app: FastAPI, restorer: Restorer, parallels: ParallelsProvider | None, limits: Limits, gate: Gate
) -> None:
    """``/api/health``: GET and HEAD."""

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


def _restore_routes(app: FastAPI, restorer: Restorer, limits: Limits, gate: Gate) -> None:
    """``/api/restore``: a restoration under the gate (:func:`~apollo_restore.web.running.restore_gated`)."""

    @app.post("/api/restore", response_model=Restoration, responses=_ERRORS, tags=["restore"])
    async def restore(req: RestoreRequest, http: Request) -> Restoration:
        """Ranked candidates for every gap of a Leiden text (or those asked, `only`), filled left to
        right; pinned gaps keep the given reading and the gaps after them are restored with it in place.
        Answers 503 with ``Retry-After`` when the queue is full, when the work queued before it
        and its own would pass the time limit (at once), or when the time limit is reached."""
        deadline = limits.deadline(http.scope.get(ARRIVED, time.monotonic()))
        gate.admit(deadline - time.monotonic())  # a full server refuses before parsing the text
        stop = threading.Event()
        request = validate(req, limits.request, should_stop=stop.is_set)
        return await restore_gated(gate, restorer, request, stop, deadline, http, limits.request.max_gap_letters)


def _index_routes(app: FastAPI, parallels: ParallelsProvider | None, limits: Limits) -> None:
    """``/api/parallels``, ``/api/provenance`` (503 without an index) and ``/api/attribute``."""

    @app.post("/api/parallels", response_model=s.ParallelsOut, responses=_ERRORS, tags=["restore"])
    async def find_parallels(req: s.ParallelsRequest) -> dict:
        """Parallel passages of one gap, with their documents' links: the same result as
        ``apollo-restore parallels --json`` (503 when the server has no index)."""
        if parallels is None:
            raise ApiError.of(503, "H010")
        check_k(req.k, limits.request)
        try:  # one gap asked: a text of any number of gaps has parallels
            request = validate(RestoreRequest(req.text, req.hints, req.pins, 1, only=[req.gap]), limits.request)
        except RequestError as err:
            if err.code != "E327":
                raise
            raise ApiError.of(422, "H013", reason=f"no gap {err.gap}: {err.fields['reason']}") from None
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

    @app.post("/api/attribute", response_model=Attribution, responses=_ERRORS, tags=["attribute"])
    async def attribute(req: AttributeRequest) -> Attribution:
        """When and where the text was written: a date distribution with its 80 % interval, the 10
        most probable places and the dated parallels (the same result as ``apollo-restore
        attribute --json``; parallels only when the server has a text index)."""
        check_text(req.text, limits.request)
        index = getattr(parallels, "index", None) if req.parallels else None
        return await run_in_threadpool(attribute_text, req.text, None, index is not None, index)


def _edition_routes(app: FastAPI, restorer: Restorer, limits: Limits) -> None:
    """``/api/epidoc`` (an upload read as every door reads EpiDoc) and ``/api/export``."""

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
        Leiden ``⁅αβγ⁆⁽ᵐ¹⁾`` plus an apparatus note, or EpiDoc
        ``<supplied reason="lost" resp="#apollo-restore" cert="low">`` plus a ``<note>``."""
        chosen = {**req.pins, **{n: _machine_reading(n, c) for n, c in req.choices.items()}}
        fingerprint = getattr(restorer, "fingerprint", None)
        content = export_checked(req.text, chosen, restorer.name, req.format, limits.request, fingerprint)
        media, ext = ("application/tei+xml", "xml") if req.format == "epidoc" else ("text/plain", "txt")
        return {
            "format": req.format,
            "filename": f"restoration.{ext}",
            "media_type": media,
            "content": content,
            "machine_readings": len(chosen),
            "version": __version__,
            "model_fingerprint": fingerprint,
        }


def _machine_reading(gap: int, choice: s.Choice) -> MachineReading:
    """An export choice, written in edition form where the page sent one."""
    alts = tuple(Alternative(a.display or a.text, a.prob) for a in choice.alternatives)
    return MachineReading(gap, choice.display or choice.text, choice.prob, alts)
