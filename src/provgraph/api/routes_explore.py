"""Exploring the knowledge graph: entities by name, one entity's facts, sources and neighbours, and
the facts one chunk gave (the viewer's explorer and document view read these)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request

from provgraph.api.routes_data import ERRORS
from provgraph.api.state import ServerState, request_settings, state_of
from provgraph.errors import InputError, NotFound
from provgraph.explain.entities import Fact, chunk_facts, entity_view, search_entities
from provgraph.explain.render_json import source_ref_json
from provgraph.layout import check_name
from provgraph.rdf.terms import Iri

__all__ = ["router", "install", "fact_json"]

router = APIRouter(responses=ERRORS, tags=["explore"])


def fact_json(f: Fact) -> dict[str, Any]:
    """A fact: its terms (N-Triples), labels and sources (each with its evidence sentence)."""
    return {"s": str(f.edge.s), "p": str(f.edge.p), "o": str(f.edge.o),
            "labels": {"s": f.labels[0], "p": f.labels[1], "o": f.labels[2]},
            "sources": [source_ref_json(r) for r in f.sources]}


def _iri(text: str, what: str) -> Iri:
    try:
        return Iri(text)
    except InputError as exc:
        raise NotFound(f"no {what} {text!r}: not an IRI") from exc


@router.get("/collections/{collection}/entities")
def entities(request: Request, collection: str, q: str = Query(..., min_length=1, max_length=200),
             limit: int = Query(20, ge=1, le=100)) -> list[dict[str, Any]]:
    """Entities by name: names the query holds (``exact``), BM25 over names and aliases (``lexical``),
    then names spelled like it (``fuzzy``); best first."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        found = search_entities(rt.store, rt.retriever(), q, limit=limit)
    return [{"entity": m.iri.value, "label": m.label, "names": list(m.names), "match": m.match,
             "score": round(m.score, 4)} for m in found]


@router.get("/collections/{collection}/entities/{entity:path}")
def entity(request: Request, collection: str, entity: str,
           limit: int = Query(200, ge=1, le=2000)) -> dict[str, Any]:
    """One entity: its names, facts (as subject or object) with every source and sentence, and its
    neighbours (entities one fact away, with how many facts join them)."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        view = entity_view(rt.store, rt.librarian, _iri(entity, "entity"), limit=limit)
        if view is None:
            raise NotFound(f"no entity {entity} in collection {rt.ref}")
    return {"entity": view.iri.value, "label": view.label, "names": list(view.names),
            "facts": [fact_json(f) for f in view.facts], "more_facts": view.more,
            "neighbours": [{"entity": n.iri.value, "label": n.label, "facts": n.facts} for n in view.neighbours]}


@router.get("/collections/{collection}/facts")
def facts(request: Request, collection: str,
          chunk: str = Query(..., description="a chunk IRI: the facts extracted from it")) -> list[dict[str, Any]]:
    """The facts extracted from one chunk, each with its source there (and the sentence stating it)."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        iri = _iri(chunk, "chunk")
        if not rt.librarian.exists(iri.value):
            raise NotFound(f"no chunk {chunk} in collection {rt.ref}")
        return [fact_json(f) for f in chunk_facts(rt.store, rt.librarian, iri)]


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the explore routes under ``prefix``."""
    app.include_router(router, prefix=prefix)
