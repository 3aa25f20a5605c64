"""What removing a document would retract, read before anything is removed (nothing is written).

The same readers the removal itself uses: :func:`~provgraph.store.support.document_removal` for
the quads that would go (the facts only this document supports among them) and
:func:`~provgraph.store.retraction.retraction_for` for the traces that would be marked stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from provgraph.errors import NotFound
from provgraph.explain.build import session_of
from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE, RDF, RDFS, SCHEMA_PREDICATES, TG
from provgraph.retrieval.labels import fallback_label
from provgraph.store.base import DEFAULT, QuadStore
from provgraph.store.retraction import retraction_for
from provgraph.store.support import document_nodes, document_removal

__all__ = ["RemovalPreview", "StaleTrace", "removal_preview"]

SAMPLE = 20  # facts named in the preview (the count covers all of them)


@dataclass(frozen=True, slots=True)
class StaleTrace:
    """A stored trace that used the document: removing it marks the trace stale."""

    session_id: str
    query: str


@dataclass(frozen=True, slots=True)
class RemovalPreview:
    """A document's removal, before it happens."""

    document: Iri
    title: str
    chunks: int
    quads: int
    facts: int  # facts that leave the knowledge graph (no other document supports them)
    sample: tuple[tuple[str, str, str], ...]  # labels of the first of them
    traces: tuple[StaleTrace, ...]
    edges: int  # selected edges of those traces that lose a source
    retracted_chunks: int  # chunks those traces retrieved or cited that go


def _label(store: QuadStore, term: Term) -> str:
    """The term's shortest ``rdfs:label`` (a pattern match: any store backend), else its fallback."""
    if not isinstance(term, Iri):
        return fallback_label(term)
    names = [q.o.value for q in store.match(term, RDFS.label, None, g=DEFAULT) if isinstance(q.o, Literal)]
    return min(names, key=lambda n: (len(n), n)) if names else fallback_label(term)


def removal_preview(store: QuadStore, librarian: Librarian, document: Iri) -> RemovalPreview:
    """What ``documents remove`` would take away; NotFound when the document is not loaded."""
    if not librarian.exists(document.value) and not store.count(document, None, None):
        raise NotFound(f"document {document.value} is not in collection {store.name}")
    title = librarian.get(document.value).title if librarian.exists(document.value) else document.value
    removal = document_removal(store, document)
    facts = [TripleTerm(q.s, q.p, q.o) for q in removal if q.g is None and q.p not in SCHEMA_PREDICATES]
    retraction = retraction_for(store, document, at=datetime.now(timezone.utc), reason="removed")
    questions = sorted({q.o for q in retraction if q.p == TG.affectedTrace and isinstance(q.o, Iri)}, key=str)
    traces = []
    for question in questions:
        text = next((q.o.value for q in store.match(question, TG.query, None, g=GRAPH_RETRIEVAL)
                     if isinstance(q.o, Literal)), "")
        traces.append(StaleTrace(session_of(question), text))
    chunks = sum(1 for n in document_nodes(store, document) if store.count(n, RDF.type, TG.Chunk, g=GRAPH_SOURCE))
    return RemovalPreview(
        document, title or document.value, chunks, len(removal), len(facts),
        tuple((_label(store, f.s), _label(store, f.p), _label(store, f.o)) for f in facts[:SAMPLE]),
        tuple(traces), sum(1 for q in retraction if q.p == TG.retractedEdge),
        sum(1 for q in retraction if q.p == TG.retractedChunk),
    )
