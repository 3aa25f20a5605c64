"""Run extractors over chunks: facts, labels and ONE subgraph per (chunk, extractor), then vectors.

Per (chunk, extractor) everything is written in ONE store transaction that also removes the
previous subgraph of the same (chunk, component, version, model) and the facts only it
supported, so re-extraction replaces instead of duplicating. A failing model call marks the
chunk failed for that extractor and writes nothing for it; other chunks go on. Entity and chunk
vectors are written after the quads of their chunk, in batches (and at the end of a run). After
each batch, ``on_commit`` gets the documents all of whose chunks are now written to every store
(the caller makes them durable and writes their completion records).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from datetime import datetime, timezone

from provgraph.errors import InputError, ModelError
from provgraph.extract.base import ChunkInput, EntityInfo, Extraction, Extractor
from provgraph.extract.derived import entity_text
from provgraph.models.base import Embedder
from provgraph.provenance.subgraph import subgraph_quads
from provgraph.rdf.ids import activity_iri, subgraph_iri
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_SOURCE, RDF, TG
from provgraph.store.oxigraph import OxigraphStore
from provgraph.store.support import subgraph_removal
from provgraph.vectors.base import VectorIndex

__all__ = ["ChunkOutcome", "ExtractionPipeline", "subgraph_for"]

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def subgraph_for(chunk: Iri, extractor: Extractor) -> Iri:
    """The deterministic subgraph IRI of one extractor's run over one chunk."""
    return subgraph_iri(chunk, extractor.component, extractor.version, extractor.model_name)


