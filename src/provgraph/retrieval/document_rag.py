"""Document RAG (SPEC §5.2): question → nearest chunks → an answer that cites them, explained.

Each step is written to ``urn:graph:retrieval`` as it completes and streamed as an ``Explain``:
question → exploration (the chunks, in rank order) → answer pieces → synthesis → ``Final``.
With an LLM the answer is generated in one streamed call from the chunks' texts, each shown
with an id (``[1]``, ``[2]``…) the answer cites; the synthesis records the cited chunks.
Without an LLM the answer is extractive: the sentences of the retrieved chunks that best answer
the question (:mod:`~provgraph.retrieval.answer_pick`), each with its chunk's marker
(``… in 1898 [2].``, as GraphRAG's extractive answers). With a :class:`HybridRetriever`, chunks
come from lexical + dense retrieval fused by rank (each passage says which retriever found it).
Any failure ends the stream with one
``ErrorMessage``; the steps already written stay.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np

from provgraph.errors import InputError
from provgraph.events import AnswerPiece, ErrorMessage, Event, Final, Source
from provgraph.extract.clean_text import FOOTNOTE
from provgraph.gc_pacing import rarer_collections
from provgraph.librarian.base import Librarian, NewRecord
from provgraph.models.base import ChatModel, Embedder, Message, system, user
from provgraph.provenance.citations import ChunkChoice, chunk_selection_quads, citation_quads
from provgraph.provenance.common import LlmCall
from provgraph.provenance.doc_rag import docrag_exploration_quads, docrag_question_quads
from provgraph.provenance.graph_rag import synthesis_quads
from provgraph.rdf.ids import (
    chunk_selection_iri,
    docrag_answer_iri,
    docrag_exploration_iri,
    docrag_question_iri,
    docrag_synthesis_iri,
    new_session_id,
)
from provgraph.rdf.terms import Iri
from provgraph.retrieval.markers import doc_rag_citations
from provgraph.retrieval.answer_pick import pick_sentences, question_parts
from provgraph.retrieval.background import running
from provgraph.retrieval.hybrid import Finding, HybridRetriever
from provgraph.retrieval.deadline import Deadline, Outcome, answer_pieces
from provgraph.retrieval.sources import chunk_sources
from provgraph.retrieval.synthesis import with_marker
from provgraph.retrieval.trace import TraceWriter, UsageTally
from provgraph.store.base import QuadStore
from provgraph.vectors.base import VectorIndex

__all__ = ["DocumentRag", "Passage", "cited_markers", "NO_PASSAGES", "EMPTY_ANSWER", "EXTRACT_SENTENCES"]

NO_PASSAGES = "No passage in this collection matches the question."
"""The answer when the chunk index returns nothing (no LLM is asked)."""

EMPTY_ANSWER = "No answer: the model returned an empty response for the retrieved passages."

EXTRACT_SENTENCES = 3
"""How many sentences an extractive (no-LLM) answer keeps."""

_CITATION = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")

_SYSTEM = (
    "You answer a question using only the numbered passages you are given. After each statement, "
    "cite the passages that support it with their ids in square brackets, like [1] or [2][3]. "
    "Cite only ids that appear in the list. If the passages do not answer the question, say so."
)


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrieved chunk shown to the answerer: rank (1-based, its marker number), IRI, text, score.

    ``found`` says which retriever(s) found it, at what rank and score (hybrid retrieval); ``retriever``
    names them for the trace.
    """

    rank: int
    chunk: Iri
    text: str
    score: float
    found: tuple[Finding, ...] = ()

    @property
    def retriever(self) -> str:
        """The retrievers that found this chunk, as recorded in the trace ('lexical+dense', or 'dense')."""
        return "+".join(f.retriever for f in self.found) or "dense"

    @property
    def marker(self) -> str:
        """The citation marker, e.g. ``[1]``."""
        return f"[{self.rank}]"


def cited_markers(answer: str, count: int) -> tuple[list[int], list[int]]:
    """The passage numbers an answer cites (first-cited first) and the invented ones (out of 1..count).

    >>> cited_markers("Radium glows [2]. It was found in 1898 [1, 2][7].", 3)
    ([2, 1], [7])
    """
    cited: list[int] = []
    invented: list[int] = []
    for group in _CITATION.findall(answer):
        for part in group.split(","):
            n = int(part)
            target = cited if 1 <= n <= count else invented
            if n not in target:
                target.append(n)
    return cited, invented


def _prompt(question: str, passages: Sequence[Passage]) -> list[Message]:
    # the source's own footnote markers ("[8]") are dropped so that only passage ids look like citations
    shown = "\n\n".join(f"{p.marker} {FOOTNOTE.sub('', p.text).strip()}" for p in passages)
    return [system(_SYSTEM), user(f"Passages:\n\n{shown}\n\nQuestion: {question}")]


