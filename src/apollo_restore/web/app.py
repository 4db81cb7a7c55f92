"""HTTP API and web page, assembled: the body limit and the host check, the error handlers, the
gate that admits restorations, the page and its assets, the docs, and the API's routes
(:mod:`apollo_restore.web.routes`: each parses, calls one library function and returns its result).

    apollo-restore serve --model runs/small --port 8000     # then open http://127.0.0.1:8000/

    from apollo_restore.web.app import create_app
    app = create_app(load_restorer(), parallels=None)       # any ASGI server, or TestClient (restoration.load)

Endpoints (documented at ``/docs``, from packaged assets, and ``/openapi.json``):
``POST /api/restore``, ``POST /api/parallels``, ``POST /api/provenance``, ``POST /api/attribute``, ``POST /api/epidoc``,
``POST /api/export``, ``GET /api/health``, ``GET /`` (the page), ``/static/*`` (its script, style and icon) and
``/favicon.ico``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from apollo_restore.restoration.restorer import Restorer
from apollo_restore.schema.limits import DEFAULT_SERVER_LIMITS, Limits
from apollo_restore.web.errors import install_handlers
from apollo_restore.web.limits import BodyLimit, Gate
from apollo_restore.web.routes import ParallelsProvider, add_api_routes

STATIC = Path(__file__).resolve().parent / "static"
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

    add_api_routes(app, restorer, parallels, limits, gate)
    return app


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
