"""Run extractors over chunks: facts, labels and ONE subgraph per (chunk, extractor), then vectors.

A re-extraction writes its (chunk, extractor) in ONE store transaction that also removes the
previous subgraph of the same (chunk, component, version, model) and the facts only it
supported, so it replaces instead of duplicating. New subgraphs (nothing to remove) are
gathered and written once per batch (``batch_size`` chunks, or fewer once ``batch_seconds``
have passed, so a slow model loses little work to a crash), followed by the batch's entity and
chunk vectors: an entity's payload lists every chunk naming it, so fewer, larger batches rewrite
it less often. A failing model call marks the chunk failed for that extractor
and writes nothing for it; other chunks go on. After each batch, ``on_commit`` gets the
documents all of whose chunks are now written to every store (the caller makes them durable and
writes their completion records). A failed write ends the run and drops what was not yet written
(those documents stay incomplete and are redone by the next load).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from datetime import datetime, timezone

import numpy as np
from provgraph.errors import InputError, ModelError
from provgraph.extract.base import ChunkInput, EntityInfo, Extraction, Extractor
from provgraph.extract.derived import entity_text
from provgraph.gc_pacing import rarer_collections
from provgraph.models.base import Embedder
from provgraph.provenance.subgraph import subgraph_quads
from provgraph.rdf.ids import activity_iri, subgraph_iri
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_SOURCE, RDF, TG
from provgraph.store.base import QuadStore
from provgraph.store.support import subgraph_removal
from provgraph.vectors.base import CHUNKS, ENTITIES, VectorIndex

__all__ = ["ChunkOutcome", "ExtractionPipeline", "subgraph_for"]

Clock = Callable[[], datetime]
_MAX_REMEMBERED = 50_000  # entity vectors kept for reuse within one pipeline


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
        store: QuadStore,
        extractors: Sequence[Extractor],
        *,
        embedder: Embedder | None = None,
        entity_index: VectorIndex | None = None,
        chunk_index: VectorIndex | None = None,
        concurrency: int = 4,
        batch_size: int = 1024,
        batch_seconds: float = 30.0,
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
        self.batch_seconds = batch_seconds
        self._batch_started = time.monotonic()
        self._entities: dict[str, dict[str, Any]] = {}  # entity -> label, definition, chunks (an ordered set)
        self._chunks: dict[str, tuple[dict[str, str], str]] = {}
        self._clock = clock
        self._pending: dict[Iri, int] = {}
        self._ready: list[Iri] = []
        self._quads: list[Quad] = []  # new subgraphs of this batch, written before its vectors
        self._subgraphs: set[Iri] = set()  # ... and their IRIs
        self._batched = 0  # chunks extracted since the last batch was written
        self._vectors: dict[str, np.ndarray] = {}  # entity text -> vector (labels recur in many chunks)
        self._failed = False  # a write failed: nothing more is written in this run
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
        self._batch_started = time.monotonic()
        if self._failed:  # a failed run's counts are stale
            self._pending.clear()
            self._failed = False
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
            self._batched += 1
            if self._batched >= self.batch_size or time.monotonic() - self._batch_started >= self.batch_seconds:
                self._flush()
            if progress is not None:
                for o in outcomes:
                    progress(o)
            return list(outcomes)

        with rarer_collections():
            try:
                results = await asyncio.gather(*(one(c) for c in chunks))
            except BaseException:
                self._drop()  # nothing more is written: unfinished documents stay incomplete
                raise
            self._flush()
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
            evidence=ex.evidence, steps=ex.steps,
        )
        knowledge = [Quad(f.s, f.p, f.o) for f in ex.facts] + list(ex.labels)
        if sg in self._subgraphs:  # the same chunk twice in one batch: the earlier one is replaced
            self._write_quads()
        removal = subgraph_removal(self.store, [sg], keep_facts=ex.facts)
        if removal:  # a re-extraction: the support sets it reads must include this batch's facts
            self._write_quads()
            removal = subgraph_removal(self.store, [sg], keep_facts=ex.facts)
            self.store.apply(remove=removal, add=knowledge + prov)
        else:
            self._quads += knowledge
            self._quads += prov
            self._subgraphs.add(sg)
        return len(prov)

    def _write_quads(self) -> None:
        """The batch's new subgraphs: bulk-loaded, then their ``rdf:type tg:Subgraph`` in one transaction.

        The type marks a subgraph as done (:meth:`is_done`); written last, a bulk load that fails
        part-way leaves no chunk marked done, so the next load extracts them again, and replacing
        a subgraph of the same (deterministic) IRI removes whatever part of it was written.
        """
        batch, self._quads = self._quads, []
        self._subgraphs.clear()
        if not batch:
            return
        # an entity's label quad, one object (extract/entities.py), comes with every chunk naming it: write it once
        # (by identity: hashing 10^5 quads would cost more than writing the duplicates)
        quads = list({id(q): q for q in batch}.values())
        kind, subgraph = RDF.type.value, TG.Subgraph.value
        is_mark = [q.p.value == kind and isinstance(q.o, Iri) and q.o.value == subgraph for q in quads]
        self.store.bulk_add([q for q, mark in zip(quads, is_mark) if not mark])
        self.store.add([q for q, mark in zip(quads, is_mark) if mark])

    def _embed_entities(self, chunk: ChunkInput, entities: Sequence[EntityInfo]) -> None:
        if self.embedder is None or self.entity_index is None or not entities:
            return
        new = [e for e in entities if e.iri.value not in self._entities]
        known = self.entity_index.get([e.iri.value for e in new], fields=("definition",)) if new else {}
        for e in entities:
            key = e.iri.value
            entry = self._entities.get(key)
            if entry is None:  # first mention in this batch: the stored definition, this batch's chunks
                entry = self._entities[key] = {"definition": known.get(key, {}).get("definition"), "chunks": {},
                                               "stored": key in known}
            entry["label"] = e.label
            entry["definition"] = e.definition or entry["definition"]
            entry["chunks"][chunk.iri.value] = None  # an ordered set: a mention costs O(1), not O(chunks)

    def _embed_chunk(self, chunk: ChunkInput) -> None:
        if self.embedder is None or self.chunk_index is None:
            return
        self._chunks[chunk.iri.value] = ({"chunk": chunk.iri.value, "document": chunk.document.value}, chunk.text)

    def _flush(self) -> None:
        """Write the batch: its vectors (one upsert per index), then its new quads; then commit finished documents.

        The quads are a chunk's commit point (``only_missing`` redoes a chunk without them): a batch cut between the
        two (a crash, a database restart) is redone whole, its vectors' upserts changing nothing; quads first would
        leave their chunks done without vectors. A quad write that fails takes back the vectors the batch added."""
        self._batched = 0
        self._batch_started = time.monotonic()
        if self._failed:
            return
        ready, self._ready = self._ready, []
        try:
            written = self._upsert_vectors() if self.embedder is not None else {}
            try:
                self._write_quads()
            except BaseException:
                self._remove_vectors(written)
                raise
        except BaseException:
            self._drop()
            raise
        if ready and self._on_commit is not None:
            self._on_commit(ready)

    def _drop(self) -> None:
        """Forget what is buffered and write nothing more in this run (after a failure)."""
        self._failed = True
        self._quads.clear()
        self._subgraphs.clear()
        self._entities.clear()
        self._chunks.clear()
        self._ready.clear()

    def _embed_texts(self, texts: list[str]) -> np.ndarray:
        """Entity vectors; a text seen before (a recurring label) is not embedded again."""
        assert self.embedder is not None
        known = self._vectors
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            if len(known) + len(missing) > _MAX_REMEMBERED:
                known.clear()
            known.update(zip(missing, self.embedder.embed(missing)))
        return np.stack([known[t] for t in texts]) if texts else np.empty((0, self.embedder.dimension))

    def _upsert_vectors(self) -> dict[str, list[str]]:
        """Write the batch's vectors; the ids each index did not hold before (what a failed quad write takes back)."""
        assert self.embedder is not None
        new: dict[str, list[str]] = {}
        if self._entities and self.entity_index is not None:
            ids = list(self._entities)
            payloads = [{"entity": i, "label": e["label"], "definition": e["definition"], "chunks": list(e["chunks"])}
                        for i, e in ((i, self._entities[i]) for i in ids)]
            texts = [entity_text(p["label"], p["definition"]) for p in payloads]
            # the stored chunk list is extended by this batch's chunks: a batch costs what it adds, not the list
            self.entity_index.upsert(ids, self._embed_texts(texts), payloads, extend=("chunks",))
            new[ENTITIES] = [i for i in ids if not self._entities[i]["stored"]]
        if self._chunks and self.chunk_index is not None:
            ids = list(self._chunks)
            stored = self.chunk_index.get(ids, fields=("document",))
            self.chunk_index.upsert(ids, self.embedder.embed([self._chunks[i][1] for i in ids]),
                                    [self._chunks[i][0] for i in ids])
            new[CHUNKS] = [i for i in ids if i not in stored]
        self._entities.clear()
        self._chunks.clear()
        return new

    def _remove_vectors(self, written: dict[str, list[str]]) -> None:
        """Take back the vectors a batch added before its quads failed, so the failed batch commits nothing.

        Records the indexes held before stay: an entity known from an earlier batch keeps its vector (its chunk list
        may name this batch's chunks until they are extracted again; the redo adds nothing twice). When the index
        cannot be written either (the database is away), the quad write's error is the one raised: the batch's
        chunks are not marked done, so the next run redoes them and ``check --repair`` drops what is left."""
        for name, ids in written.items():
            index = self.entity_index if name == ENTITIES else self.chunk_index
            if ids and index is not None:
                with contextlib.suppress(Exception):
                    index.delete(ids)
