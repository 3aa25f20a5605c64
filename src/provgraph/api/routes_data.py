"""Collections, documents, provenance, traces, SPARQL, export and import: what the CLI reads and writes.

JSON bodies are what the matching CLI command prints with ``--format json``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BeforeValidator
from fastapi.concurrency import run_in_threadpool

from provgraph.api.errors import ApiError
from provgraph.api.schemas import (
    NAME,
    CollectionCreate,
    CollectionCreated,
    CollectionOut,
    DeletedOut,
    ErrorResponse,
    ImportedOut,
    RemovedOut,
    SparqlRequest,
)
from provgraph.api.state import request_settings, state_of, user_of
from provgraph.errors import InputError
from provgraph.api.objects import to_objects
from provgraph.explain.documents import document_detail, document_rows, provenance_json
from provgraph.explain.provenance_tree import document_tree
from provgraph.explain.render_json import summary_json, trace_json
from provgraph.explain.lifecycle import delete_traces, parse_moment, traces_before
from provgraph.explain.traces import list_traces, load_trace
from provgraph.layout import CollectionRef
from provgraph.rdf.ids import document_iri
from provgraph.cli.common import timeout_message
from provgraph.store.sparql_run import QueryTimeout, ResultLimits, run_query
from provgraph.runtime import collections as collections_of, create_collection

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 408, 413, 422, 429)
}
router = APIRouter(responses=ERRORS)
Collection = Query  # noqa: N816 - a readable alias in signatures
ResultForm = Literal["json", "objects"]
RESULT_FORM = Query("json", description="json: what `--format json` prints; objects: the typed results the Python "
                                 "client rebuilds (`$type`/`fields`)")


def _path_name(name: str) -> str:
    from provgraph.layout import check_name

    return check_name("collection", name)


@router.get("/collections", response_model=list[CollectionOut], tags=["collections"])
def collections(request: Request) -> list[dict[str, str]]:
    """The caller's collections (``provgraph collections list --format json``)."""
    state = state_of(request)
    return [{"user": c.user, "collection": c.collection}
            for c in collections_of(state.settings, user_of(request))]


@router.post("/collections", response_model=CollectionCreated, status_code=201, tags=["collections"])
def create(request: Request, body: CollectionCreate) -> dict[str, Any]:
    """Create a collection (``created`` is false when it already existed)."""
    ref = CollectionRef(state_of(request).settings.home, user_of(request), body.name)
    return {"user": ref.user, "collection": ref.collection, "created": create_collection(state_of(request).settings, ref)}


@router.delete("/collections/{collection}", response_model=CollectionOut, tags=["collections"])
def drop(request: Request, collection: str) -> dict[str, str]:
    """Delete a collection and everything in it."""
    ref = CollectionRef(state_of(request).settings.home, user_of(request), _path_name(collection))
    state_of(request).pool.drop(state_of(request).settings, ref)
    return {"user": ref.user, "collection": ref.collection}


@router.get("/collections/{collection}/documents", tags=["documents"])
def documents(request: Request, collection: str) -> list[dict[str, Any]]:
    """The collection's documents (``documents list --format json``)."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        return document_rows(rt.librarian)


@router.get("/collections/{collection}/documents/{document:path}", tags=["documents"])
def document(request: Request, collection: str, document: str) -> dict[str, Any]:
    """A document's metadata and parts (``documents show --format json``)."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        return document_detail(rt.librarian, document_iri(document), str(rt.ref))


@router.delete("/collections/{collection}/documents/{document:path}", response_model=RemovedOut, tags=["documents"])
def remove(request: Request, collection: str, document: str) -> dict[str, Any]:
    """Remove a document, its provenance and the facts only it supported."""
    iri = document_iri(document)
    with state_of(request).pool.use(request_settings(request, _path_name(collection)), write=True) as rt:
        return {"removed": iri.value, "quads": rt.remove_document(iri).quads}


@router.get("/collections/{collection}/provenance/{document:path}", tags=["documents"])
def provenance(request: Request, collection: str, document: str) -> dict[str, Any]:
    """The document → page → chunk → edges tree (``provenance DOC --format json``)."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        return provenance_json(document_tree(rt.store, document_iri(document)))


@router.get("/collections/{collection}/traces", tags=["traces"])
def traces(request: Request, collection: str, all: bool = False,
           limit: int | None = Query(None, ge=1, le=100_000), form: ResultForm = RESULT_FORM) -> list[Any]:
    """Traces, newest first (``traces list --format json``); ``all`` includes agent sub-traces."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        found = list_traces(rt.store, include_sub_traces=all, limit=limit)
    return [to_objects(s) for s in found] if form == "objects" else [summary_json(s) for s in found]


def _iso_moment(value: object) -> datetime:
    try:
        return parse_moment(str(value), "before")
    except InputError as exc:
        raise ValueError(str(exc)) from None


