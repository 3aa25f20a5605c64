"""Each document of a load job as it goes: queued → loading → extracting → its outcome, with every
failed chunk extraction and its reason (what the viewer's job view shows, and a retry redoes)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provgraph.extract.pipeline import ChunkOutcome
    from provgraph.ingest.pipeline import LoadResult

__all__ = ["DocumentStatus", "DocumentProgress"]


@dataclass
class DocumentStatus:
    """One document of a job. ``status``: queued, loading, extracting, then as ``load`` reports it
    (loaded, replaced, unchanged, partly extracted, extraction failed), or failed (the file could not
    be loaded: ``error`` says why)."""

    file: str
    document: str | None = None
    title: str | None = None
    status: str = "queued"
    chunks: int = 0  # chunk extractions to run (chunks × extractors)
    chunks_done: int = 0
    facts: int = 0
    error: str | None = None
    failures: list[dict[str, str]] = field(default_factory=list)  # {"chunk", "component", "error"}
    outcome: str = "loaded"  # what the load did (loaded, replaced, unchanged), shown once extraction ends

    def view(self) -> dict[str, Any]:
        return {"file": self.file, "document": self.document, "title": self.title, "status": self.status,
                "chunks": self.chunks, "chunks_done": self.chunks_done, "facts": self.facts, "error": self.error,
                "failures": [dict(f) for f in self.failures]}


class DocumentProgress:
    """The documents of one job, updated from its worker thread and read by requests."""

    def __init__(self, documents: Sequence[DocumentStatus]) -> None:
        self.documents = list(documents)
        self._by_chunk: dict[str, DocumentStatus] = {}
        self._lock = threading.Lock()

    @classmethod
    def of_files(cls, names: Sequence[str]) -> DocumentProgress:
        return cls([DocumentStatus(name) for name in names])

    def view(self) -> list[dict[str, Any]]:
        with self._lock:
            return [d.view() for d in self.documents]

    def records(self) -> list[dict[str, Any]]:
        """Every field of each document (what the job table stores)."""
        with self._lock:
            return [dataclasses.asdict(d) for d in self.documents]

    @classmethod
    def of_records(cls, records: Sequence[dict[str, Any]]) -> DocumentProgress:
        names = {f.name for f in dataclasses.fields(DocumentStatus)}
        return cls([DocumentStatus(**{k: v for k, v in r.items() if k in names}) for r in records])

    def loading(self, i: int) -> None:
        with self._lock:
            self.documents[i].status = "loading"

    def failed(self, i: int, message: str) -> None:
        with self._lock:
            self.documents[i].status, self.documents[i].error = "failed", message

    def loaded(self, i: int, result: LoadResult, extractors: int) -> None:
        """The file is stored and chunked; its chunks wait for extraction."""
        with self._lock:
            doc = self.documents[i]
            doc.document, doc.title = result.document.value, result.title
            doc.chunks, doc.chunks_done = len(result.chunks) * extractors, 0
            doc.outcome = result.status
            doc.status = "extracting" if result.chunks else result.status
            for chunk in result.chunks:
                self._by_chunk[chunk.iri.value] = doc

    def extracting(self, i: int, chunks: Sequence[str], extractors: int) -> None:
        """A document already stored whose ``chunks`` are extracted again (a retry)."""
        with self._lock:
            doc = self.documents[i]
            doc.status, doc.outcome, doc.error = "extracting", "loaded", None
            doc.chunks, doc.chunks_done, doc.failures = len(chunks) * extractors, 0, []
            for chunk in chunks:
                self._by_chunk[chunk] = doc

    def outcome(self, o: ChunkOutcome) -> None:
        """One chunk extraction ended."""
        with self._lock:
            doc = self._by_chunk.get(o.chunk.value)
            if doc is None:
                return
            doc.chunks_done += 1
            doc.facts += o.facts
            if o.failed:
                doc.failures.append({"chunk": o.chunk.value, "component": o.component, "error": o.error or ""})

    def worked(self, document: str, error: str | None) -> None:
        """A worker's job for ``document`` ended (``error``: it failed, every chunk extraction counted as failed)."""
        with self._lock:
            for doc in self.documents:
                if doc.document == document and doc.status == "extracting":
                    doc.chunks_done = doc.chunks
                    if error is not None:
                        doc.failures = [{"chunk": "", "component": "worker", "error": error}] * max(1, doc.chunks)

    def finish(self) -> None:
        """Every document still extracting gets its outcome."""
        with self._lock:
            for doc in self.documents:
                if doc.status == "extracting":
                    failed = len(doc.failures)
                    doc.status = ("extraction failed" if failed and failed >= doc.chunks
                                  else "partly extracted" if failed else doc.outcome)
