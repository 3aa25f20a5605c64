"""One librarian record with its text: what the viewer's source panel shows and highlights.

Offsets count Unicode code points of the parent's text, as everywhere in provgraph, so a client
slicing ``text`` of the parent at ``offset``/``length`` gets this record's text back.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request

from provgraph.api.routes_data import ERRORS
from provgraph.api.state import ServerState, request_settings, state_of
from provgraph.layout import check_name

__all__ = ["router", "install"]

router = APIRouter(responses=ERRORS)


@router.get("/collections/{collection}/records/{record_id:path}", tags=["documents"])
def record(request: Request, collection: str, record_id: str) -> dict[str, Any]:
    """A document, page, section, chunk or answer: its place in the tree and its whole text."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        rec = rt.librarian.get(record_id)
        text = rt.librarian.text(record_id)
    return {
        "id": rec.id, "kind": rec.kind, "parent": rec.parent_id, "title": rec.title, "mime_type": rec.mime_type,
        "number": rec.number, "offset": rec.offset, "length": rec.length, "text": text,
    }


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the record route under ``prefix``."""
    app.include_router(router, prefix=prefix)
