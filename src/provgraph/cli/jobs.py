"""``load`` with a job queue: enqueue one extraction job per loaded document, wait on the jobs table."""

from __future__ import annotations

import asyncio
import time

from rich.progress import Progress

from provgraph.ingest.pipeline import LoadResult
from provgraph.queue.jobs import Job, job_id
from provgraph.queue.nats_queue import NatsQueue
from provgraph.runtime import Runtime, job_table
from provgraph.store.pg_jobs import DONE, FAILED

__all__ = ["enqueue", "wait_for", "job_states"]

_POLL = 0.2  # seconds between two reads of the jobs table


def enqueue(rt: Runtime, queue: NatsQueue, results: list[LoadResult], extractors: str | None) -> list[dict[str, object]]:
    """A job per document (the jobs table first, then the queue); rows of document, chunks and job id."""
    user, collection = rt.ref.user, rt.ref.collection
    jobs = [Job(job_id(user, collection, r.document.value, rt.librarian.get(r.document.value).content_hash),
                user, collection, r.document.value, extractors) for r in results]
    table = job_table(rt.settings)
    try:
        table.enqueue([(j.id, j.user, j.collection, j.document) for j in jobs])
    finally:
        table.close()

    async def publish() -> None:
        async with queue:
            await queue.publish(jobs)

    asyncio.run(publish())
    return [{"document": j.document, "chunks": len(r.chunks), "job": j.id} for j, r in zip(jobs, results)]


def job_states(rt: Runtime, ids: list[str]) -> dict[str, tuple[str, str | None]]:
    """(state, error) of each job."""
    table = job_table(rt.settings)
    try:
        return {i: (state, error) for i, (state, error, _) in table.states(ids).items()}
    finally:
        table.close()


def wait_for(rt: Runtime, ids: list[str], progress: Progress) -> None:
    """Until every job is done or failed, advancing a progress bar by finished jobs."""
    task = progress.add_task("extract", total=len(ids))
    table = job_table(rt.settings)
    try:
        while True:
            finished = sum(1 for state, _, _ in table.states(ids).values() if state in (DONE, FAILED))
            progress.update(task, completed=finished)
            if finished == len(ids):
                return
            time.sleep(_POLL)
    finally:
        table.close()
