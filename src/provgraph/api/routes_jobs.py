"""Loads as background jobs: upload files (multipart), then follow the job (GET, or an SSE stream).

A job stores, decodes, chunks, extracts and embeds its files in a worker thread, holding its
collection's write lock; queries keep answering from what is committed meanwhile. On shutdown
no new file is started and running extraction finishes, so every collection stays consistent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, File, Form, Request, UploadFile
from fastapi.responses import StreamingResponse

from provgraph.api.errors import ApiError, one_line
from provgraph.api.job_documents import DocumentProgress
from provgraph.api.job_workers import extract_by_workers
from provgraph.api.job_table import KEEP_FINISHED, JobTable
from provgraph.api.objects import from_objects, to_objects
from provgraph.api.routes_data import ERRORS, RESULT_FORM, ResultForm
from provgraph.api.schemas import NAME, ExtractRequest, JobOut
from provgraph.api.state import ServerState, request_settings, state_of, user_of
from provgraph.api.uploads import removed_on_failure, upload_name
from provgraph.config import Settings
from provgraph.errors import InputError, NotFound, ProvgraphError
from provgraph.explain.documents import load_summary
from provgraph.extract.base import ChunkInput
from provgraph.rdf.terms import Iri
from provgraph.ingest.pipeline import LoadResult
from provgraph.layout import check_name
from provgraph.runtime import job_queue

if TYPE_CHECKING:
    from provgraph.runtime import Runtime

__all__ = ["install", "Jobs", "Job", "extract_for"]

router = APIRouter(responses=ERRORS, tags=["documents"])
KEEP_TYPED = 32  # finished jobs whose typed results (with their chunk texts) stay in memory


@dataclass
class Job:
    """One background load and its progress."""

    id: str
    user: str
    collection: str
    files: list[Path]
    folder: Path
    extractors: str | None = None
    status: str = "queued"
    files_done: int = 0
    chunks: int = 0
    chunks_done: int = 0
    result: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    loaded: list[LoadResult] | None = None  # typed results (chunk texts included): kept for recent jobs only
    changed: threading.Event = field(default_factory=threading.Event)
    documents: DocumentProgress | None = None  # each document's status (one per file unless given)
    retry_of: str | None = None
    created: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.documents is None:
            self.documents = DocumentProgress.of_files([p.name for p in self.files])

    def record(self) -> dict[str, Any]:
        """The job as the job table stores it."""
        assert self.documents is not None
        return {"id": self.id, "user": self.user, "collection": self.collection, "files": [p.name for p in self.files],
                "extractors": self.extractors, "status": self.status, "files_done": self.files_done,
                "chunks": self.chunks, "chunks_done": self.chunks_done, "result": self.result,
                "errors": list(self.errors), "retry_of": self.retry_of, "created": self.created,
                "documents": self.documents.records()}

    @classmethod
    def of_record(cls, record: dict[str, Any], uploads: Path) -> Job:
        """A job the table stored (``uploads``: the folder of the server's uploaded files)."""
        folder = uploads / record["id"]
        return cls(record["id"], record["user"], record["collection"], [folder / n for n in record["files"]], folder,
                   extractors=record.get("extractors"), status=record["status"],
                   files_done=int(record.get("files_done", 0)), chunks=int(record.get("chunks", 0)),
                   chunks_done=int(record.get("chunks_done", 0)), result=record.get("result"),
                   errors=[str(e) for e in record.get("errors", [])], retry_of=record.get("retry_of"),
                   created=float(record.get("created", 0)),
                   documents=DocumentProgress.of_records(record.get("documents", [])))

    def view(self) -> dict[str, Any]:
        """The job as the API shows it."""
        assert self.documents is not None
        return {"id": self.id, "status": self.status, "collection": self.collection, "files": len(self.files),
                "files_done": self.files_done, "chunks": self.chunks, "chunks_done": self.chunks_done,
                "result": self.result, "errors": list(self.errors), "documents": self.documents.view(),
                "retry_of": self.retry_of}

    def touch(self) -> None:
        self.changed.set()


class Jobs:
    """The server's load jobs; each runs in its own thread. The job table (``{home}/jobs``) keeps them
    across restarts, each user's most recent finished ones (``api/job_table.py``)."""

    def __init__(self, state: ServerState, *, keep: int = KEEP_FINISHED) -> None:
        self.state = state
        self.jobs: dict[str, Job] = {}  # oldest first
        self.stopping = threading.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._typed: deque[Job] = deque()  # finished jobs still holding their typed results, oldest first
        self._typed_lock = threading.Lock()
        self.table = JobTable(state.settings.home / "jobs", keep)
        uploads = state.settings.home / "uploads"
        for record in self.table.load():
            try:
                job = Job.of_record(record, uploads)
            except (KeyError, TypeError, ValueError):  # a record of another version: not a job to show
                self.table.drop([str(record["id"])])
                continue
            self.jobs[job.id] = job
            if job.retry_of is None:
                shutil.rmtree(job.folder, ignore_errors=True)  # an interrupted job's leftover upload
        self._prune()

    def _prune(self) -> None:
        """Forget each user's finished jobs past the table's bound."""
        gone = self.table.over((j.id, j.user, j.status) for j in list(self.jobs.values()))
        for job_id in gone:
            self.jobs.pop(job_id, None)
        self.table.drop(gone)

    def _save(self, job: Job) -> None:
        try:
            self.table.save(job.record())
        except OSError:  # a full disk: the job goes on, only a restart would lose it
            pass

    def keep_typed(self, job: Job, results: list[LoadResult]) -> None:
        """Hold a finished job's typed results, dropping those of older jobs past ``KEEP_TYPED``."""
        with self._typed_lock:
            job.loaded = results
            self._typed.append(job)
            while len(self._typed) > KEEP_TYPED:
                self._typed.popleft().loaded = None

    def get(self, user: str, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or job.user != user:
            raise NotFound(f"no job {job_id!r}")
        return job

    def start(self, job: Job, settings: Settings, run: Callable[[Job, Settings], None] | None = None) -> None:
        """Run ``job`` in a worker thread: a load of its files, or ``run(job, settings)``."""
        self.jobs[job.id] = job
        self._save(job)
        self._prune()
        task = asyncio.get_running_loop().create_task(asyncio.to_thread(self._tracked, run or self._run, job, settings))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _tracked(self, run: Callable[[Job, Settings], None], job: Job, settings: Settings) -> None:
        try:
            run(job, settings)
        finally:
            self._save(job)

    def _run(self, job: Job, settings: Settings) -> None:
        results: list[LoadResult] = []
        failed: list[str] = []
        outcomes: list[Any] = []
        by_workers: list[str] = []
        docs = job.documents
        assert docs is not None
        try:
            with self.state.pool.use(settings, create=True, write=True) as rt:
                job.status = "running"
                job.touch()
                chosen = rt.extractors(job.extractors)
                loader = rt.loader()
                for i, path in enumerate(job.files):
                    if self.stopping.is_set():
                        failed.append(f"{path.name}: not loaded, the server is shutting down")
                        docs.failed(i, failed[-1])
                        continue
                    docs.loading(i)
                    job.touch()
                    try:
                        results.append(loader.load_file(path, metadata={"source": path.name}))
                        docs.loaded(i, results[-1], len(chosen))
                    except ProvgraphError as exc:
                        failed.append(one_line(exc).replace(str(job.folder) + "/", ""))
                        docs.failed(i, failed[-1])
                    job.files_done += 1
                    job.touch()
                    self._save(job)  # a restart knows which files are stored (and may be retried)
                chunks = [c for r in results for c in r.chunks]
                job.chunks = len(chunks) * len(chosen)
                rt.commit_documents([r.document for r in results if not r.chunks])
                queue = job_queue(rt.settings) if chunks else None
                if queue is not None:  # workers extract them (PROVGRAPH_QUEUE_URL)
                    by_workers = extract_by_workers(job, rt, queue, results, self.stopping)
                elif chunks:
                    outcomes = extract_for(job, rt, chosen, chunks)
            self.keep_typed(job, results)
            job.result = load_summary(results, outcomes, failed)
            job.errors = failed + by_workers + [f"chunk {o.chunk.value} ({o.component}): {o.error}" for o in outcomes if o.failed]
            job.status = "done"
            docs.finish()
        except ProvgraphError as exc:
            job.errors.append(one_line(exc))
            job.status = "failed"
        finally:
            shutil.rmtree(job.folder, ignore_errors=True)
            job.touch()

    async def shutdown(self) -> None:
        """Start no new file; wait for running jobs to end their current work."""
        self.stopping.set()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=60)


def extract_for(job: Job, rt: Runtime, extractors: list[Any], chunks: list[ChunkInput]) -> list[Any]:
    """Extract ``chunks`` not yet extracted, counting each outcome on the job and its document;
    each document's completion record is written once all its chunks are."""
    pipe = rt.extraction(extractors)
    docs = job.documents
    assert docs is not None

    def advance(outcome: Any) -> None:
        job.chunks_done += 1
        docs.outcome(outcome)
        job.touch()

    async def extract() -> list[Any]:
        try:
            return await pipe.run(chunks, only_missing=True, progress=advance, on_commit=rt.commit_documents)
        finally:
            if rt.llm is not None:
                await rt.llm.aclose()

    return asyncio.run(extract())


@router.post("/collections/{collection}/documents", status_code=202, response_model=JobOut)
async def upload(request: Request, collection: str, files: list[UploadFile] = File(...),
                 extractors: str | None = Form(None)) -> dict[str, Any]:
    """Upload documents and load them in the background; the job's ID comes back at once."""
    state = state_of(request)
    check_name("collection", collection)
    settings = request_settings(request, collection)
    if not files:
        raise InputError("no files: send one or more as multipart field 'files'")
    job_id = uuid.uuid4().hex
    folder = state.settings.home / "uploads" / job_id
    paths: list[Path] = []
    taken: set[str] = set()
    with removed_on_failure(folder):
        for i, upload_file in enumerate(files):
            name = upload_name(upload_file.filename, i)
            if name in taken:
                raise InputError(f"two uploaded files are named {name}: document IDs come from file names")
            taken.add(name)
            path = folder / name
            with path.open("wb") as out:
                shutil.copyfileobj(upload_file.file, out)
            paths.append(path)
    job = Job(job_id, user_of(request), collection, paths, folder, extractors=extractors)
    state.jobs.start(job, settings)
    return job.view()


async def _job_stream(job: Job) -> AsyncIterator[bytes]:
    last: dict[str, Any] | None = None
    while True:
        view = job.view()
        if view != last:
            yield b"data: " + json.dumps(view, ensure_ascii=False).encode() + b"\n\n"
            last = view
        if view["status"] in ("done", "failed"):
            return
        job.changed.clear()
        await asyncio.to_thread(job.changed.wait, 0.5)


@router.get("/jobs/{job_id}", response_model=JobOut,
            responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}})
