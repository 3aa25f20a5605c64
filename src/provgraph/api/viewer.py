"""The browser trace viewer: static pages served at ``/`` beside the API, under a strict CSP.

Every page path returns the same ``index.html``; the ES modules under ``/static/js/`` read the
path and fetch everything they show from the public API with the user's token. The pages need
no inline script or style, so the Content-Security-Policy forbids both. The API's interactive
page (``/api/v1/docs``, Swagger UI) is served from ``/static/vendor`` too: it works offline.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["STATIC_DIR", "CSP", "DOCS_CSP", "PAGE_PATHS", "mount_viewer", "install"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI draws its icons from data: URLs; it needs no inline script or style either.
DOCS_CSP = CSP.replace("img-src 'self'", "img-src 'self' data:")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
PAGE_PATHS = ("/", "/login", "/ask", "/traces", "/traces/{sid:path}", "/conversations", "/conversations/{cid:path}",
              "/documents", "/documents/{doc:path}", "/explore", "/explore/{entity:path}",
              "/communities", "/communities/{community:path}")


class _StaticFiles(StaticFiles):
    """Static files with the viewer's security headers."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(SECURITY_HEADERS)
        return response


def _page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html",
                        headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})


def mount_viewer(app: FastAPI) -> None:
    """Serve the viewer's pages and ``/static`` on ``app`` (public: the pages hold no data)."""
    app.mount("/static", _StaticFiles(directory=STATIC_DIR), name="static")
    for path in PAGE_PATHS:
        app.add_api_route(path, _page, methods=["GET", "HEAD"], include_in_schema=False)  # HEAD: a probe's check


def _docs() -> FileResponse:
    return FileResponse(STATIC_DIR / "api-docs.html", media_type="text/html",
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": DOCS_CSP, "Cache-Control": "no-cache"})


def install(app: FastAPI, state: object, prefix: str) -> None:
    """The hook ``create_app`` calls for optional route modules."""
    mount_viewer(app)
    app.add_api_route(f"{prefix}/docs", _docs, methods=["GET", "HEAD"], include_in_schema=False)