@router.delete("/collections/{collection}/traces", response_model=DeletedOut, tags=["traces"])
def delete_old(request: Request, collection: str,
               before: Annotated[datetime, BeforeValidator(_iso_moment), Query(
                   description="delete every trace started before this: an ISO 8601 date or time, UTC when it has "
                               "no zone (a bare number is refused)", examples=["2026-03-01"])]) -> dict[str, Any]:
    """Delete every top-level trace started before a time (``traces delete --before``), under the write lock."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection)), write=True) as rt:
        deleted = delete_traces(rt.store, rt.librarian, traces_before(rt.store, before))
    return {"deleted": [q.value for q in deleted.questions], "quads": deleted.quads, "collection": str(rt.ref)}


@router.get("/collections/{collection}/traces/{trace_id:path}", tags=["traces"])
def trace(request: Request, collection: str, trace_id: str, provenance: bool = False,
          form: ResultForm = RESULT_FORM) -> dict[str, Any]:
    """One trace in full (``traces show ID --format json``); ``provenance`` adds every edge's sources."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        found = load_trace(rt.store, trace_id, librarian=rt.librarian, provenance=provenance)
    return to_objects(found) if form == "objects" else trace_json(found)  # type: ignore[no-any-return]


@router.delete("/collections/{collection}/traces/{trace_id:path}", response_model=DeletedOut, tags=["traces"])
def delete_trace(request: Request, collection: str, trace_id: str) -> dict[str, Any]:
    """Delete a trace (an agent's sub-traces go with it) and its stored answers, under the write lock."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection)), write=True) as rt:
        deleted = delete_traces(rt.store, rt.librarian, [trace_id])
    return {"deleted": [q.value for q in deleted.questions], "quads": deleted.quads, "collection": str(rt.ref)}


@router.post("/collections/{collection}/sparql", tags=["sparql"],
             responses={200: {"content": {"application/sparql-results+json": {}, "application/n-triples": {}}}})
async def sparql(request: Request, collection: str, body: SparqlRequest) -> Response:
    """Read-only SPARQL: SELECT and ASK give SPARQL JSON results, CONSTRUCT/DESCRIBE N-Triples; updates are refused.

    Results stream as they are evaluated, within the server's caps: past ``--max-result-rows`` or
    ``--max-result-mb``, or its ``--timeout`` once results have started, they end with a top-level
    ``"truncated": {"reason", "message"}`` member (N-Triples: a last ``# truncated:`` comment); a query
    with no result by the timeout is a 408.
    """
    state = state_of(request)
    settings = request_settings(request, _path_name(collection))
    limits = state.limits
    caps = ResultLimits(limits.max_result_rows, int(limits.max_result_mb * 2**20), limits.timeout_s)

    @contextmanager
    def store() -> Iterator[Any]:
        with state.pool.use(settings, query=True) as rt:
            yield rt.sparql_store

    results = run_query(store, body.query, "json", caps)
    try:
        kind = await asyncio.to_thread(next, results)
        first = await asyncio.to_thread(next, results, None)
    except QueryTimeout:
        raise ApiError(408, "Timeout", timeout_message(limits.timeout_s)) from None

    if kind == "boolean":
        results.cancel()
        return Response(json.dumps({"head": {}, "boolean": first}), media_type="application/sparql-results+json")

    async def chunks() -> AsyncIterator[bytes]:
        try:
            item = first
            while item is not None:
                if isinstance(item, bytes):
                    yield item
                item = await asyncio.to_thread(next, results, None)
        finally:
            results.cancel()  # the client left, or the results ended: the query's thread stops

    media = "application/n-triples" if kind == "ntriples" else "application/sparql-results+json"
    return StreamingResponse(chunks(), media_type=media)


_MEDIA = {"nquads": "application/n-quads", "trig": "application/trig"}


@router.get("/collections/{collection}/export", tags=["export"],
            responses={200: {"content": {"application/n-quads": {}, "application/trig": {}}}})
def export(request: Request, collection: str, format: Literal["nquads", "trig"] = "nquads") -> Response:
    """Every named graph of the collection, triple terms included."""
    with state_of(request).pool.use(request_settings(request, _path_name(collection))) as rt:
        data = rt.store.export_bytes(format)
    return Response(data, media_type=_MEDIA[format])


@router.post("/collections/{collection}/import", response_model=ImportedOut, tags=["export"],
             openapi_extra={"requestBody": {"required": True, "content": {
                 media: {"schema": {"type": "string"}, "example": "<urn:a> <urn:b> <urn:c> <urn:g> .\n"}
                 for media in ("text/plain", "application/n-quads", "application/trig")}}})
async def import_(request: Request, collection: str,
                  format: Literal["nquads", "trig"] = "nquads") -> dict[str, Any]:
    """Import N-Quads or TriG (the request body): checked whole first (a syntax error imports nothing), then written in batches."""
    data = await request.body()
    if not data:
        raise ApiError(400, "InputError", "empty body: send the N-Quads or TriG text as the request body")
    settings = request_settings(request, _path_name(collection))

    def run() -> dict[str, Any]:
        with state_of(request).pool.use(settings, create=True, write=True) as rt:
            return {"imported": rt.store.import_data(data, format), "collection": str(rt.ref)}

    return await run_in_threadpool(run)


__all__ += ["NAME"]
