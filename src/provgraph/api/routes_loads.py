"""The documents workflow beyond upload: a user's load jobs, a retry of a job's failed chunk
extractions, and what removing a document would retract (read before the user confirms)."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request

from provgraph.api.job_documents import DocumentProgress, DocumentStatus
from provgraph.api.routes_data import ERRORS
from provgraph.api.routes_jobs import Job, extract_for
from provgraph.api.schemas import JobOut
from provgraph.api.state import ServerState, request_settings, state_of, user_of
from provgraph.config import Settings
from provgraph.errors import InputError, ProvgraphError
from provgraph.explain.removal_preview import removal_preview
from provgraph.layout import check_name
from provgraph.rdf.ids import document_iri
from provgraph.rdf.terms import Iri

__all__ = ["router", "install"]

router = APIRouter(responses=ERRORS, tags=["documents"])
RETRYABLE = ("partly extracted", "extraction failed", "interrupted")


@router.get("/jobs", response_model=list[JobOut])
def jobs(request: Request, collection: str | None = Query(None, description="only this collection's jobs"),
         limit: int = Query(20, ge=1, le=500)) -> list[dict[str, Any]]:
    """The caller's load jobs, newest first: those running and the most recent finished ones (kept across restarts)."""
    user = user_of(request)
    mine = [j for j in list(state_of(request).jobs.jobs.values())
            if j.user == user and (collection is None or j.collection == collection)]
    return [j.view() for j in reversed(mine)][:limit]


def _retry(state: ServerState, job: Job, settings: Settings) -> None:
    """Extract again every chunk of the job's documents that has no extraction yet (the failed ones)."""
    docs = job.documents
    assert docs is not None
    try:
        with state.pool.use(settings, write=True) as rt:
            job.status = "running"
            job.touch()
            chosen = rt.extractors(job.extractors)
            loader = rt.loader()
            chunks: list[Any] = []
            for i, doc in enumerate(docs.documents):
                stored = loader.stored_chunks(Iri(doc.document or ""))
                docs.extracting(i, [c.iri.value for c in stored], len(chosen))
                chunks += stored
            job.chunks = len(chunks) * len(chosen)
            outcomes = extract_for(job, rt, chosen, chunks)
        job.errors = [f"chunk {o.chunk.value} ({o.component}): {o.error}" for o in outcomes if o.failed]
        job.status = "done"
        docs.finish()
    except ProvgraphError as exc:
        job.errors.append(str(exc).splitlines()[0])
        job.status = "failed"
    finally:
        job.touch()


@router.post("/jobs/{job_id}/retry", status_code=202, response_model=JobOut)
async def retry(request: Request, job_id: str) -> dict[str, Any]:
    """A new job that extracts again the chunks whose extraction failed in job ``job_id`` (with the same
    extractors); 400 while that job runs or when nothing of it failed."""
    state = state_of(request)
    old = state.jobs.get(user_of(request), job_id)
    if old.status not in ("done", "failed"):
        raise InputError(f"job {job_id} is still {old.status}: retry it once it has ended")
    failed = [d for d in (old.documents.documents if old.documents else [])
              if d.document and (d.status in RETRYABLE or d.failures)]
    if not failed:
        raise InputError(f"job {job_id} has no failed chunk extraction to retry")
    job = Job(uuid.uuid4().hex, old.user, old.collection, [], old.folder, extractors=old.extractors, retry_of=old.id,
              documents=DocumentProgress([DocumentStatus(d.file, d.document, d.title) for d in failed]))
    state.jobs.start(job, request_settings(request, old.collection), run=partial(_retry, state))
    return job.view()


@router.get("/collections/{collection}/removal/{document:path}")
def removal(request: Request, collection: str, document: str) -> dict[str, Any]:
    """What ``DELETE /collections/{c}/documents/{doc}`` would retract, read without changing anything:
    its chunks and quads, the facts only it supports (a sample by label), and the traces it would mark stale."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        p = removal_preview(rt.store, rt.librarian, document_iri(document))
    return {"document": p.document.value, "title": p.title, "chunks": p.chunks, "quads": p.quads, "facts": p.facts,
            "sample": [list(f) for f in p.sample], "edges": p.edges, "retracted_chunks": p.retracted_chunks,
            "traces": [{"session_id": t.session_id, "query": t.query} for t in p.traces]}


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the job list, retry and removal-preview routes under ``prefix``."""
    app.include_router(router, prefix=prefix)
