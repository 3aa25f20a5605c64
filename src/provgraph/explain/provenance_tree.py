"""Reading a document's provenance back: document → page/section → chunk → extracted edges.

Three store queries whatever the document's size: the tree, the edges of every subgraph under
it, and the labels of every term those edges use.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from provgraph.errors import NotFound
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.store.oxigraph import OxigraphStore

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


_DOC = "SELECT ?title ?mime ?pages WHERE { GRAPH <urn:graph:source> { ?doc a tg:Document . OPTIONAL { ?doc dc:title ?title } OPTIONAL { ?doc tg:mimeType ?mime } OPTIONAL { ?doc tg:pageCount ?pages } } }"
_TREE = """
SELECT ?node ?kind ?parent ?label ?num ?idx ?off ?len WHERE { GRAPH <urn:graph:source> {
  { ?node prov:wasDerivedFrom ?doc . BIND(?doc AS ?parent) }
  UNION { ?node prov:wasDerivedFrom ?parent . ?parent prov:wasDerivedFrom ?doc }
  ?node a ?kind . FILTER(?kind IN (tg:Page, tg:Section, tg:Chunk))
  OPTIONAL { ?node rdfs:label ?label } OPTIONAL { ?node tg:pageNumber ?num } OPTIONAL { ?node tg:chunkIndex ?idx }
  OPTIONAL { ?node tg:charOffset ?off } OPTIONAL { ?node tg:charLength ?len }
} }
"""
_EDGES = """
SELECT ?chunk ?fact ?component WHERE { GRAPH <urn:graph:source> {
  VALUES ?chunk { %s }
  ?sg prov:wasDerivedFrom ?chunk ; a tg:Subgraph ; prov:wasGeneratedBy ?act .
  ?act prov:wasAssociatedWith ?agent . ?agent rdfs:label ?component .
  OPTIONAL { ?sg tg:contains ?fact }
} }
"""


def _int(t: Term | None) -> int:
    return int(t.value) if isinstance(t, Literal) else 0


def labels_for(store: OxigraphStore, terms: list[Term]) -> dict[Term, str]:
    """``rdfs:label`` of many terms in one query (literals label themselves; else the IRI)."""
    iris = list(dict.fromkeys(t for t in terms if isinstance(t, Iri)))
    out: dict[Term, str] = {t: t.value for t in terms if isinstance(t, Literal)}
    if iris:
        q = "SELECT ?t ?l WHERE { VALUES ?t { %s } ?t rdfs:label ?l }" % " ".join(str(i) for i in iris)
        for row in store.select(q):
            out.setdefault(row["t"], row["l"].value)  # type: ignore[union-attr]
    for t in terms:
        out.setdefault(t, t.value if isinstance(t, Iri) else str(t))
    return out


def document_tree(store: OxigraphStore, document: Iri, *, with_edges: bool = True) -> DocumentTree:
    """The document's tree; raises NotFound when the store has no such document."""
    head = store.select(_DOC, bind={"doc": document}).rows
    if not head:
        raise NotFound(f"document {document.value} is not in collection {store.name}")
    h = head[0]
    tree = DocumentTree(document, h["title"].value if "title" in h else document.value,  # type: ignore[union-attr]
                        h["mime"].value if "mime" in h else "", _int(h.get("pages")) or None)  # type: ignore[union-attr]
    parts: dict[Iri, PartNode] = {}
    chunks: dict[Iri, tuple[Iri, ChunkNode]] = {}
    for row in store.select(_TREE, bind={"doc": document}):
        node, kind, parent = row["node"], row["kind"], row["parent"]
        assert isinstance(node, Iri) and isinstance(parent, Iri)
        if kind.value.endswith("Chunk"):  # type: ignore[union-attr]
            chunks[node] = (parent, ChunkNode(node, _int(row.get("idx")), _int(row.get("off")), _int(row.get("len"))))
        else:
            is_page = kind.value.endswith("Page")  # type: ignore[union-attr]
            label = row["label"].value if "label" in row else ""  # type: ignore[union-attr]
            parts[node] = PartNode(node, "page" if is_page else "section", label,
                                   _int(row.get("num")) if is_page else None, _int(row.get("off")), _int(row.get("len")))
    for parent, chunk in chunks.values():
        (parts[parent].chunks if parent in parts else tree.chunks).append(chunk)
    tree.parts = sorted(parts.values(), key=lambda p: (p.offset, p.number or 0))
    for chunk_list in [tree.chunks, *(p.chunks for p in tree.parts)]:
        chunk_list.sort(key=lambda c: c.index)
    if with_edges and chunks:
        _attach_edges(store, {iri: c for iri, (_, c) in chunks.items()})
    return tree


def _attach_edges(store: OxigraphStore, chunks: dict[Iri, ChunkNode]) -> None:
    facts: dict[Iri, list[TripleTerm]] = defaultdict(list)
    for row in store.select(_EDGES % " ".join(str(c) for c in chunks)):
        chunk = chunks[row["chunk"]]  # type: ignore[index]
        comp = row["component"].value  # type: ignore[union-attr]
        if comp not in chunk.components:
            chunk.components.append(comp)
        fact = row.get("fact")
        if isinstance(fact, TripleTerm) and fact not in facts[chunk.iri]:
            facts[chunk.iri].append(fact)
    terms: list[Term] = [t for fs in facts.values() for f in fs for t in (f.s, f.p, f.o)]
    labels = labels_for(store, terms)
    for iri, fs in facts.items():
        node = chunks[iri]
        node.facts = fs
        node.edges = sorted((labels[f.s], labels[f.p], labels[f.o]) for f in fs)
