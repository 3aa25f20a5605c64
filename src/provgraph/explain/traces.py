"""Reading traces back: list the questions of ``urn:graph:retrieval``, load one trace tree.

``list_traces`` is one store read. ``load_trace`` is a fixed handful whatever the trace's size:
resolve the id, read the whole tree (sub-traces included), label every term, trace the chunks
(and, with ``provenance=True``, every selected edge) to their sources, and one librarian call
for the texts (chunk excerpts, answers stored only in the librarian).
"""

from __future__ import annotations

from datetime import datetime, timezone

from provgraph.errors import InputError, NotFound
from provgraph.explain.build import Lookups, TraceBuilder, session_of, trace_type
from provgraph.explain.graph import EPOCH, TraceGraph
from provgraph.explain.labels import Labeller
from provgraph.explain.model import Trace, TraceSummary
from provgraph.librarian.base import Librarian
from provgraph.explain.global_trace import load_global_trace
from provgraph.rdf.ids import agent_question_iri, docrag_question_iri, global_question_iri, question_iri
from provgraph.rdf.terms import Iri, Term, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDF, TG
from provgraph.retrieval.evidence import with_evidence
from provgraph.retrieval.sources import chunk_sources, edge_sources
from provgraph.store.base import QuadStore

__all__ = ["list_traces", "load_trace", "resolve_question"]


def list_traces(store: QuadStore, *, include_sub_traces: bool = False, limit: int | None = None) -> list[TraceSummary]:
    """The traces of a collection, newest first (one store read).

    Sub-traces (questions an agent asked, carrying ``prov:wasInformedBy``) are left out unless
    ``include_sub_traces``.
    """
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    out: list[TraceSummary] = []
    for row in store.trace_summaries(include_sub_traces=include_sub_traces, limit=limit):
        kind = trace_type(row.question, [row.kind] if row.kind is not None else [])
        if kind is None:
            continue
        moment = row.started.to_python()
        out.append(TraceSummary(
            session_id=session_of(row.question),
            question_iri=row.question,
            type=kind,
            query=row.query.value,
            started=moment.astimezone(timezone.utc) if isinstance(moment, datetime) else EPOCH,
            informed_by=row.parent,
        ))
    return out


def _candidates(id_or_sid: str) -> list[Iri]:
    text = id_or_sid.strip()
    if not text:
        return []
    try:
        if ":" in text:
            return [Iri(text)]
        return [question_iri(text), docrag_question_iri(text), agent_question_iri(text), global_question_iri(text)]
    except InputError:
        return []


def resolve_question(store: QuadStore, id_or_sid: str) -> Iri:
    """The question IRI of a session ID or a full question IRI; :class:`NotFound` otherwise.

    When a session ID names several questions, a top-level trace wins over a sub-trace.
    """
    candidates = _candidates(id_or_sid)
    found: list[tuple[bool, int, Iri]] = []
    if candidates:
        for row in store.resolve_questions(candidates):
            if trace_type(row.question, [row.kind] if row.kind is not None else []) is not None:
                found.append((row.parent is not None, candidates.index(row.question), row.question))
    if not found:
        step = _question_of_step(store, candidates)
        if step is not None:
            return step
        raise NotFound(f"no trace {id_or_sid!r} in collection {store.name} (list them with: provgraph traces list)")
    return min(found)[2]


_PARTS = (TG.selectedEdge, TG.chunkSelection, TG.citation)


def _question_of_step(store: QuadStore, candidates: list[Iri]) -> Iri | None:
    """The question a step IRI (exploration, focus, synthesis, analysis…) or a step's part (edge selection,
    chunk selection, citation) belongs to; None when the IRI is neither."""
    if len(candidates) != 1:
        return None
    node = candidates[0]
    steps = [node] + [q.s for p in _PARTS for q in store.match(None, p, node, g=GRAPH_RETRIEVAL)
                      if isinstance(q.s, Iri)]
    for step in steps:
        for q in store.match(step, PROV.wasGeneratedBy, None, g=GRAPH_RETRIEVAL):
            if isinstance(q.o, Iri) and store.count(q.o, RDF.type, TG.Question, g=GRAPH_RETRIEVAL):
                return q.o
    return None


def load_trace(
    store: QuadStore,
    id_or_sid: str,
    *,
    librarian: Librarian | None = None,
    provenance: bool = False,
) -> Trace:
    """The whole trace of a session ID or question IRI, sub-traces nested; :class:`NotFound` if unknown.

    With ``provenance``, every selected edge carries its sources (SPEC §7: every supporting
    chunk → page/section → document) and, given a ``librarian``, an excerpt of each chunk.
    """
    question = resolve_question(store, id_or_sid)
    if trace_type(question, []) == "Global":
        return load_global_trace(store, question, librarian)
    graph = TraceGraph.read(store, question)
    edges: list[TripleTerm] = []
    terms: list[Term] = []
    chunks: list[Iri] = []
    missing_answers: list[str] = []
    cited: list[Iri] = []  # chunks named by citations: their sentences are shown
    for node in graph.nodes.values():
        if node.has_type(TG.Retraction):
            continue
        edges += [e for e in node.all(TG.edge) if isinstance(e, TripleTerm)]
        terms += node.all(TG.entity)
        chunks += node.iris(TG.selectedChunk)
        if node.has_type(TG.RankedPassage):
            chunks += node.iris(TG.chunk)
            terms += node.all(TG.bridgeEntity)
        if node.has_type(TG.Citation):
            cited += node.iris(TG.selectedChunk)
        inline = TG.answer if node.has_type(TG.Conclusion) else TG.content
        document = node.iri_of(TG.document)
        if document is not None and node.text(inline) is None:
            missing_answers.append(document.value)
    labels = Labeller.lookup(store, [*edges, *terms])
    by_chunk = chunk_sources(store, chunks) if chunks else {}
    by_edge = with_evidence(store, edge_sources(store, edges)) if provenance or cited else None
    wanted = list(missing_answers) + [c.value for c in cited]
    if provenance:
        wanted += [c.value for c in chunks]
        wanted += [s.chunk for sources in (by_edge or {}).values() for s in sources]
    texts = librarian.texts(list(dict.fromkeys(wanted)), missing_ok=True) if librarian is not None and wanted else {}
    lookups = Lookups(labels, by_chunk, by_edge, texts, excerpts=provenance)
    trace = TraceBuilder(graph, lookups).build(question)
    if trace is None:  # the question vanished between the two reads
        raise NotFound(f"no trace {id_or_sid!r} in collection {store.name}")
    return trace
