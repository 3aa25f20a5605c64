"""GraphRAG with query-time explainability (SPEC §5.1): one async stream of events per question.

Steps, each written to ``urn:graph:retrieval`` AS IT COMPLETES and yielded at once:
question → [grounding] → exploration → focus → answer pieces → synthesis → final. Any failure
yields one :class:`~provgraph.events.ErrorMessage` and ends the stream; the steps already
written stay. With an LLM it is called at most three times (grounding, edge selection,
synthesis), all within the question's deadline (``question_deadline`` seconds): a step that fails
or runs out of time falls back to its no-LLM form (no grounding, similarity selection, extractive
answer), and the trace and warnings say why; without one (``llm=None``) edges are chosen by
embedding similarity and the answer is extractive, cited sentences of the supporting chunks.

Example::

    rag = GraphRag(store, librarian, embedder, entity_index, llm=None)
    async for event in rag.ask("Who discovered polonium?"):
        ...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from provgraph.errors import InputError, ModelError
from provgraph.events import AnswerPiece, ErrorMessage, Event, Final, Source
from provgraph.gc_pacing import rarer_collections
from provgraph.librarian.base import Librarian, NewRecord
from provgraph.models.base import ChatModel, Embedder, Usage, system, user
from provgraph.provenance.citations import citation_quads
from provgraph.provenance.common import LlmCall
from provgraph.provenance.graph_rag import (
    EdgeChoice,
    exploration_quads,
    focus_quads,
    grounding_quads,
    question_quads,
    synthesis_quads,
)
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.retrieval.deadline import Deadline, Outcome, answer_pieces, why
from provgraph.retrieval.edge_select import (
    LabelledEdge,
    Selection,
    label_edges,
    prefilter,
    select_by_similarity,
    select_or_fallback,
    similarities,
)
from provgraph.retrieval.answer_pick import pick_sentences, question_parts
from provgraph.retrieval.background import running
from provgraph.retrieval.graph_paths import boost_scores
from provgraph.retrieval.graph_rag_params import GROUNDING_SCHEMA, GraphRagParams
from provgraph.retrieval.graph_walk import (
    WalkLimits,
    chunk_facts,
    facts_by_chunk,
    seed_entities,
    supporting_chunks,
    walk,
)
from provgraph.retrieval.chain_answer import chain_quotes, first_hop_chunks, with_chunk_sources
from provgraph.retrieval.graph_rank import GraphRanker, Ranking
from provgraph.retrieval.hybrid import HybridRetriever, Ranked
from provgraph.retrieval.ranking_trace import ranking_step, relevant
from provgraph.retrieval.labels import LabelCache
from provgraph.retrieval.markers import graph_rag_citations
from provgraph.retrieval.read_cache import ReadCache
from provgraph.retrieval.sources import edge_sources
from provgraph.retrieval.synthesis import (
    EMPTY_ANSWER,
    NOTHING_CITABLE,
    NOTHING_RELEVANT,
    Quote,
    cite,
    cited_only,
    extractive_answer,
    render,
    synthesis_messages,
)
from provgraph.retrieval.trace import TraceWriter, UsageTally
from provgraph.store.base import QuadStore
from provgraph.vectors.base import VectorIndex

__all__ = ["GraphRag", "GraphRagParams", "GROUNDING_SCHEMA"]

Clock = Callable[[], datetime]
_POOL = 8  # chunks of the selected edges an extractive answer quotes from, best hybrid-ranked first


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class _Run:
    """The state of one request."""

    sid: str
    question: str
    question_iri: Iri
    writer: TraceWriter
    labels: LabelCache
    tally: UsageTally = field(default_factory=UsageTally)
    warnings: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    grounding: Iri | None = None
    entities: list[Ranked] = field(default_factory=list)
    chunks: list[Ranked] = field(default_factory=list)
    chunk_facts: dict[Iri, list[TripleTerm]] = field(default_factory=dict)  # of the ranked chunks
    ranking: Ranking | None = None  # the graph-ranked passages (with a ranker)
    deadline: Deadline = field(default_factory=lambda: Deadline(float("inf")))

    def remaining(self) -> float:
        """Seconds left before the question's deadline (may be negative)."""
        return self.deadline.remaining()


