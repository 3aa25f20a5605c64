"""Typed traces from a :class:`TraceGraph` and batched lookups (labels, sources, texts).

Nothing here queries the store: every lookup is done up front, once per trace tree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from provgraph.errors import InputError
from provgraph.events import Source
from provgraph.explain.citations import Ranks, chunk_ranks, citations_of, retractions_of
from provgraph.explain.excerpts import excerpt
from provgraph.explain.graph import EPOCH, Node, TraceGraph
from provgraph.explain.labels import Labeller
from provgraph.explain.ranking import ranking_of
from provgraph.explain.model import (
    AgentTrace,
    Analysis,
    ChunkRef,
    Conclusion,
    DocExploration,
    DocRagTrace,
    Evidence,
    Exploration,
    Focus,
    GraphRagTrace,
    Grounding,
    LabelledTerm,
    Question,
    SelectedEdge,
    SourceRef,
    Synthesis,
    Trace,
    TraceType,
)
from provgraph.rdf.ids import session_id_of
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import PROV, RDF, TG

__all__ = ["Lookups", "TraceBuilder", "KIND_TYPES", "trace_type", "session_of", "chunk_order"]

KIND_TYPES: dict[Iri, TraceType] = {
    TG.GraphRagQuestion: "GraphRAG",
    TG.DocRagQuestion: "DocRAG",
    TG.AgentQuestion: "Agent",
    TG.GlobalRagQuestion: "Global",
}
_PREFIX_TYPES: dict[str, TraceType] = {
    "urn:trustgraph:question:": "GraphRAG",
    "urn:trustgraph:docrag:": "DocRAG",
    "urn:trustgraph:agent:": "Agent",
    "urn:provgraph:global:": "Global",
}
_EDGE_INDEX = re.compile(r":(\d+)$")
_STEP_INDEX = re.compile(r"/i(\d+)$")


def trace_type(question: Iri, kinds: Sequence[object]) -> TraceType | None:
    """The trace type from the question's ``rdf:type``s, else from its IRI pattern."""
    for kind in kinds:
        if isinstance(kind, Iri) and kind in KIND_TYPES:
            return KIND_TYPES[kind]
    for prefix, name in _PREFIX_TYPES.items():
        if question.value.startswith(prefix):
            return name
    return None


def session_of(question: Iri) -> str:
    """The session ID in a question IRI (the whole IRI for questions minted elsewhere)."""
    try:
        return session_id_of(question)
    except InputError:
        return question.value


def chunk_order(ref: ChunkRef) -> tuple[int, str, int, int, int, str]:
    """Chunks in reading order: by document title, page, offset and index; untraceable ones last."""
    s = ref.source
    if s is None:
        return (1, "", 0, 0, 0, ref.iri.value)
    return (0, s.title, s.page_number or 0, s.offset, s.chunk_index, ref.iri.value)


@dataclass(frozen=True)
class Lookups:
    """What the builder needs beyond the trace's own triples, fetched in batches.

    ``edge_sources`` is None when no edge needs its sources; ``texts`` maps librarian ids
    (chunks, answer documents) to their text; ``excerpts`` is set when provenance was asked for
    (selected edges then carry their sources, chunks an excerpt).
    """

    labels: Labeller
    chunk_sources: Mapping[Iri, Source] = field(default_factory=dict)
    edge_sources: Mapping[TripleTerm, Sequence[Source]] | None = None
    texts: Mapping[str, str] = field(default_factory=dict)
    excerpts: bool = False


