"""Loaded documents as plain data: the rows of ``documents list``, one document's detail, its provenance tree.

The CLI's ``--format json`` and the HTTP API print these same objects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from provgraph.errors import NotFound
from provgraph.explain.provenance_tree import ChunkNode, DocumentTree
from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri

if TYPE_CHECKING:  # annotations only: `documents list` loads neither the extractors nor the models
    from provgraph.extract.pipeline import ChunkOutcome
    from provgraph.ingest.pipeline import LoadResult

__all__ = ["document_rows", "document_detail", "provenance_json", "load_summary"]


def document_rows(librarian: Librarian) -> list[dict[str, Any]]:
    """One row per document: id, title, mime_type, size, parts, loaded (UTC, seconds)."""
    docs = librarian.list(kind="document")
    return [{"id": d.id, "title": d.title, "mime_type": d.mime_type, "size": d.size,
             "parts": len(librarian.children(d.id)), "loaded": d.created.isoformat(timespec="seconds")}
            for d in docs]


def document_detail(librarian: Librarian, iri: Iri, where: str) -> dict[str, Any]:
    """A document's metadata and parts; NotFound names the collection ``where``."""
    if not librarian.exists(iri.value):
        raise NotFound(f"document {iri.value} is not in collection {where}")
    rec = librarian.get(iri.value)
    parts = librarian.children(iri.value)
    return {"id": rec.id, "title": rec.title, "mime_type": rec.mime_type, "size": rec.size,
            "content_hash": rec.content_hash, "loaded": rec.created.isoformat(timespec="seconds"),
            "metadata": rec.metadata, "tags": list(rec.tags),
            "parts": [{"id": p.id, "kind": p.kind, "number": p.number, "title": p.title, "offset": p.offset,
                       "length": p.length} for p in parts]}


def _chunk_json(c: ChunkNode) -> dict[str, Any]:
    return {"chunk": c.iri.value, "index": c.index, "offset": c.offset, "length": c.length,
            "extractors": c.components, "edges": [list(e) for e in c.edges]}


def provenance_json(tree: DocumentTree) -> dict[str, Any]:
    """The document → part → chunk → edges tree."""
    return {
        "document": tree.iri.value, "title": tree.title, "mime_type": tree.mime_type, "pages": tree.page_count,
        "parts": [{"part": p.iri.value, "kind": p.kind, "label": p.label, "number": p.number, "offset": p.offset,
                   "length": p.length, "chunks": [_chunk_json(c) for c in p.chunks]} for p in tree.parts],
        "chunks": [_chunk_json(c) for c in tree.chunks],
    }


def _status(loaded: str, counts: Counter[str]) -> str:
    """The document's load status, unless its extractions failed: all of them, or some."""
    if counts["failed"] and counts["failed"] == counts["extractions"]:
        return "extraction failed"
    if counts["failed"]:
        return "partly extracted"
    return loaded


def load_summary(results: Sequence[LoadResult], outcomes: Sequence[ChunkOutcome],
                 failed_files: Sequence[str]) -> dict[str, Any]:
    """What a load did (``load --format json``): one row per document, failed files, extraction errors."""
    by_doc: dict[str, Counter[str]] = {}
    chunk_doc = {c.iri.value: r.document.value for r in results for c in r.chunks}
    for o in outcomes:
        counts = by_doc.setdefault(chunk_doc.get(o.chunk.value, ""), Counter())
        counts["facts"] += o.facts
        counts["failed"] += int(o.failed)
        counts["extractions"] += 1
    rows = [
        {"document": r.document.value, "title": r.title, "pages": r.pages, "sections": r.sections,
         "chunks": len(r.chunks), "facts": by_doc.get(r.document.value, Counter())["facts"],
         "failed_chunks": by_doc.get(r.document.value, Counter())["failed"],
         "status": _status(r.status, by_doc.get(r.document.value, Counter()))}
        for r in results
    ]
    return {"documents": rows, "failed_files": list(failed_files), "errors": [o.error for o in outcomes if o.failed]}