class DocumentRag:
    """Answers questions from the chunk index; see the module docstring.

    ``llm=None`` is the no-LLM mode (extractive answers). ``clock`` gives the question's start time.
    When the LLM fails or runs past ``question_deadline`` seconds before answering, the answer is
    extractive too, and the warnings and the synthesis step's ``tg:reasoning`` say why.
    """

    def __init__(
        self,
        store: QuadStore,
        librarian: Librarian,
        embedder: Embedder,
        chunk_index: VectorIndex,
        llm: ChatModel | None,
        *,
        doc_limit: int = 5,
        clock: Callable[[], datetime] = _utcnow,
        trace: bool = True,
        retriever: HybridRetriever | None = None,
        question_deadline: float = 45.0,
    ) -> None:
        self.store = store
        self.librarian = librarian
        self.embedder = embedder
        self.chunk_index = chunk_index
        self.llm = llm
        self.doc_limit = doc_limit
        self.clock = clock
        self.retriever = retriever
        self.question_deadline = question_deadline
        self.trace = TraceWriter(store, enabled=trace)

    async def ask(
        self, question: str, *, session_id: str | None = None, informed_by: Iri | None = None
    ) -> AsyncIterator[Event]:
        """Stream the explained answer to ``question``; ends with one ``Final`` or one ``ErrorMessage``.

        ``informed_by`` links this trace's question to an agent question that asked it.
        """
        sid = session_id or new_session_id()
        with rarer_collections():  # a question's short-lived objects seldom start a full collection
            try:
                async for event in self._run(question, sid, informed_by):
                    yield event
            except Exception as exc:  # noqa: BLE001 - the stream reports every failure as one message
                yield ErrorMessage(type=type(exc).__name__, message=str(exc) or type(exc).__name__, session_id=sid)

    async def _run(self, question: str, sid: str, informed_by: Iri | None) -> AsyncIterator[Event]:
        if not question.strip():
            raise InputError("the question is empty")
        q = docrag_question_iri(sid)
        deadline = Deadline(self.question_deadline)
        started = self.clock()
        # the question is written while the passages are found
        event, retrieved = self.trace.beside("question", q, docrag_question_quads(
            q, query=question, started=started, informed_by=informed_by), lambda: self._retrieve(question))
        yield event
        query_vector, passages = retrieved.result()
        x = docrag_exploration_iri(sid)
        choices = [ChunkChoice(chunk_selection_iri(x, p.rank), p.chunk, p.rank, p.score, p.retriever)
                   for p in passages]
        # the passages' sources are read while the steps are written and the answer is made
        with running(chunk_sources, self.store, [p.chunk for p in passages]) as reading:
            explored = docrag_exploration_quads(
                x, question=q, chunks=[p.chunk for p in passages], embedding_model=self.embedder.name,
            ) + chunk_selection_quads(x, choices)
            picked: Future[tuple[str, list[Passage]]] | None = None
            if passages and self.llm is None:  # the extractive answer is picked while the step is written
                event, picked = self.trace.beside("exploration", x, explored,
                                                  lambda: self._extract(question, query_vector, passages))
            else:  # a model is asked next: only once the step is stored
                event = self.trace.step("exploration", x, explored)
            yield event
            tally = UsageTally()
            warnings: list[str] = []
            call: LlmCall | None = None
            fallback: str | None = None
            answer, cited = "", list[Passage]()
            if not passages:
                answer, cited = NO_PASSAGES, []
                warnings.append("no chunk matched the question")
                yield AnswerPiece(text=answer, end_of_stream=True)
            elif self.llm is not None and deadline.remaining() <= 0:
                fallback = "the question deadline passed before synthesis"
            elif self.llm is not None:
                stream = self.llm.stream(_prompt(question, passages))
                outcome = Outcome()
                async for piece in answer_pieces(stream, deadline, outcome):
                    yield AnswerPiece(text=piece)
                fallback = outcome.fallback
                warnings += outcome.warnings
                assert stream.usage is not None
                call = tally.add(stream.usage)
                answer = stream.text.strip()
            if fallback is not None or (passages and self.llm is None):
                if fallback is not None:
                    warnings.append(f"synthesis fell back to an extractive answer: {fallback}")
                answer, cited = (picked.result() if picked is not None
                                 else self._extract(question, query_vector, passages))
                yield AnswerPiece(text=answer, end_of_stream=True)
            elif passages:
                if not answer:
                    answer = EMPTY_ANSWER
                    warnings.append("synthesis: the model returned an empty answer")
                    yield AnswerPiece(text=answer)
                yield AnswerPiece(text="", end_of_stream=True)
                numbers, invented = cited_markers(answer, len(passages))
                if invented:
                    warnings.append("ignored citation(s) of unknown passage(s): "
                                    + ", ".join(f"[{n}]" for n in invented))
                if not numbers:
                    warnings.append("the answer cites no passage")
                cited = [passages[n - 1] for n in numbers]
            # marker [n] names numbered[n - 1]: the extractive answer's quoted chunks, or the passages shown to the model
            numbered = cited if self.llm is None or fallback is not None else passages
            document = docrag_answer_iri(sid)
            a = docrag_synthesis_iri(sid)
            # the answer record commits (and waits on its fsync) while the synthesis step is built; the step
            # is written only once the record it names is durable
            record = NewRecord(id=document.value, kind="answer", content=answer, title=question)
            with running(self.librarian.add, [record] if self.trace.enabled else []) as recorded:
                quads = synthesis_quads(
                    a, question=q, derived_from=x, document=document, content=answer, llm=call,
                    cited=[p.chunk for p in cited],
                    reasoning=None if fallback is None else f"Extractive answer (fallback: {fallback})",
                ) + citation_quads(a, doc_rag_citations(a, answer, [p.chunk for p in numbered]))
            recorded.result()
            yield self.trace.step("synthesis", a, quads)
            found = reading.result()
        yield Final(session_id=sid if self.trace.enabled else None, answer=answer, sources=self._sources(cited or passages, numbered, found),
                    usage=tally.total(), warnings=tuple(warnings))

    def _retrieve(self, question: str) -> tuple[np.ndarray, list[Passage]]:
        """The question's vector and the passages found for it."""
        query_vector = self.embedder.embed([question])[0]
        return query_vector, self._passages(question, query_vector)

    def _passages(self, question: str, query_vector: np.ndarray) -> list[Passage]:
        """The top chunks whose text the librarian has, ranked 1..n (hybrid when a retriever is set)."""
        if self.doc_limit <= 0:
            return []
        if self.retriever is not None:
            parts = question_parts(question)
            if len(parts) > 1:
                ranked = self.retriever.chunks_for_parts(parts, self.embedder.embed(parts), self.doc_limit)
            else:
                ranked = self.retriever.chunks(question, query_vector, self.doc_limit)
            unread = [r.id for r in ranked if r.text is None]
            texts = self.librarian.texts(unread, missing_ok=True) if unread else {}
            passages: list[Passage] = []
            for r in ranked:
                text = r.text if r.text is not None else texts.get(r.id)
                if text is not None:
                    passages.append(Passage(len(passages) + 1, Iri(r.id), text, r.score, r.found))
            return passages
        hits = self.chunk_index.search(query_vector, self.doc_limit)
        ids = [h.payload.get("chunk", h.id) for h in hits]
        texts = self.librarian.texts(ids, missing_ok=True)
        found = [(Iri(i), texts[i], h.score) for i, h in zip(ids, hits) if i in texts]
        return [Passage(rank, chunk, text, score) for rank, (chunk, text, score) in enumerate(found, start=1)]

    def _extract(self, question: str, query_vector: np.ndarray,
                 passages: Sequence[Passage]) -> tuple[str, list[Passage]]:
        """The sentences that best answer the question, each citing its chunk: ``… in 1898 [2].``

        Markers number the quoted chunks in order of first appearance ([1], [2]…), not by retrieval rank;
        the cited passages come back in that order."""
        by_chunk = {p.chunk.value: p for p in passages}
        picks = pick_sentences(question, query_vector, self.embedder,
                               [(p.chunk.value, p.text, p.rank) for p in passages], limit=EXTRACT_SENTENCES)
        if not picks:
            return NO_PASSAGES, []
        cited = list({pick.chunk: by_chunk[pick.chunk] for pick in picks}.values())  # in order of first quote
        number = {p.chunk.value: f"[{i}]" for i, p in enumerate(cited, start=1)}
        return " ".join(with_marker(pick.text, number[pick.chunk]) for pick in picks), cited

    @staticmethod
    def _sources(passages: Sequence[Passage], numbered: Sequence[Passage],
                 found: Mapping[Iri, Source]) -> tuple[Source, ...]:
        """Each passage traced to page/section and document (``found`` by chunk), with its marker: its place
        in ``numbered`` (or its rank, when not numbered)."""
        number = {p.chunk: f"[{i}]" for i, p in enumerate(numbered, start=1)}
        out = []
        for p in passages:
            source = found.get(p.chunk)
            if source is not None:
                out.append(replace(source, marker=number.get(p.chunk, p.marker)))
        return tuple(out)