class TraceBuilder:
    """Builds the trace of a question in the graph, sub-traces included."""

    def __init__(self, graph: TraceGraph, lookups: Lookups) -> None:
        self.graph = graph
        self.lookups = lookups
        self._seen: set[Iri] = set()
        self._gone_edges: set[object] = set()
        self._gone_chunks: set[Iri] = set()

    def build(self, question: Iri) -> Trace | None:
        """The trace rooted at ``question`` (None for an unknown or already built question)."""
        node = self.graph.nodes.get(question)
        if node is None or question in self._seen:
            return None
        kind = trace_type(question, node.all(RDF.type))
        if kind is None or kind == "Global":  # global traces are read by explain/global_trace.py
            return None
        self._seen.add(question)
        q = self._question(node)
        if kind == "GraphRAG":
            return self._graph_rag(q)
        if kind == "DocRAG":
            return self._doc_rag(q)
        return self._agent(q)

    # -- shared ---------------------------------------------------------------------------------
    def _question(self, node: Node) -> Question:
        iri = node.iri
        return Question(
            iri=iri,
            session_id=session_of(iri),
            query=node.text(TG.query) or "",
            started=node.time(PROV.startedAtTime) or EPOCH,
            informed_by=node.iri_of(PROV.wasInformedBy),
            asked=node.text(TG.originalQuery),
            rewrite_method=node.text(TG.rewriteMethod),
            turn=node.integer(TG.turn),
            previous_turn=node.iri_of(TG.previousTurn),
            tool_groups=node.texts(TG.toolGroup),
            allowed_tools=node.texts(TG.allowedTool),
        )

    def _answer_text(self, node: Node, inline: Iri) -> str:
        text = node.text(inline)
        if text is not None:
            return text
        document = node.iri_of(TG.document)
        return self.lookups.texts.get(document.value, "") if document is not None else ""

    def _chunk(self, iri: Iri, ranks: Ranks | None = None) -> ChunkRef:
        text = self.lookups.texts.get(iri.value) if self.lookups.excerpts else None
        rank, score, retriever = (ranks or {}).get(iri, (None, None, None))
        return ChunkRef(iri, self.lookups.chunk_sources.get(iri), excerpt(text) if text is not None else None,
                        rank, score, retriever, iri in self._gone_chunks)

    def _chunks(self, node: Node, ranks: Ranks | None = None) -> tuple[ChunkRef, ...]:
        refs = [self._chunk(c, ranks) for c in node.iris(TG.selectedChunk)]
        if ranks:  # the retrieval order, as recorded
            return tuple(sorted(refs, key=lambda r: (r.rank is None, r.rank or 0, chunk_order(r))))
        return tuple(sorted(refs, key=chunk_order))

    def _synthesis(
        self, node: Node | None, edges: tuple[SelectedEdge, ...] = (), ranks: Ranks | None = None
    ) -> Synthesis | None:
        if node is None:
            return None
        content = self._answer_text(node, TG.content)
        by_iri = {e.iri: e for e in edges}
        return Synthesis(
            iri=node.iri,
            content=content,
            document=node.iri_of(TG.document),
            llm=node.llm(),
            cited=self._chunks(node, ranks),
            citations=citations_of(node, self.graph, content, by_iri, lambda c: self._chunk(c, ranks),
                                   self._source_refs, lambda c: self.lookups.texts.get(c.value)),
        )

    def _retractions(self, question: Iri) -> None:
        """What retractions naming this question took away (marks edges and chunks as built)."""
        found = retractions_of(self.graph, question)
        self._gone_edges = {e for r in found for e in r.edges}
        self._gone_chunks = {c for r in found for c in r.chunks}

    # -- GraphRAG -------------------------------------------------------------------------------
    def _graph_rag(self, q: Question) -> GraphRagTrace:
        g = self.graph
        self._retractions(q.iri)
        grounding = g.step(q.iri, TG.Grounding)
        exploration = g.step(q.iri, TG.Exploration)
        ranking = g.step(q.iri, TG.Ranking)
        focus = g.step(q.iri, TG.Focus)
        edges = self._edges(focus) if focus is not None else ()
        synthesis = self._synthesis(g.step(q.iri, TG.Synthesis), edges)
        used_chunks = {ref.iri for cit in synthesis.citations for ref in cit.chunks} if synthesis is not None else set()
        return GraphRagTrace(
            question=q,
            grounding=None if grounding is None else Grounding(
                iri=grounding.iri,
                concepts=tuple(sorted(v.value for v in grounding.all(TG.concept) if isinstance(v, Literal))),
                llm=grounding.llm(),
            ),
            exploration=None if exploration is None else self._exploration(exploration),
            focus=None if focus is None else Focus(
                iri=focus.iri,
                edges=edges,
                llm=focus.llm(),
            ),
            synthesis=synthesis,
            ranking=None if ranking is None else ranking_of(ranking, g, self._chunk, self.lookups.labels.label),
            retracted=retractions_of(g, q.iri, {e.edge for e in edges}, used_chunks),
        )

    def _exploration(self, node: Node) -> Exploration:
        label = self.lookups.labels.label
        entities = sorted((LabelledTerm(e, label(e)) for e in node.all(TG.entity)), key=lambda t: (t.label, str(t.term)))
        return Exploration(iri=node.iri, edge_count=node.integer(TG.edgeCount), entities=tuple(entities))

    def _edges(self, focus: Node) -> tuple[SelectedEdge, ...]:
        out: list[SelectedEdge] = []
        for iri in focus.iris(TG.selectedEdge):
            node = self.graph.node(iri)
            edge = node.one(TG.edge)
            if not isinstance(edge, TripleTerm):
                continue
            found = _EDGE_INDEX.search(iri.value)
            labels = self.lookups.labels
            out.append(SelectedEdge(
                iri=iri,
                index=int(found.group(1)) if found else None,
                edge=edge,
                labels=(labels.label(edge.s), labels.label(edge.p), labels.label(edge.o)),
                reasoning=node.text(TG.reasoning) or "",
                score=node.number(TG.score),
                retracted=edge in self._gone_edges,
            ))
        out.sort(key=lambda e: (e.index is None, e.index or 0, e.iri.value))
        return tuple(self._with_sources(e) for e in out)

    def _with_sources(self, edge: SelectedEdge) -> SelectedEdge:
        if self.lookups.edge_sources is None or not self.lookups.excerpts:
            return edge
        return replace(edge, sources=tuple(self._source_refs(edge)))

    def _source_refs(self, edge: SelectedEdge) -> list[SourceRef]:
        """The edge's sources, each with an excerpt (provenance asked for) and its evidence sentence."""
        hints = (edge.labels[0], edge.labels[2], edge.labels[1])
        refs = []
        for source in (self.lookups.edge_sources or {}).get(edge.edge, ()):
            text = self.lookups.texts.get(source.chunk)
            shown = excerpt(text, hints) if text is not None and self.lookups.excerpts else None
            evidence = None
            if source.evidence is not None:
                offset, length = source.evidence
                evidence = Evidence(offset, length, text[offset:offset + length] if text is not None else None)
            refs.append(SourceRef(source, shown, evidence))
        return refs

    # -- Document RAG ---------------------------------------------------------------------------
    def _doc_rag(self, q: Question) -> DocRagTrace:
        self._retractions(q.iri)
        exploration = self.graph.step(q.iri, TG.Exploration)
        ranks = chunk_ranks(exploration, self.graph) if exploration is not None else {}
        explored = DocExploration(
            iri=exploration.iri,
            chunk_count=exploration.integer(TG.chunkCount),
            chunks=self._chunks(exploration, ranks),
        ) if exploration is not None else None
        synthesis = self._synthesis(self.graph.step(q.iri, TG.Synthesis), ranks=ranks)
        used = {c.iri for c in explored.chunks} if explored is not None else set()
        if synthesis is not None:
            used |= {c.iri for c in synthesis.cited} | {c.iri for x in synthesis.citations for c in x.chunks}
        return DocRagTrace(question=q, exploration=explored, synthesis=synthesis,
                           retracted=retractions_of(self.graph, q.iri, set(), used))

    # -- agent ----------------------------------------------------------------------------------
    def _agent(self, q: Question) -> AgentTrace:
        g = self.graph
        answered_by: dict[Iri, Iri] = {}  # a sub-trace's synthesis/conclusion → its question
        for other in g.questions():
            if other.iri != q.iri:
                for cls in (TG.Synthesis, TG.Conclusion):
                    for step in g.steps(other.iri, cls):
                        answered_by[step.iri] = other.iri
        analyses = [self._analysis(n, answered_by) for n in g.steps(q.iri, TG.Analysis)]
        analyses.sort(key=lambda a: (a.step, a.iri.value))
        conclusion = g.step(q.iri, TG.Conclusion)
        others = [
            o.iri for o in g.questions()
            if q.iri in o.all(PROV.wasInformedBy) and o.iri not in self._seen
        ]
        other_traces = [self.build(iri) for iri in sorted(others, key=str)]
        return AgentTrace(
            question=q,
            analyses=tuple(analyses),
            conclusion=None if conclusion is None else Conclusion(
                iri=conclusion.iri,
                answer=self._answer_text(conclusion, TG.answer),
                termination_reason=conclusion.text(TG.terminationReason),
                document=conclusion.iri_of(TG.document),
                llm=conclusion.llm(),
            ),
            other_sub_traces=tuple(t for t in other_traces if t is not None),
        )

    def _analysis(self, node: Node, answered_by: Mapping[Iri, Iri]) -> Analysis:
        iri = node.iri
        step = node.integer(TG.stepNumber)
        if step is None:
            found = _STEP_INDEX.search(iri.value)
            step = int(found.group(1)) if found else 0
        sub = None
        for derived in node.iris(PROV.wasDerivedFrom):
            if derived in answered_by and sub is None:
                sub = self.build(answered_by[derived])
        return Analysis(
            iri=iri,
            step=step,
            thought=node.text(TG.thought),
            action=node.text(TG.action),
            arguments=node.text(TG.arguments),
            observation=node.text(TG.observation),
            error=node.has_type(TG.Error),
            llm=node.llm(),
            sub_trace=sub,
        )

