"""``provgraph worker``: extract the documents ``load`` enqueued (PROVGRAPH_QUEUE_URL), one job at a time.

A job is acked only after its quads, vectors and completion record are committed; a job that fails is
delivered again (only its failed or missing chunks are redone), and after its last delivery it is
marked failed and dead-lettered. Killing a worker loses nothing: its job comes back after ack_wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import typer

from provgraph.cli.common import LLM_OPTION, echo, settings_from
from provgraph.config import Settings
from provgraph.errors import ConfigError, ProvgraphError, StoreUnavailable
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.models.base import Embedder
from provgraph.queue.jobs import Job
from provgraph.queue.nats_queue import Delivery, NatsQueue
from provgraph.rdf.terms import Iri
from provgraph.runtime import Runtime, job_queue, job_table
from provgraph.store.pg_jobs import DONE, FAILED, QUEUED, RUNNING, JobTable

__all__ = ["register", "run_worker"]

_STORE_PATIENCE = 180.0  # seconds a job waits for an unreachable database (in all) before it is handed back


class _Worker:
    """Runtimes by collection (sharing one embedder), the queue and the jobs table."""

    def __init__(self, settings: Settings, queue: NatsQueue, table: JobTable) -> None:
        self.settings = settings
        self.queue = queue
        self.table = table
        self.runtimes: dict[tuple[str, str], Runtime] = {}
        self.embedder: Embedder | None = None

    def runtime(self, job: Job) -> Runtime:
        key = (job.user, job.collection)
        if key not in self.runtimes:
            settings = self.settings.model_copy(update={"user": job.user, "collection": job.collection})
            rt = Runtime(settings, create=False, embedder=self.embedder)
            self.embedder = rt.embedder
            self.runtimes[key] = rt
        return self.runtimes[key]

    def extract(self, job: Job) -> None:
        """The job's document extracted and committed, on its own event loop (this worker's keeps the job's
        heartbeat going meanwhile); raises with the first chunk failure."""
        rt = self.runtime(job)

        async def run() -> list[ChunkOutcome]:
            try:
                chunks = list(rt.loader().stored_chunks(Iri(job.document)))
                return await rt.extraction(rt.extractors(job.extractors)).run(chunks, only_missing=True,
                                                                             on_commit=rt.commit_documents)
            finally:
                llm = rt.__dict__.pop("llm", None)  # its client belongs to this loop
                if llm is not None:
                    await llm.aclose()

        failed = [o for o in asyncio.run(run()) if o.failed]
        if failed:
            raise ProvgraphError(f"{len(failed)} chunk extraction(s) failed, first {failed[0].chunk.value} "
                                 f"({failed[0].component}): {failed[0].error}")

    async def _heartbeat(self, delivery: Delivery) -> None:
        """While the job runs: keep it from being delivered to another worker."""
        while True:
            await asyncio.sleep(self.queue.ack_wait / 3)
            await delivery.working()

    def forget(self, job: Job) -> None:
        """Drop the job's collection runtime (after the database dropped its connections: the next opens new ones)."""
        rt = self.runtimes.pop((job.user, job.collection), None)
        if rt is not None:
            with contextlib.suppress(Exception):  # its connections are broken: closing them may fail
                rt.close()

    async def _extract_riding_out_restarts(self, job: Job) -> None:
        """Extract the job; while the database is unreachable (a restart) wait for it and go on in this delivery
        (its heartbeat keeps it ours), so a restart costs the job none of its deliveries. The runtime is opened
        again after each wait: every connection the restart broke is replaced at once (reusing it, each of them
        failed the extraction once more)."""
        deadline = time.monotonic() + _STORE_PATIENCE
        while True:
            try:
                await asyncio.to_thread(self.extract, job)
                return
            except StoreUnavailable as exc:
                self.forget(job)
                if time.monotonic() > deadline:
                    raise
                echo(f"job {job.id}: {str(exc).splitlines()[0]}; waiting for the database", err=True)
                await asyncio.to_thread(self.table.states, [job.id])  # returns once PostgreSQL answers (a minute at most)

    async def handle(self, delivery: Delivery) -> None:
        job = delivery.job
        if job is None:
            await self.queue.dead_letter(delivery, "not an extraction job")
            await delivery.ack()
            return
        await asyncio.to_thread(self.table.mark, job.id, RUNNING)
        beat = asyncio.create_task(self._heartbeat(delivery))
        try:
            await self._extract_riding_out_restarts(job)
        except Exception as exc:  # noqa: BLE001 - any failure is the job's: recorded, redelivered or dead-lettered
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if delivery.last:
                await asyncio.to_thread(self.table.mark, job.id, FAILED, why)
                await self.queue.dead_letter(delivery, why)
                await delivery.ack()
            else:
                await asyncio.to_thread(self.table.mark, job.id, QUEUED, why)
                await delivery.nak(delay=min(30.0, float(delivery.attempt)))  # a restarting server has time to return
            echo(f"job {job.id} ({job.document}, attempt {delivery.attempt}): {why}", err=True)
            return
        finally:
            beat.cancel()
        await asyncio.to_thread(self.table.mark, job.id, DONE)
        await delivery.ack()  # after the commit: a worker killed (or NATS away) before this redoes the job, writing nothing new
        echo(f"job {job.id} done: {job.document} in {job.user}/{job.collection}")

    def close(self) -> None:
        for rt in self.runtimes.values():
            rt.close()
        self.table.close()


async def run_worker(settings: Settings, *, max_jobs: int | None = None, idle_exit: float | None = None) -> int:
    """Take jobs until ``max_jobs`` are handled or none came for ``idle_exit`` seconds; returns how many."""
    queue = job_queue(settings)
    if queue is None:
        raise ConfigError("provgraph worker needs PROVGRAPH_QUEUE_URL (nats://…) and PROVGRAPH_STORE_URL")
    worker = _Worker(settings, queue, job_table(settings))
    handled, idle_since = 0, time.monotonic()
    try:
        async with queue:
            while max_jobs is None or handled < max_jobs:
                delivery = await queue.next(timeout=1.0)
                if delivery is None:
                    if idle_exit is not None and time.monotonic() - idle_since >= idle_exit:
                        break
                    continue
                await worker.handle(delivery)
                handled += 1
                idle_since = time.monotonic()
    finally:
        worker.close()
    return handled


def worker(
    ctx: typer.Context,
    llm: str = LLM_OPTION,
    max_jobs: int = typer.Option(None, "--max-jobs", help="Stop after this many jobs (default: run until stopped)."),
    idle_exit: float = typer.Option(None, "--idle-exit", help="Stop when no job came for this many seconds."),
) -> None:
    """Extract the documents `load` enqueued on PROVGRAPH_QUEUE_URL (any collection of the database).

    Example: PROVGRAPH_QUEUE_URL=nats://127.0.0.1:4222 provgraph worker
    """
    settings = settings_from(ctx, llm=llm)
    handled = asyncio.run(run_worker(settings, max_jobs=max_jobs, idle_exit=idle_exit))
    echo(f"worker: {handled} job(s) handled", err=True)


def register(app: typer.Typer) -> None:
    """Add ``worker``."""
    app.command("worker")(worker)