@dataclass(frozen=True, slots=True)
class ChunkOutcome:
    """What happened to one (chunk, extractor)."""

    chunk: Iri
    component: str
    facts: int = 0
    provenance_quads: int = 0
    dropped: int = 0
    skipped: bool = False
    error: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the extraction failed (nothing was written for it)."""
        return self.error is not None


class ExtractionPipeline:
    """Extract → write quads → embed, for many chunks, with a limit on concurrent LLM calls."""

    def __init__(
        self,
        store: OxigraphStore,
        extractors: Sequence[Extractor],
        *,
        embedder: Embedder | None = None,
        entity_index: VectorIndex | None = None,
        chunk_index: VectorIndex | None = None,
        concurrency: int = 4,
        batch_size: int = 256,
        clock: Clock = _utcnow,
    ) -> None:
        if concurrency < 1:
            raise InputError("concurrency must be at least 1")
        self.store = store
        self.extractors = list(extractors)
        self.embedder = embedder
        self.entity_index = entity_index
        self.chunk_index = chunk_index
        self._limit = asyncio.Semaphore(concurrency)
        self.batch_size = batch_size
        self._entities: dict[str, dict[str, Any]] = {}
        self._chunks: dict[str, tuple[dict[str, str], str]] = {}
        self._clock = clock
        self._pending: dict[Iri, int] = {}
        self._ready: list[Iri] = []
        self._on_commit: Callable[[list[Iri]], None] | None = None

    def is_done(self, chunk: Iri, extractor: Extractor) -> bool:
        """Whether this extractor's subgraph for the chunk is already stored."""
        return self.store.count(subgraph_for(chunk, extractor), RDF.type, TG.Subgraph, g=GRAPH_SOURCE) > 0

    async def run(
        self,
        chunks: Sequence[ChunkInput],
        *,
        only_missing: bool = False,
        progress: Callable[[ChunkOutcome], None] | None = None,
        on_commit: Callable[[list[Iri]], None] | None = None,
    ) -> list[ChunkOutcome]:
        """Extract every chunk with every extractor; ``only_missing`` retries just failed/new ones.

        ``on_commit(documents)`` is called after vectors are written, with the documents whose
        chunks are all done (failed extractions included: ``extract`` retries them).
        """
        self._on_commit = on_commit
        for chunk in chunks:
            self._pending[chunk.document] = self._pending.get(chunk.document, 0) + 1

        async def one(chunk: ChunkInput) -> list[ChunkOutcome]:
            outcomes = await asyncio.gather(*(self._extract(chunk, ex, only_missing) for ex in self.extractors))
            if any(not o.skipped for o in outcomes):
                self._embed_chunk(chunk)
            self._pending[chunk.document] -= 1
            if not self._pending[chunk.document]:
                del self._pending[chunk.document]
                self._ready.append(chunk.document)
            if progress is not None:
                for o in outcomes:
                    progress(o)
            return list(outcomes)

        try:
            results = await asyncio.gather(*(one(c) for c in chunks))
        finally:
            self._flush_vectors()  # vectors follow the quads of their chunks, batched
        return [o for group in results for o in group]

    async def _extract(self, chunk: ChunkInput, extractor: Extractor, only_missing: bool) -> ChunkOutcome:
        if only_missing and self.is_done(chunk.iri, extractor):
            return ChunkOutcome(chunk.iri, extractor.component, skipped=True)
        started = self._clock()
        try:
            async with self._limit:
                extraction = await extractor.extract(chunk)
        except (ModelError, InputError) as exc:
            return ChunkOutcome(chunk.iri, extractor.component, error=f"{type(exc).__name__}: {exc}")
        written = self._write(chunk, extractor, extraction, started)
        self._embed_entities(chunk, extraction.entities)
        return ChunkOutcome(chunk.iri, extractor.component, facts=len(extraction.facts),
                            provenance_quads=written, dropped=extraction.dropped)

    def _write(self, chunk: ChunkInput, extractor: Extractor, ex: Extraction, started: datetime) -> int:
        sg = subgraph_for(chunk.iri, extractor)
        prov = subgraph_quads(
            sg, facts=ex.facts, chunk=chunk.iri, activity=activity_iri(sg.value), component=extractor.component,
            version=extractor.version, started=started, llm_model=extractor.model_name, ontology=ex.ontology,
            evidence=ex.evidence,
        )
        knowledge = [Quad(f.s, f.p, f.o) for f in ex.facts] + list(ex.labels)
        removal = subgraph_removal(self.store, [sg], keep_facts=ex.facts)
        self.store.apply(remove=removal, add=knowledge + prov)
        return len(prov)

    def _embed_entities(self, chunk: ChunkInput, entities: Sequence[EntityInfo]) -> None:
        if self.embedder is None or self.entity_index is None or not entities:
            return
        new = [e for e in entities if e.iri.value not in self._entities]
        known = self.entity_index.get([e.iri.value for e in new]) if new else {}
        for e in entities:
            key = e.iri.value
            old = self._entities.get(key) or known.get(key, {})
            chunks = list(dict.fromkeys([*old.get("chunks", []), chunk.iri.value]))
            definition = e.definition or old.get("definition")
            self._entities[key] = {"entity": key, "label": e.label, "definition": definition, "chunks": chunks}
        if len(self._entities) >= self.batch_size:
            self._flush_vectors()

    def _embed_chunk(self, chunk: ChunkInput) -> None:
        if self.embedder is None or self.chunk_index is None:
            return
        self._chunks[chunk.iri.value] = ({"chunk": chunk.iri.value, "document": chunk.document.value}, chunk.text)
        if len(self._chunks) >= self.batch_size:
            self._flush_vectors()

    def _flush_vectors(self) -> None:
        """Embed and upsert what is buffered, in one batch per index; then commit finished documents."""
        if self.embedder is not None:
            self._upsert_vectors()
        ready, self._ready = self._ready, []
        if ready and self._on_commit is not None:
            self._on_commit(ready)

    def _upsert_vectors(self) -> None:
        assert self.embedder is not None
        if self._entities and self.entity_index is not None:
            ids = list(self._entities)
            payloads = [self._entities[i] for i in ids]
            texts = [entity_text(p["label"], p["definition"]) for p in payloads]
            self.entity_index.upsert(ids, self.embedder.embed(texts), payloads)
        if self._chunks and self.chunk_index is not None:
            ids = list(self._chunks)
            self.chunk_index.upsert(ids, self.embedder.embed([self._chunks[i][1] for i in ids]),
                                    [self._chunks[i][0] for i in ids])
        self._entities.clear()
        self._chunks.clear()
