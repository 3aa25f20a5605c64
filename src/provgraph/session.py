"""The Python API: one object per collection, doing what the CLI does.

>>> from provgraph import Provgraph                                   # doctest: +SKIP
>>> with Provgraph(collection="demo") as pg:                          # doctest: +SKIP
...     pg.load(["examples/corpus"])
...     answer = pg.graph_rag("What did Marie Curie discover?")
...     print(answer.text)
...     for s in answer.sources:
...         print(s.marker, s.title, s.page_number, s.offset, s.length)

``stream_*`` methods give the typed events (``provgraph.events``) as they happen; the plain
methods collect them into an :class:`Answer`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from provgraph.config import load_settings
from provgraph.conversation.history import conversation_json, delete_conversation, list_conversations
from provgraph.conversation.thread import load_thread, thread_json
from provgraph.conversation.turn import ask_in
from provgraph import errors
from provgraph.errors import ProvgraphError
from provgraph.events import AnswerPiece, ErrorMessage, Event, Explain, Final, Source
from provgraph.explain.model import Trace
from provgraph.explain.traces import load_trace
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.paths import expand_paths
from provgraph.ingest.pipeline import LoadResult
from provgraph.retrieval.graph_rag import GraphRagParams
from provgraph.retrieval.retrieve import Retrieval, Retriever
from provgraph.runtime import Runtime

__all__ = ["Provgraph", "Answer", "collect_answer"]


@dataclass
class Answer:
    """A finished query: the answer, its sources, its trace steps and warnings.

    ``sources`` holds each cited source once (its marker, chunk, page and document), by marker; the
    edges each supports are in the trace (``pg.trace(answer.session_id)``) and in the stream's
    final event, which has one source per selected edge.
    """

    session_id: str | None  # None: no trace was written (traces = false)
    text: str
    sources: tuple[Source, ...]
    steps: list[Explain] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    conversation: str | None = None
    turn: int | None = None


def _once_each(sources: Sequence[Source]) -> tuple[Source, ...]:
    """One source per (marker, chunk), in marker order (unmarked ones last), without its edge and its sentence."""
    unique: dict[tuple[str | None, str], Source] = {}
    for s in sources:
        unique.setdefault((s.marker, s.chunk), replace(s, edge=None, subgraph=None, evidence=None))

    def order(s: Source) -> tuple[int, int]:
        number = s.marker[1:-1] if s.marker else ""
        return (int(number), 0) if number.isdigit() else (1 << 30, 0)

    return tuple(sorted(unique.values(), key=order))


class Provgraph:
    """A collection on embedded defaults (or whatever the settings choose)."""

    def __init__(self, collection: str = "default", *, user: str = "default", home: str | Path | None = None,
                 **settings: Any) -> None:
        self.settings = load_settings(collection=collection, user=user,
                                      home=str(home) if home is not None else None, **settings)
        self.runtime = Runtime(self.settings)

    def load(self, paths: Sequence[str | Path], *, extractors: str | None = None) -> list[LoadResult]:
        """Load files or folders (recursively), then extract and embed their chunks."""
        files, errors = expand_paths([str(p) for p in paths])
        if errors:
            raise ProvgraphError("; ".join(errors))
        loader = self.runtime.loader()
        results = [loader.load_file(f) for f in files]
        self.runtime.commit_documents([r.document for r in results if not r.chunks])
        self.extract([c for r in results for c in r.chunks], extractors=extractors)
        return results

    def extract(self, chunks: Sequence[Any], *, extractors: str | None = None) -> list[ChunkOutcome]:
        """Extract (only chunks not yet extracted) and embed; documents done are committed."""
        pipe = self.runtime.extraction(self.runtime.extractors(extractors))
        return asyncio.run(pipe.run(list(chunks), only_missing=True, on_commit=self.runtime.commit_documents))

    def _turn(self, conversation: str | None, question: str,
              ask: Callable[[str], AsyncIterator[Event]]) -> AsyncIterator[Event]:
        rt = self.runtime
        return ask_in(rt.store, rt.llm, rt.settings, conversation, question, ask)

    def stream_graph_rag(self, question: str, *, conversation: str | None = None, **limits: Any) -> AsyncIterator[Event]:
        """GraphRAG events as they happen (explain steps, answer pieces, final); ``limits`` override settings.

        ``conversation`` asks it as the next turn of that conversation (started when new).
        """
        engine = self.runtime.graph_rag(GraphRagParams.from_settings(self.settings, **limits))
        return self._turn(conversation, question, engine.ask)

    def stream_document_rag(self, question: str, *, conversation: str | None = None) -> AsyncIterator[Event]:
        """Document RAG events as they happen (``doc_limit`` from the settings)."""
        return self._turn(conversation, question, self.runtime.document_rag().ask)

    def stream_agent(self, question: str, *, conversation: str | None = None,
                     group: Sequence[str] | None = None, state: str | None = None) -> AsyncIterator[Event]:
        """The ReAct agent's events (needs an LLM); ``group``/``state`` restrict its tools (agent/groups.py)."""
        return self._turn(conversation, question,
                          lambda q: self.runtime.ask_agent(q, groups=group, state=state))

    def graph_rag(self, question: str, *, conversation: str | None = None, **limits: Any) -> Answer:
        """Answer from the knowledge graph; raises the step's error if the query failed."""
        return self._collect(self.stream_graph_rag(question, conversation=conversation, **limits))

    def document_rag(self, question: str, *, conversation: str | None = None) -> Answer:
        """Answer from the most similar chunks."""
        return self._collect(self.stream_document_rag(question, conversation=conversation))

    def agent(self, question: str, *, conversation: str | None = None, group: Sequence[str] | None = None,
              state: str | None = None) -> Answer:
        """The agent's answer (thoughts and observations are in ``steps``' trace); needs an LLM."""
        return self._collect(self.stream_agent(question, conversation=conversation, group=group, state=state))

    def _collect(self, events: AsyncIterator[Event]) -> Answer:
        async def run() -> Answer:
            try:
                return await collect_answer(events)
            finally:
                if "llm" in self.runtime.__dict__ and self.runtime.llm is not None:
                    await self.runtime.llm.aclose()  # the client belongs to this event loop

        return asyncio.run(run())

    def conversations(self) -> list[dict[str, Any]]:
        """The collection's conversations, newest first (``conversations list --format json``)."""
        return [conversation_json(c) for c in list_conversations(self.runtime.store)]

    def conversation(self, conversation: str) -> dict[str, Any]:
        """A conversation as a thread (``conversations show ID --format json``); NotFound if unknown."""
        return thread_json(load_thread(self.runtime.store, self.runtime.librarian, conversation))

    def delete_conversation(self, conversation: str) -> int:
        """Delete a conversation and its turns' traces; returns how many traces went."""
        return len(delete_conversation(self.runtime.store, self.runtime.librarian, conversation).questions)

    def retrieve(self, question: str, *, k: int = 5, mode: str = "graph") -> Retrieval:
        """The ``k`` best passages with their scores, provenance and supporting subgraph (no answer)."""
        return Retriever.of(self.runtime).retrieve(question, k=k, mode=mode)

    def trace(self, session_id: str) -> Trace:
        """A stored trace (GraphRAG, Document RAG or agent), typed."""
        return load_trace(self.runtime.store, session_id, librarian=self.runtime.librarian)

    def close(self) -> None:
        """Close the collection's store, librarian and indexes."""
        self.runtime.close()

    def __enter__(self) -> Provgraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def collect_answer(events: AsyncIterator[Event]) -> Answer:
    """An :class:`Answer` from an event stream; a failed query raises its error's class (e.g. NotFound)."""
    steps: list[Explain] = []
    pieces: list[str] = []
    async for ev in events:
        if isinstance(ev, Explain):
            steps.append(ev)
        elif isinstance(ev, AnswerPiece):
            pieces.append(ev.text)
        elif isinstance(ev, ErrorMessage):
            cls = getattr(errors, ev.type, None)
            raise (cls if isinstance(cls, type) and issubclass(cls, ProvgraphError) else ProvgraphError)(ev.message)
        elif isinstance(ev, Final):
            return Answer(ev.session_id, ev.answer or "".join(pieces), _once_each(ev.sources), steps, ev.warnings,
                          ev.conversation, ev.turn)
    raise ProvgraphError("the query ended without a final message")
