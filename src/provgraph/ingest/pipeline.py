"""Load one document: decode → parts → chunks, with librarian records and SPEC §4.1 provenance.

IDs are deterministic, so loading the same bytes twice changes nothing ("unchanged"); loading
changed bytes under the same document ID replaces its parts, chunks, subgraphs and the facts
only they supported ("replaced"). A document counts as loaded only once its completion record is
written (by the caller, after extraction and vectors); one without it is redone ("resumed").
A document that fails leaves nothing behind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from provgraph import __version__
from provgraph.extract.base import ChunkInput
from provgraph.ingest.chunker import chunk_text, check_chunking
from provgraph.ingest.decoders import decode_bytes, mime_type_for, read_file
from provgraph.ingest.removal import document_entities, forget_vectors
from provgraph.ingest.types import DecodedDocument
from provgraph.librarian.base import NewRecord
from provgraph.librarian.base import Librarian
from provgraph.provenance.common import activity_quads, agent_quads
from provgraph.provenance.source import chunk_quads, document_quads, page_quads, section_quads
from provgraph.rdf.ids import activity_iri, chunk_iri, document_iri, page_iri, section_iri
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_SOURCE, RDF, TG
from provgraph.store.base import QuadStore
from provgraph.communities.stale import stale_after_removal
from provgraph.store.retraction import retraction_for
from provgraph.store.support import document_removal
from provgraph.vectors.base import VectorIndex

__all__ = ["LoadResult", "DocumentLoader", "CHUNKER", "decoder_component"]

CHUNKER = "chunker"
_BULK_FROM = 20_000  # quads; below this one transaction is fast enough
_DECODERS = {"application/pdf": "pdf-decoder", "text/markdown": "markdown-decoder", "text/html": "html-decoder"}


def decoder_component(mime_type: str) -> str:
    """The PROV agent name of the decoder for a MIME type."""
    return _DECODERS.get(mime_type, "text-decoder")


@dataclass(frozen=True)
class LoadResult:
    """What loading one document did."""

    document: Iri
    title: str
    status: str  # loaded | unchanged | replaced | resumed (an interrupted load, redone)
    pages: int
    sections: int
    chunks: tuple[ChunkInput, ...]
    warnings: tuple[str, ...] = ()


@dataclass
class _Plan:
    quads: list[Quad] = field(default_factory=list)
    records: list[NewRecord] = field(default_factory=list)
    chunks: list[ChunkInput] = field(default_factory=list)


class DocumentLoader:
    """Loads documents into one collection's store and librarian."""

    def __init__(
        self,
        store: QuadStore,
        librarian: Librarian,
        *,
        chunk_size: int = 2000,
        chunk_overlap: int = 100,
        max_bytes: int = 64 * 2**20,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        chunk_index: VectorIndex | None = None,
        entity_index: VectorIndex | None = None,
    ) -> None:
        check_chunking(chunk_size, chunk_overlap)
        self.store = store
        self.librarian = librarian
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.max_bytes = max_bytes
        self._clock = clock
        self.chunk_index = chunk_index
        self.entity_index = entity_index

    def load_file(self, path: Path, *, doc_id: str | None = None, title: str | None = None,
                  metadata: Mapping[str, str] | None = None, tags: Sequence[str] = ()) -> LoadResult:
        """Read, decode and store one file (document ID defaults to the file name)."""
        mime = mime_type_for(path)
        data = read_file(path, max_bytes=self.max_bytes)
        decoded = decode_bytes(data, mime_type=mime, name=str(path), max_bytes=self.max_bytes)
        meta = {"source": str(path.resolve()), **(metadata or {})}
        title = " ".join((title or decoded.title or path.name).split()) or path.name  # one line, always
        return self.load_decoded(decoded, data, doc_id=doc_id or path.name, title=title, metadata=meta, tags=tags)

    def load_decoded(self, decoded: DecodedDocument, data: bytes, *, doc_id: str, title: str,
                     metadata: Mapping[str, str] | None = None, tags: Sequence[str] = ()) -> LoadResult:
        """Store an already decoded document; returns what changed."""
        doc = document_iri(doc_id)
        settings = {"chunk_size": str(self.chunk_size), "chunk_overlap": str(self.chunk_overlap)}
        digest = hashlib.sha256(data).hexdigest()
        status = "loaded"
        if self.librarian.exists(doc.value):
            old = self.librarian.get(doc.value)
            same_settings = all(old.metadata.get(k) == v for k, v in settings.items())
            same = old.content_hash == digest and same_settings and old.title == title
            if same and self.librarian.is_complete(doc.value):
                return self._unchanged(doc, title, decoded)
            status = "resumed" if same else "replaced"
            self.librarian.remove(doc.value)  # its completion record goes with it: the first write
        plan = self._plan(doc, decoded, data, title, {**(metadata or {}), **settings}, tags)
        stored = self.store.count(doc, RDF.type, TG.Document, g=GRAPH_SOURCE) > 0
        entities = document_entities(self.store, doc) if stored else set()
        removal = document_removal(self.store, doc) if stored else []
        # changed bytes retract what traces used; a resumed load (same bytes) retracts nothing
        retraction = retraction_for(self.store, doc, at=self._clock(), reason="replaced") \
            if removal and status == "replaced" else []
        retraction += stale_after_removal(self.store, removal, doc) if removal else []
        self.librarian.add(plan.records)
        try:
            if removal or len(plan.quads) < _BULK_FROM:
                self.store.apply(remove=removal, add=plan.quads + retraction)
            else:  # a large new document: the bulk path, undone below if it fails part-way
                self.store.bulk_add(plan.quads)
        except Exception:
            self.librarian.remove(doc.value)
            if not removal:
                self.store.apply(remove=document_removal(self.store, doc))
            raise
        if stored:
            forget_vectors(self.store, doc, entities, chunk_index=self.chunk_index, entity_index=self.entity_index)
        pages = sum(1 for p in decoded.parts if p.kind == "page")
        return LoadResult(doc, title, status, pages, len(decoded.parts) - pages, tuple(plan.chunks), decoded.warnings)

    def stored_chunks(self, doc: Iri) -> tuple[ChunkInput, ...]:
        """The chunks of a loaded document, from the librarian, in order (texts in one call)."""
        parents = [r.id for r in self.librarian.children(doc.value) if r.kind != "chunk"] or [doc.value]
        records = [r for parent in parents for r in self.librarian.children(parent) if r.kind == "chunk"]
        texts = self.librarian.texts([r.id for r in records])
        return tuple(ChunkInput(Iri(r.id), texts[r.id], doc) for r in records)

    def _unchanged(self, doc: Iri, title: str, decoded: DecodedDocument) -> LoadResult:
        pages = sum(1 for p in decoded.parts if p.kind == "page")
        return LoadResult(doc, title, "unchanged", pages, len(decoded.parts) - pages, self.stored_chunks(doc))

    def _plan(self, doc: Iri, decoded: DecodedDocument, data: bytes, title: str,
              metadata: Mapping[str, str], tags: Sequence[str]) -> _Plan:
        now = self._clock()
        plan = _Plan()
        pages = [p for p in decoded.parts if p.kind == "page"]
        plan.quads += document_quads(doc, title=title, mime_type=decoded.mime_type,
                                     page_count=len(pages) if pages else None, metadata=metadata)
        plan.records.append(NewRecord(doc.value, "document", data, text=decoded.text, title=title,
                                      mime_type=decoded.mime_type, metadata=metadata, tags=tags, created=now))
        if not decoded.parts:
            self._chunk(plan, doc, doc, decoded.text, now)
            return plan
        decoder = decoder_component(decoded.mime_type)
        act = activity_iri(decoder, __version__, doc.value)
        plan.quads += activity_quads(act, component=decoder, version=__version__, used=doc, started=now,
                                     graph=GRAPH_SOURCE) + agent_quads(decoder, GRAPH_SOURCE)
        for part in decoded.parts:
            if part.kind == "page":
                node = page_iri(doc, part.number)
                plan.quads += page_quads(node, document=doc, number=part.number, offset=part.offset,
                                         length=part.length, activity=act)
            else:
                node = section_iri(doc, part.number)
                plan.quads += section_quads(node, document=doc, label=part.label, offset=part.offset,
                                            length=part.length, activity=act)
            text = decoded.part_text(part)
            plan.records.append(NewRecord(node.value, part.kind, text, parent_id=doc.value, title=part.label,
                                          number=part.number, offset=part.offset, length=part.length, created=now))
            self._chunk(plan, doc, node, text, now)
        return plan

    def _chunk(self, plan: _Plan, doc: Iri, parent: Iri, text: str, now: datetime) -> None:
        spans = chunk_text(text, size=self.chunk_size, overlap=self.chunk_overlap)
        if not spans:
            return
        act = activity_iri(CHUNKER, __version__, parent.value, self.chunk_size, self.chunk_overlap)
        plan.quads += activity_quads(act, component=CHUNKER, version=__version__, used=parent, started=now,
                                     graph=GRAPH_SOURCE, chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap)
        plan.quads += agent_quads(CHUNKER, GRAPH_SOURCE)
        for span in spans:
            index = span.index + 1
            node = chunk_iri(parent, index, span.offset, span.length)
            plan.quads += chunk_quads(node, parent=parent, index=index, offset=span.offset, length=span.length,
                                      activity=act)
            plan.records.append(NewRecord(node.value, "chunk", span.text, parent_id=parent.value,
                                          title=f"Chunk {index}", number=index, offset=span.offset,
                                          length=span.length, created=now))
            plan.chunks.append(ChunkInput(node, span.text, doc))
