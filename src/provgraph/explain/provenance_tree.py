"""Reading a document's provenance back: document → page/section → chunk → extracted edges.

A fixed handful of store reads whatever the document's size: the tree, the edges of every subgraph under
it, and the labels of every term those edges use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from provgraph.errors import NotFound
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.retrieval.labels import fallback_label
from provgraph.store.base import QuadStore

__all__ = ["ChunkNode", "PartNode", "DocumentTree", "document_tree", "labels_for"]


@dataclass
class ChunkNode:
    """A chunk with its position and the edges extracted from it."""

    iri: Iri
    index: int
    offset: int
    length: int
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # labels
    facts: list[TripleTerm] = field(default_factory=list)
    components: list[str] = field(default_factory=list)


@dataclass
class PartNode:
    """A page or section."""

    iri: Iri
    kind: str  # page | section
    label: str
    number: int | None
    offset: int
    length: int
    chunks: list[ChunkNode] = field(default_factory=list)


@dataclass
class DocumentTree:
    """A document and everything derived from it."""

    iri: Iri
    title: str
    mime_type: str
    page_count: int | None
    parts: list[PartNode] = field(default_factory=list)
    chunks: list[ChunkNode] = field(default_factory=list)  # chunks directly under the document


def _int(t: Term | None) -> int:
    return int(t.value) if isinstance(t, Literal) else 0


def labels_for(store: QuadStore, terms: list[Term]) -> dict[Term, str]:
    """``rdfs:label`` of many terms in one store read (literals label themselves; an IRI without one shows its
    last segment, as the explain steps print it: ``skos:definition`` → definition)."""
    iris = list(dict.fromkeys(t for t in terms if isinstance(t, Iri)))
    out: dict[Term, str] = {t: t.value for t in terms if isinstance(t, Literal)}
    if iris:
        out.update({iri: labels[0].value for iri, labels in store.labels(iris).items()})
    for t in terms:
        out.setdefault(t, fallback_label(t))
    return out


def document_tree(store: QuadStore, document: Iri, *, with_edges: bool = True) -> DocumentTree:
    """The document's tree; raises NotFound when the store has no such document."""
    head = store.document_head(document)
    if head is None:
        raise NotFound(f"document {document.value} is not in collection {store.name}")
    tree = DocumentTree(document, head.title.value if head.title else document.value,
                        head.mime_type.value if head.mime_type else "", _int(head.pages) or None)
    parts: dict[Iri, PartNode] = {}
    chunks: dict[Iri, tuple[Iri, ChunkNode]] = {}
    for row in store.document_parts(document):
        node, parent = row.node, row.parent
        if row.kind.value.endswith("Chunk"):
            chunks[node] = (parent, ChunkNode(node, _int(row.index), _int(row.offset), _int(row.length)))
        else:
            is_page = row.kind.value.endswith("Page")
            label = row.label.value if row.label else ""
            parts[node] = PartNode(node, "page" if is_page else "section", label,
                                   _int(row.number) if is_page else None, _int(row.offset), _int(row.length))
    for parent, chunk in chunks.values():
        (parts[parent].chunks if parent in parts else tree.chunks).append(chunk)
    tree.parts = sorted(parts.values(), key=lambda p: (p.offset, p.number or 0))
    for chunk_list in [tree.chunks, *(p.chunks for p in tree.parts)]:
        chunk_list.sort(key=lambda c: c.index)
    if with_edges and chunks:
        _attach_edges(store, {iri: c for iri, (_, c) in chunks.items()})
    return tree


def _attach_edges(store: QuadStore, chunks: dict[Iri, ChunkNode]) -> None:
    facts: dict[Iri, list[TripleTerm]] = {}
    for iri, extraction in store.chunk_extractions(list(chunks)).items():
        chunks[iri].components = list(extraction.components)
        facts[iri] = list(extraction.facts)
    terms: list[Term] = [t for fs in facts.values() for f in fs for t in (f.s, f.p, f.o)]
    labels = labels_for(store, terms)
    for iri, fs in facts.items():
        node = chunks[iri]
        node.facts = fs
        node.edges = sorted((labels[f.s], labels[f.p], labels[f.o]) for f in fs)
