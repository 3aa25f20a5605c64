"""The knowledge graph's communities and their reports (``communities list|show``); global search is a
query service (``POST /global-rag``, in routes_rag.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request

from provgraph.api.routes_data import ERRORS
from provgraph.api.state import ServerState, request_settings, state_of
from provgraph.communities.views import community_detail, community_rows
from provgraph.layout import check_name

__all__ = ["router", "install"]

router = APIRouter(responses=ERRORS, tags=["communities"])


@router.get("/collections/{collection}/communities")
def communities(request: Request, collection: str) -> list[dict[str, Any]]:
    """Every community (by level, largest first): label, level, parent, sizes, report title, stale."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        return community_rows(rt.store)


@router.get("/collections/{collection}/communities/{community:path}")
def community(request: Request, collection: str, community: str) -> dict[str, Any]:
    """One community: members, member facts (the first 50), its report with each finding's facts, their
    sources and sentences (``communities show --format json``)."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        return community_detail(rt.store, rt.librarian, community)


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the community routes under ``prefix``."""
    app.include_router(router, prefix=prefix)
