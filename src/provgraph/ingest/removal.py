"""Removing a document from every store, in the order that keeps a crash recoverable.

Its completion record goes first (from then on the document counts as not loaded, and the
next ``load`` redoes it), then its quads, then its chunk vectors and the vectors of entities it
alone supported, and its librarian records last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from provgraph.communities.stale import stale_after_removal
from provgraph.extract.derived import still_supported, subgraph_entities
from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_SOURCE, RDF, TG
from provgraph.store.base import QuadStore
from provgraph.store.support import document_nodes, document_removal
from provgraph.vectors.base import VectorIndex

__all__ = ["document_entities", "forget_vectors", "remove_document"]


def document_entities(store: QuadStore, doc: Iri) -> set[Iri]:
    """The entities named by the facts of the document's extraction subgraphs."""
    subgraphs = [n for n in document_nodes(store, doc) if store.count(n, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)]
    return subgraph_entities(store, subgraphs)


def forget_vectors(store: QuadStore, doc: Iri, entities: Iterable[Iri], *,
                   chunk_index: VectorIndex | None, entity_index: VectorIndex | None) -> None:
    """Drop the document's chunk vectors and those of ``entities`` no subgraph supports any more."""
    if chunk_index is not None:
        chunk_index.delete_where({"document": doc.value})
    named = set(entities)
    if entity_index is not None and named:
        entity_index.delete([e.value for e in named - still_supported(store, named)])


def remove_document(store: QuadStore, librarian: Librarian, doc: Iri, *,
                    chunk_index: VectorIndex | None = None, entity_index: VectorIndex | None = None,
                    also_add: Sequence[Quad] = ()) -> int:
    """Remove ``doc`` everywhere; returns how many quads went. ``also_add`` (e.g. the retraction
    record of the traces that used it) is written in the same transaction as the removal, and so are the
    stale marks of the community reports whose member facts go with it."""
    librarian.clear_complete(doc.value)
    entities = document_entities(store, doc)
    removal = document_removal(store, doc)
    store.apply(remove=removal, add=[*also_add, *stale_after_removal(store, removal, doc)])
    forget_vectors(store, doc, entities, chunk_index=chunk_index, entity_index=entity_index)
    if librarian.exists(doc.value):
        librarian.remove(doc.value)
    return len(removal)
