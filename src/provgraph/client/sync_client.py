"""``Client``: the blocking face of :class:`AsyncClient` (it runs the async client on its own loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from provgraph.client.async_client import AsyncClient
from provgraph.events import Event
from provgraph.explain.model import Trace, TraceSummary
from provgraph.extract.base import ChunkInput
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.pipeline import LoadResult
from provgraph.retrieval.retrieve import Retrieval
from provgraph.session import Answer

__all__ = ["Client"]

T = TypeVar("T")


class Client:
    """A provgraph server's collection, blocking: the methods of :class:`AsyncClient`, not awaited."""

    def __init__(self, url: str, token: str | None = None, *, collection: str = "default",
                 timeout: float = 300.0) -> None:
        self._loop = asyncio.new_event_loop()
        self._async = AsyncClient(url, token, collection=collection, timeout=timeout)

    @property
    def collection(self) -> str:
        return self._async.collection

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(work)

    def _iterate(self, events: Any) -> Iterator[Event]:
        try:
            while True:
                try:
                    yield self._run(events.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._run(events.aclose())

    def collections(self) -> list[dict[str, str]]:
        """The caller's collections."""
        return self._run(self._async.collections())

    def load(self, paths: Sequence[str | Path], *, extractors: str | None = None) -> list[LoadResult]:
        """Upload and load files or folders; waits for the job. What ``Provgraph.load`` returns."""
        return self._run(self._async.load(paths, extractors=extractors))

    def load_job(self, paths: Sequence[str | Path], *, extractors: str | None = None) -> dict[str, Any]:
        """Upload and load as one job, waiting for it; the finished job with its summary."""
        return self._run(self._async.load_job(paths, extractors=extractors))

    def extract(self, chunks: Sequence[ChunkInput], *, extractors: str | None = None) -> list[ChunkOutcome]:
        """Extract (only chunks not yet extracted) and embed."""
        return self._run(self._async.extract(chunks, extractors=extractors))

    def documents(self) -> list[dict[str, Any]]:
        """The collection's documents."""
        return self._run(self._async.documents())

    def document(self, doc: str) -> dict[str, Any]:
        """One document's metadata and parts."""
        return self._run(self._async.document(doc))

    def retrieve(self, question: str, *, k: int = 5, mode: str = "graph") -> Retrieval:
        """The ranked passages with scores, provenance and facts (as ``Provgraph.retrieve``)."""
        return self._run(self._async.retrieve(question, k=k, mode=mode))

    def remove(self, doc: str) -> int:
        """Remove a document; returns the quads removed."""
        return self._run(self._async.remove(doc))

    def provenance(self, doc: str) -> dict[str, Any]:
        """The document → page → chunk → edges tree."""
        return self._run(self._async.provenance(doc))

    def traces(self, *, include_sub_traces: bool = False, limit: int | None = None) -> list[TraceSummary]:
        """Trace summaries, newest first."""
        return self._run(self._async.traces(include_sub_traces=include_sub_traces, limit=limit))

    def trace(self, session_id: str, *, provenance: bool = False) -> Trace:
        """A stored trace, typed."""
        return self._run(self._async.trace(session_id, provenance=provenance))

    def delete_trace(self, session_id: str) -> int:
        """Delete a trace; returns the quads removed."""
        return self._run(self._async.delete_trace(session_id))

    def delete_traces_before(self, moment: datetime) -> list[str]:
        """Delete every top-level trace started before ``moment``."""
        return self._run(self._async.delete_traces_before(moment))

    def backup(self, file: str | Path) -> dict[str, int]:
        """Write the collection's backup archive to ``file``; returns its counts."""
        return self._run(self._async.backup(file))

    def restore(self, file: str | Path) -> dict[str, Any]:
        """Restore a backup archive into this (empty or new) collection."""
        return self._run(self._async.restore(file))

    def check(self, *, repair: bool = False) -> dict[str, Any]:
        """What ``provgraph check [--repair] --format json`` prints for this collection."""
        return self._run(self._async.check(repair=repair))

    def sparql(self, query: str) -> Any:
        """SELECT/ASK: SPARQL JSON results; CONSTRUCT: N-Triples bytes."""
        return self._run(self._async.sparql(query))

    def export(self, fmt: str = "nquads") -> bytes:
        """The whole collection."""
        return self._run(self._async.export(fmt))

    def import_data(self, data: bytes, fmt: str = "nquads") -> int:
        """Import atomically; returns the quads imported."""
        return self._run(self._async.import_data(data, fmt))

    def conversations(self) -> list[dict[str, Any]]:
        """The collection's conversations, newest first."""
        return self._run(self._async.conversations())

    def conversation(self, conversation: str) -> dict[str, Any]:
        """A conversation as a thread."""
        return self._run(self._async.conversation(conversation))

    def delete_conversation(self, conversation: str) -> int:
        """Delete a conversation and its turns' traces; returns how many traces went."""
        return self._run(self._async.delete_conversation(conversation))

    def stream_graph_rag(self, question: str, **limits: Any) -> Iterator[Event]:
        """GraphRAG events as the server writes them."""
        return self._iterate(self._async.stream_graph_rag(question, **limits))

    def stream_document_rag(self, question: str, **options: Any) -> Iterator[Event]:
        """Document RAG events as the server writes them."""
        return self._iterate(self._async.stream_document_rag(question, **options))

    def stream_agent(self, question: str, **options: Any) -> Iterator[Event]:
        """The agent's events as the server writes them."""
        return self._iterate(self._async.stream_agent(question, **options))

    def graph_rag(self, question: str, **limits: Any) -> Answer:
        """Answer from the knowledge graph."""
        return self._run(self._async.graph_rag(question, **limits))

    def document_rag(self, question: str, **options: Any) -> Answer:
        """Answer from the most similar chunks."""
        return self._run(self._async.document_rag(question, **options))

    def stream_global_rag(self, question: str, **options: Any) -> Iterator[Event]:
        """Global search events as the server writes them."""
        return self._iterate(self._async.stream_global_rag(question, **options))

    def global_rag(self, question: str, **options: Any) -> Answer:
        """Answer a question about the whole corpus from the community reports, every sentence cited."""
        return self._run(self._async.global_rag(question, **options))

    def agent(self, question: str, **options: Any) -> Answer:
        """The agent's answer."""
        return self._run(self._async.agent(question, **options))

    def close(self) -> None:
        """Close the connections and the loop."""
        if not self._loop.is_closed():
            self._run(self._async.aclose())
            self._loop.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
