"""The named read operations every quad store answers: provgraph's fixed query shapes.

Pipeline stages, explain and integrity ask the store these questions by name instead of sending
it SPARQL, so each backend answers them its own way (SPARQL on pyoxigraph, SQL on PostgreSQL)
with the same results. Results are deterministic: lists come sorted by the terms' canonical
N-Triples text unless said otherwise, and where a node has several values of an optional property
the smallest (by that text) is given. Graph names are those of SPEC §1: knowledge in the default
graph, provenance in ``urn:graph:source``, traces in ``urn:graph:retrieval``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm

__all__ = ["NamedQueries", "TraceRow", "QuestionRow", "DocumentHead", "PartRow", "ChunkExtraction", "SourceRow"]


@dataclass(frozen=True, slots=True)
class TraceRow:
    """A stored question, as traces are listed: its type (if one of the four kinds), text, earliest start, parent."""

    question: Iri
    kind: Iri | None
    query: Literal
    started: Literal
    parent: Iri | None


@dataclass(frozen=True, slots=True)
class QuestionRow:
    """One (kind, parent) combination of a stored question (each None when it has none)."""

    question: Iri
    kind: Iri | None
    parent: Iri | None


@dataclass(frozen=True, slots=True)
class DocumentHead:
    """A stored document's title, media type and page count (each None when not recorded)."""

    title: Literal | None
    mime_type: Literal | None
    pages: Literal | None


@dataclass(frozen=True, slots=True)
class PartRow:
    """A page, section or chunk under a document: its class, parent and position properties."""

    node: Iri
    kind: Iri  # tg:Page, tg:Section or tg:Chunk
    parent: Iri
    label: Literal | None
    number: Literal | None
    index: Literal | None
    offset: Literal | None
    length: Literal | None


@dataclass(frozen=True, slots=True)
class ChunkExtraction:
    """What was extracted from one chunk: the extractors' labels and the facts (both sorted)."""

    components: tuple[str, ...]
    facts: tuple[TripleTerm, ...]


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One source of an edge or chunk: subgraph → chunk → parent (page/section/document) → document.

    ``edge`` is the index of the edge asked about (None for chunk sources); ``document`` is the
    parent's own parent when the parent is a page or section, else None (the parent is the document).
    """

    edge: int | None
    subgraph: Iri | None
    chunk: Iri
    chunk_index: Literal
    offset: Literal
    length: Literal
    parent: Iri
    page_number: Literal | None
    parent_label: Literal | None
    document: Iri | None
    title: Literal | None
    evidence: Literal | None


class NamedQueries(Protocol):
    """The fixed-shape reads (see the module docstring). Each raises StoreError when the store fails."""

    def labels(self, iris: Sequence[Iri]) -> dict[Iri, list[Literal]]:
        """Every ``rdfs:label`` of each IRI in the default graph (IRIs without one are left out)."""
        ...

    def derived_nodes(self, document: Iri) -> dict[Iri, bool]:
        """Every node derived from ``document`` (1–3 ``prov:wasDerivedFrom`` hops in the source graph), each
        with whether it is an extraction subgraph (``tg:Subgraph``)."""
        ...

    def traces_using_edges(self, subgraphs: Sequence[Iri]) -> list[tuple[Iri, TripleTerm]]:
        """(question, edge) for every trace step that selected an edge one of ``subgraphs`` contains."""
        ...

    def traces_using_chunks(self, chunks: Sequence[Iri]) -> list[tuple[Iri, Iri]]:
        """(question, chunk) for every trace step that selected or cited one of ``chunks``."""
        ...

    def trace_summaries(self, *, include_sub_traces: bool, limit: int | None) -> list[TraceRow]:
        """The stored questions (with a query and a start time), newest first then by IRI; questions informed
        by another (sub-traces) only when ``include_sub_traces``; at most ``limit``."""
        ...

    def resolve_questions(self, candidates: Sequence[Iri]) -> list[QuestionRow]:
        """Which of ``candidates`` are stored questions: one row per (kind among the four trace kinds, parent)."""
        ...

    def trace_triples(self, question: Iri) -> list[tuple[Iri, Iri, Term]]:
        """Every statement of the trace tree rooted at ``question``: it, the questions informed by it
        (transitively), the steps they generated, the steps' edge/chunk selections and citations, and the
        retraction records naming any of them. Sorted."""
        ...

    def document_head(self, document: Iri) -> DocumentHead | None:
        """The document's head (None when no ``tg:Document`` of that IRI is stored)."""
        ...

    def document_parts(self, document: Iri) -> list[PartRow]:
        """The pages, sections and chunks under ``document`` (chunks directly or under a part), by node."""
        ...

    def chunk_extractions(self, chunks: Sequence[Iri]) -> dict[Iri, ChunkExtraction]:
        """For each chunk with an extraction subgraph: the labels of the extractors and the facts extracted."""
        ...

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        """The facts the extraction subgraphs of each chunk contain (chunks with none are left out)."""
        ...

    def facts_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        """The facts each subgraph contains (subgraphs with none are left out)."""
        ...

    def evidence_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, Literal]:
        """Each subgraph's ``tg:evidence`` literal (subgraphs without one are left out)."""
        ...

    def edge_sources(self, edges: Sequence[TripleTerm], *, evidence: bool = False) -> list[SourceRow]:
        """Every source of each edge (``SourceRow.edge`` is its index in ``edges``), with the subgraph's
        evidence literal when asked; sorted by edge, then subgraph."""
        ...

    def chunk_sources(self, chunks: Sequence[Iri]) -> list[SourceRow]:
        """The parent and document of each chunk (one row a chunk), in the order asked."""
        ...

    def fact_support(self) -> list[tuple[TripleTerm, int]]:
        """Every fact an extraction subgraph contains, with how many subgraphs do (its support set's size);
        sorted by fact. What communities are found in (communities/graph.py)."""
        ...
