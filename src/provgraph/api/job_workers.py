"""A load job's extraction handed to ``provgraph worker`` processes (``PROVGRAPH_QUEUE_URL``): one queue job a stored
document, then the load job follows the jobs table until each is done or failed, as ``provgraph load`` waits."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from provgraph.cli.jobs import enqueue
from provgraph.ingest.pipeline import LoadResult
from provgraph.queue.nats_queue import NatsQueue
from provgraph.runtime import Runtime, job_table
from provgraph.store.pg_jobs import DONE, FAILED

if TYPE_CHECKING:
    from provgraph.api.routes_jobs import Job

__all__ = ["extract_by_workers"]

_POLL = 0.2  # seconds between two reads of the jobs table


def extract_by_workers(job: Job, rt: Runtime, queue: NatsQueue, results: list[LoadResult],
                       stopping: threading.Event) -> list[str]:
    """Enqueue the documents with chunks and wait for the workers; the errors of the queue jobs that failed (one
    line each). A server shutting down stops waiting: the workers go on, and the jobs table keeps their outcome."""
    docs = job.documents
    assert docs is not None
    rows = enqueue(rt, queue, [r for r in results if r.chunks], job.extractors)
    pending = {str(row["job"]): str(row["document"]) for row in rows}
    chunks = {str(row["job"]): int(row["chunks"]) for row in rows}  # type: ignore[call-overload]
    per_chunk = job.chunks // max(1, sum(chunks.values()))  # the extractors each chunk has
    errors: list[str] = []
    table = job_table(rt.settings)
    try:
        while pending and not stopping.is_set():
            for ident, (state, error, _) in table.states(list(pending)).items():
                if state not in (DONE, FAILED):
                    continue
                document = pending.pop(ident)
                docs.worked(document, error if state == FAILED else None)
                job.chunks_done += chunks[ident] * per_chunk
                if state == FAILED:
                    errors.append(f"{document} (job {ident}): {error}")
                job.touch()
            stopping.wait(_POLL)
    finally:
        table.close()
    if pending:
        errors.append(f"the server stopped waiting for {len(pending)} worker job(s): provgraph load or GET /jobs of "
                      "a running server reports them")
    return errors
