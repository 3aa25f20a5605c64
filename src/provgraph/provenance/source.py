"""Document, page, section and chunk entities of SPEC §4.1, in ``urn:graph:source``.

Chunk indexes are 1-based within their parent, like page numbers, so ``rdfs:label "Chunk 3"``
and ``tg:chunkIndex 3`` agree and ``Chunk 1 → Page 2`` reads naturally.
"""

from __future__ import annotations

from collections.abc import Mapping

from provgraph.provenance.common import Quads
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import DC, GRAPH_SOURCE, PROV, RDFS, TG

__all__ = ["document_quads", "page_quads", "section_quads", "chunk_quads"]


def document_quads(
    document: Iri,
    *,
    title: str,
    mime_type: str,
    page_count: int | None = None,
    metadata: Mapping[str, str] | None = None,
) -> list[Quad]:
    """The document entity; ``metadata`` may carry ``source``, ``date`` and ``creator`` (Dublin Core)."""
    q = Quads(GRAPH_SOURCE).types(document, PROV.Entity, TG.Document)
    q.text(document, DC.title, title).text(document, RDFS.label, title).text(document, TG.mimeType, mime_type)
    q.integer(document, TG.pageCount, page_count)
    meta = metadata or {}
    for key in ("source", "date", "creator"):
        if meta.get(key):
            q.add(document, DC[key], Literal(meta[key]))
    return q.items


def _derived(q: Quads, node: Iri, parent: Iri, activity: Iri, offset: int, length: int) -> None:
    q.integer(node, TG.charOffset, offset).integer(node, TG.charLength, length)
    q.add(node, PROV.wasDerivedFrom, parent).add(node, PROV.wasGeneratedBy, activity)


def page_quads(page: Iri, *, document: Iri, number: int, offset: int, length: int, activity: Iri) -> list[Quad]:
    """A page (1-based ``number``) at its position in the document text."""
    q = Quads(GRAPH_SOURCE).types(page, PROV.Entity, TG.Page)
    q.text(page, RDFS.label, f"Page {number}").integer(page, TG.pageNumber, number)
    _derived(q, page, document, activity, offset, length)
    return q.items


def section_quads(section: Iri, *, document: Iri, label: str, offset: int, length: int, activity: Iri) -> list[Quad]:
    """A section of a non-paged document (labelled with its heading)."""
    q = Quads(GRAPH_SOURCE).types(section, PROV.Entity, TG.Section)
    q.text(section, RDFS.label, label)
    _derived(q, section, document, activity, offset, length)
    return q.items


def chunk_quads(chunk: Iri, *, parent: Iri, index: int, offset: int, length: int, activity: Iri) -> list[Quad]:
    """A chunk (1-based ``index`` within its parent) at its position in the parent's text."""
    q = Quads(GRAPH_SOURCE).types(chunk, PROV.Entity, TG.Chunk)
    q.text(chunk, RDFS.label, f"Chunk {index}").integer(chunk, TG.chunkIndex, index)
    _derived(q, chunk, parent, activity, offset, length)
    return q.items