async def job(request: Request, job_id: str, form: ResultForm = RESULT_FORM) -> Any:
    """A load job's progress; with ``Accept: text/event-stream`` one ``data:`` per change until it ends.

    ``form=objects`` adds ``loaded``: each document's ``LoadResult`` as the Python client rebuilds it.
    """
    found = state_of(request).jobs.get(user_of(request), job_id)
    if "text/event-stream" in request.headers.get("accept", ""):
        return StreamingResponse(_job_stream(found), media_type="text/event-stream")
    if form != "objects":
        return found.view()
    if found.loaded is None and found.status == "done":
        raise NotFound(f"job {job_id}'s typed results are no longer kept (only the {KEEP_TYPED} most recent jobs'); "
                       "its summary is still here without form=objects")
    return {**found.view(), "loaded": to_objects(found.loaded or [])}


@router.post("/collections/{collection}/extract", response_model=list[dict[str, Any]])
def extract(request: Request, collection: str, body: ExtractRequest) -> list[Any]:
    """Extract and embed the given chunks (only those not yet extracted), under the write lock: what
    ``Provgraph.extract`` does; chunks and outcomes in the typed form (``ChunkInput``, ``ChunkOutcome``)."""
    chunks = from_objects(body.chunks)
    if not all(isinstance(c, ChunkInput) and isinstance(c.iri, Iri) and isinstance(c.document, Iri)
               and isinstance(c.text, str) for c in chunks):
        raise InputError("chunks must be ChunkInput objects (as Client.load's results carry them)")
    settings = request_settings(request, check_name("collection", collection))
    with state_of(request).pool.use(settings, write=True) as rt:
        pipe = rt.extraction(rt.extractors(body.extractors))

        async def run() -> list[Any]:
            try:
                return await pipe.run(chunks, only_missing=True, on_commit=rt.commit_documents)
            finally:
                if rt.llm is not None:
                    await rt.llm.aclose()

        outcomes = asyncio.run(run())
    return [to_objects(o) for o in outcomes]


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the job routes and the job runner."""
    state.jobs = Jobs(state)
    app.include_router(router, prefix=prefix)


__all__ += ["NAME", "ApiError"]