class GraphRag:
    """Answers questions from the knowledge graph and explains each step as it goes.

    ``reads`` (the runtime's) shares what questions read again between the engines on one store.
    """

    def __init__(
        self,
        store: QuadStore,
        librarian: Librarian,
        embedder: Embedder,
        entity_index: VectorIndex,
        llm: ChatModel | None,
        params: GraphRagParams | None = None,
        *,
        clock: Clock = _utcnow,
        trace: bool = True,
        retriever: HybridRetriever | None = None,
        reads: ReadCache | None = None,
        ranker: GraphRanker | None = None,
    ) -> None:
        self.retriever = retriever
        self.ranker = ranker if ranker is not None or retriever is None else GraphRanker(retriever)
        self.store = store
        self.librarian = librarian
        self.embedder = embedder
        self.entity_index = entity_index
        self.llm = llm
        self.params = params or GraphRagParams()
        self.clock = clock
        self.trace = trace
        self._reads = reads if reads is not None else ReadCache(store)  # labels, facts, sources, vectors

    async def ask(
        self, question: str, *, session_id: str | None = None, informed_by: Iri | None = None
    ) -> AsyncIterator[Event]:
        """Stream the answer to ``question``: explain steps, answer pieces, then one final message.

        ``informed_by`` links this trace to the agent question that asked it. Never raises for a
        failed step: it yields an :class:`ErrorMessage` and stops.
        """
        sid = session_id or ids.new_session_id()
        writer = TraceWriter(self.store, enabled=self.trace)
        run = _Run(sid, question, ids.question_iri(sid), writer, self._reads.labels(),
                   deadline=Deadline(self.params.question_deadline))
        with rarer_collections():  # a question's short-lived objects seldom start a full collection
            try:
                async for event in self._steps(run, informed_by):
                    yield event
            except Exception as exc:  # every failure ends the session with one message
                yield ErrorMessage(type=type(exc).__name__, message=str(exc) or type(exc).__name__, session_id=sid)

    async def _steps(self, run: _Run, informed_by: Iri | None) -> AsyncIterator[Event]:
        if not run.question.strip():
            raise InputError("the question is empty")
        asked = question_quads(run.question_iri, query=run.question, started=self.clock(), informed_by=informed_by)
        if self.params.grounding and self.llm is not None:  # the model is asked only once the question is stored
            yield run.writer.step("question", run.question_iri, asked)
            try:
                yield await asyncio.wait_for(self._ground(run, self.llm), max(run.remaining(), 0.001))
            except (ModelError, TimeoutError) as exc:
                run.warnings.append(f"grounding skipped: {why(exc)}")
            vectors, seeds, edges = self._explore(run)
        else:
            if self.params.grounding:
                run.warnings.append("grounding skipped: no LLM configured")
            # each step is written while the next stage computes (up to its model call)
            event, explored = run.writer.beside("question", run.question_iri, asked, lambda: self._explore(run))
            yield event
            vectors, seeds, edges = explored.result()
        if run.ranking is not None:
            yield run.writer.step("ranking", *ranking_step(run.sid, run.question_iri, run.ranking))
            if not relevant(run.ranking):
                edges = []
                run.warnings.append("nothing relevant found: no passage passed the relevance floor")
        exploration = ids.exploration_iri(run.sid)
        event, candidates = run.writer.beside("exploration", exploration, exploration_quads(
            exploration, question=run.question_iri, edge_count=len(edges), entities=seeds,
            derived_from=run.grounding, embedding_model=self.embedder.name),
            lambda: self._candidates(run, vectors[0], label_edges(edges, run.labels)))
        yield event
        selection = await self._select(run, *candidates.result())
        focus = ids.focus_iri(run.sid)
        choices = [EdgeChoice(ids.edge_selection_iri(run.sid, i), s.edge.edge, s.reasoning, s.score)
                   for i, s in enumerate(selection.chosen)]
        chosen = [s.edge for s in selection.chosen]
        event, found = run.writer.beside("focus", focus, focus_quads(
            focus, question=run.question_iri, exploration=exploration, selections=choices,
            llm=self._record(run, selection.usage), embedding_model=self.embedder.name),
            lambda: edge_sources(self.store, [e.edge for e in chosen], evidence=True, cache=self._reads.sources()))
        yield event
        async for later in self._synthesise(run, vectors[0], chosen, focus, found.result()):
            yield later

    def _explore(self, run: _Run) -> tuple[np.ndarray, list[Iri], list[TripleTerm]]:
        """The question's vectors, the seed entities and the edges walked from them."""
        vectors = self.embedder.embed([run.question, *run.concepts])
        seeds = self._seeds(run, vectors)
        p = self.params
        facts: list[TripleTerm] = []
        if run.chunks:  # the best passages' facts first (up to half the budget), then the walk
            run.chunk_facts = facts_by_chunk(self.store, [Iri(r.id) for r in run.chunks],
                                            cache=self._reads.facts())
            facts = chunk_facts(self.store, [Iri(r.id) for r in run.chunks[:5]], limit=p.max_subgraph_size // 2,
                                known=run.chunk_facts)
        edges = walk(self.store, seeds, WalkLimits(p.max_path_length, p.triple_limit, p.max_subgraph_size),
                     first=facts)
        return vectors, seeds, edges

    def _seeds(self, run: _Run, vectors: np.ndarray) -> list[Iri]:
        """Entities to start from: hybrid (names in the question, then lexical + dense) or dense only."""
        if self.retriever is None:
            return seed_entities(self.entity_index, vectors, self.params.entity_limit)
        text = " ".join([run.question, *run.concepts])
        if self.ranker is not None:
            run.ranking = self.ranker.rank(text, vectors[0], 10)
            run.entities = list(run.ranking.entities)
            run.chunks = [Ranked(p.chunk, p.score, (), text=p.text) for p in run.ranking.passages]
            return [Iri(r.id) for r in run.entities]
        run.entities = self.retriever.entities(text, vectors, self.params.entity_limit)
        parts = question_parts(run.question)
        part_vectors = self.embedder.embed(parts) if len(parts) > 1 else vectors[:1]
        run.chunks = self.retriever.chunks_for_parts(parts, part_vectors, 10)
        return [Iri(r.id) for r in run.entities]

    def _record(self, run: _Run, usage: Usage | None) -> LlmCall | None:
        return None if usage is None else run.tally.add(usage)

    async def _ground(self, run: _Run, llm: ChatModel) -> Event:
        reply = await llm.complete_json(
            [
                system("List the key concepts (entities, topics, terms) a knowledge graph would need to answer "
                       'the question. Reply with JSON: {"concepts": ["…", …]} (at most 10 short phrases).'),
                user(run.question),
            ],
            schema=GROUNDING_SCHEMA,
            schema_name="grounding",
        )
        run.concepts = list(dict.fromkeys(" ".join(c.split()) for c in reply.data["concepts"] if c.strip()))
        run.grounding = ids.grounding_iri(run.sid)
        return run.writer.step("grounding", run.grounding, grounding_quads(
            run.grounding, question=run.question_iri, concepts=run.concepts, llm=self._record(run, reply.usage)))

    def _candidates(
        self, run: _Run, question: np.ndarray, edges: list[LabelledEdge]
    ) -> tuple[list[LabelledEdge], np.ndarray, dict[TripleTerm, float]]:
        """The edges worth choosing from, their scores, and each edge's similarity to the question."""
        scores = similarities(self.embedder, question, edges, cache=self._reads.vectors)
        similarity = {e.edge: float(v) for e, v in zip(edges, scores)}
        if self.retriever is not None and edges:
            scores = boost_scores(
                [e.edge for e in edges], scores,
                linked=[Iri(r.id) for r in run.entities if r.exact][:4],
                chunk_rank={r.id: i for i, r in enumerate(run.chunks, start=1)},
                edge_chunks=supporting_chunks(run.chunk_facts))  # only ranked chunks count
        edges, scores = prefilter(edges, scores, self.params.edge_score_limit)
        return edges, scores, similarity

    async def _select(
        self, run: _Run, edges: list[LabelledEdge], scores: np.ndarray, similarity: dict[TripleTerm, float]
    ) -> Selection:
        if self.llm is None:
            return select_by_similarity(edges, scores, self.params.edge_limit, self.params.min_similarity,
                                        similarity=similarity)
        selection = await select_or_fallback(self.llm, run.question, edges, scores, self.params.edge_limit,
                                             self.params.min_similarity, timeout=run.remaining(),
                                             similarity=similarity)
        run.warnings += selection.warnings
        return selection

    async def _synthesise(
        self, run: _Run, question: np.ndarray, chosen: list[LabelledEdge], focus: Iri, found: dict[TripleTerm, list[Source]]
    ) -> AsyncIterator[Event]:
        unsourced = sum(1 for e in chosen if not found.get(e.edge))
        if unsourced:
            run.warnings.append(f"{unsourced} selected edge(s) have no recorded source")
        call: LlmCall | None = None
        fallback: str | None = None
        ranked = run.ranking is not None and relevant(run.ranking) and (self.llm is None or not chosen)
        if not chosen and not ranked:
            citations = cite([], found)
            answer = NOTHING_RELEVANT
            yield AnswerPiece(text=answer)
        elif ranked:
            pass  # the answer follows the ranking's chain of passages (below)
        elif self.llm is not None and run.remaining() <= 0:
            fallback = "the question deadline passed before synthesis"
        elif self.llm is not None:
            citations = cite([e.edge for e in chosen], found)
            stream = self.llm.stream(synthesis_messages(run.question, chosen, citations))
            outcome = Outcome()
            async for piece in answer_pieces(stream, run.deadline, outcome):
                yield AnswerPiece(text=piece)
            fallback = outcome.fallback
            run.warnings += outcome.warnings
            call = self._record(run, stream.usage)
            answer = stream.text.strip()
            if not answer and fallback is None:
                answer = EMPTY_ANSWER
                run.warnings.append("synthesis: the model returned an empty answer")
                yield AnswerPiece(text=answer)
        if ranked or (chosen and (self.llm is None or fallback is not None)):
            if fallback is not None:
                run.warnings.append(f"synthesis fell back to an extractive answer: {fallback}")
            chunks = list(dict.fromkeys(src.chunk for e in chosen for src in found.get(e.edge, ())))
            if run.ranking is not None and self.ranker is not None:
                chunks = first_hop_chunks(run.ranking, chunks)
            texts = self.librarian.texts(chunks, missing_ok=True)
            if run.ranking is not None and self.ranker is not None:
                quotes = chain_quotes(run.ranking, self.ranker, self.librarian, self.embedder, run.question, question,
                                      lambda n: self._quotes(run, question, chunks, texts, limit=n) if chunks else [])
            else:
                quotes = self._quotes(run, question, chunks, texts)
            if not quotes and chosen:
                quotes = extractive_answer(question, self.embedder, chosen, found, texts,
                                           limit=self.params.answer_sentences)
            citations = cite([e.edge for e in chosen], found, first=[c for q in quotes for c in q.chunks])
            citations = cited_only(citations, [c for q in quotes for c in q.chunks])
            citations = with_chunk_sources(self.store, citations, [c for q in quotes for c in q.chunks])
            sentences = render(quotes, citations)
            if not sentences:
                sentences = [NOTHING_CITABLE]
                run.warnings.append("no supporting sentence could be cited for the selected edges")
            for i, sentence in enumerate(sentences):
                yield AnswerPiece(text=sentence if i == 0 else " " + sentence)
            answer = " ".join(sentences)
        yield AnswerPiece(text="", end_of_stream=True)
        if self.llm is not None and chosen:
            in_answer = [c for c, m in citations.by_chunk.items() if m in answer]
            citations = cited_only(citations, in_answer) if in_answer else citations
        document = ids.graph_rag_answer_iri(run.sid)
        synthesis = ids.synthesis_iri(run.sid)
        # the answer record commits while the synthesis step is built; the step is written once the record is durable
        record = NewRecord(document.value, "answer", answer, title=run.question)
        with running(self.librarian.add, [record] if run.writer.enabled else []) as recorded:
            selections = [(ids.edge_selection_iri(run.sid, i), e.edge) for i, e in enumerate(chosen)]
            cited = graph_rag_citations(synthesis, answer, citations.by_chunk, citations.by_edge, selections)
            quads = synthesis_quads(
                synthesis, question=run.question_iri, derived_from=focus, document=document, content=answer,
                llm=call, reasoning=None if fallback is None else f"Extractive answer (fallback: {fallback})",
            ) + citation_quads(synthesis, cited)
        recorded.result()
        yield run.writer.step("synthesis", synthesis, quads)
        yield Final(session_id=run.sid if run.writer.enabled else None, answer=answer, sources=citations.sources, usage=run.tally.total(),
                    warnings=tuple(run.warnings))

    def _quotes(self, run: _Run, question: np.ndarray, chunks: list[str], texts: dict[str, str], *,
                limit: int = 3) -> list[Quote]:
        """Sentences of the selected edges' chunks that answer the question (best hybrid-ranked chunks first)."""
        order = {r.id: i for i, r in enumerate(run.chunks, start=1)}
        position = {c: i for i, c in enumerate(chunks)}
        ranked = sorted((c for c in chunks if c in texts), key=lambda c: (order.get(c, len(order) + 1), position[c]))
        passages = [(c, texts[c], rank) for rank, c in enumerate(ranked[:_POOL], start=1)]
        picks = pick_sentences(run.question, question, self.embedder, passages, limit=limit)
        return [Quote(p.text, (p.chunk,)) for p in picks]
