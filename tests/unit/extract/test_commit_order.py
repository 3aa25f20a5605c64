"""The extraction pipeline hands a document to ``on_commit`` only after all its chunks' vectors are written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from provgraph.errors import StoreError
from provgraph.extract.base import ChunkInput
from provgraph.extract.cooccurrence import CooccurrenceExtractor
from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.models.embedders import Model2VecEmbedder
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import GRAPH_SOURCE, RDF, TG
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.usearch_index import open_index

TEXTS = {"a": ["Marie Curie discovered polonium.", "Pierre Curie worked with Marie Curie.", "Radium glows."],
         "b": ["Ernest Rutherford named alpha rays."]}


def test_on_commit_follows_the_vectors_of_every_chunk_of_the_document(tmp_path: Path) -> None:
    embedder = Model2VecEmbedder()
    chunks_index = open_index(tmp_path, "chunks", model=embedder.name, dimension=embedder.dimension)
    entities = open_index(tmp_path, "entities", model=embedder.name, dimension=embedder.dimension)
    log: list[tuple[str, Any]] = []
    upsert = chunks_index.upsert

    def logged(ids: Any, vectors: Any, payloads: Any) -> None:
        log.append(("vectors", sorted(ids)))
        upsert(ids, vectors, payloads)

    chunks_index.upsert = logged  # type: ignore[method-assign]
    chunks = [ChunkInput(Iri(f"urn:chunk:{d}{i}"), text, Iri(f"urn:doc:{d}"))
              for d, texts in TEXTS.items() for i, text in enumerate(texts)]
    pipe = ExtractionPipeline(OxigraphStore(), [CooccurrenceExtractor(entity_base="urn:e:")], embedder=embedder,
                              entity_index=entities, chunk_index=chunks_index, batch_size=2)
    asyncio.run(pipe.run(chunks, on_commit=lambda docs: log.append(("commit", sorted(d.value for d in docs)))))
    committed = [entry for kind, entry in log if kind == "commit"]
    assert sorted(d for docs in committed for d in docs) == ["urn:doc:a", "urn:doc:b"]
    for doc in ("a", "b"):
        at = next(i for i, (kind, entry) in enumerate(log) if kind == "commit" and f"urn:doc:{doc}" in entry)
        written = {c for kind, ids in log[:at] if kind == "vectors" for c in ids}
        assert {c.iri.value for c in chunks if c.document.value == f"urn:doc:{doc}"} <= written
    chunks_index.close()
    entities.close()


def _pipeline(tmp_path: Path, store: OxigraphStore, **kw: Any) -> tuple[ExtractionPipeline, list[ChunkInput]]:
    embedder = Model2VecEmbedder()
    chunks_index = open_index(tmp_path, "chunks", model=embedder.name, dimension=embedder.dimension)
    entities = open_index(tmp_path, "entities", model=embedder.name, dimension=embedder.dimension)
    chunks = [ChunkInput(Iri(f"urn:chunk:{d}{i}"), text, Iri(f"urn:doc:{d}"))
              for d, texts in TEXTS.items() for i, text in enumerate(texts)]
    return ExtractionPipeline(store, [CooccurrenceExtractor(entity_base="urn:e:")], embedder=embedder,
                              entity_index=entities, chunk_index=chunks_index, **kw), chunks


def test_a_batch_is_bulk_loaded_then_its_done_marks_then_committed(tmp_path: Path) -> None:
    store = OxigraphStore()
    log: list[tuple[str, Any]] = []
    add = store.add

    def logged(quads: Any, *, atomic: bool = True) -> int:
        quads = list(quads)
        log.append(("add" if atomic else "bulk", set(quads)))
        return add(quads, atomic=atomic)

    store.add = logged  # type: ignore[method-assign]
    pipe, chunks = _pipeline(tmp_path, store)
    asyncio.run(pipe.run(chunks, on_commit=lambda docs: log.append(("commit", len(docs)))))
    marks = set(store.match(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE))
    assert len(marks) == 4 and [kind for kind, _ in log] == ["bulk", "add", "commit"]
    assert log[1][1] == marks and log[0][1] == set(store.match()) - marks and log[2] == ("commit", 2)


def test_a_failed_batch_write_commits_nothing_and_marks_no_chunk_done(tmp_path: Path) -> None:
    store = OxigraphStore()
    add = store.add

    def full_disk(quads: Any, *, atomic: bool = True) -> int:
        if not atomic:
            add(list(quads)[:5], atomic=False)  # part of the batch got written
            raise StoreError("collection memory: bulk load failed: No space left on device")
        return add(quads, atomic=atomic)

    store.add = full_disk  # type: ignore[method-assign]
    pipe, chunks = _pipeline(tmp_path, store)
    committed: list[Iri] = []
    with pytest.raises(StoreError, match="No space left"):
        asyncio.run(pipe.run(chunks, on_commit=committed.extend))
    assert committed == [] and store.count(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE) == 0
    assert pipe.entity_index is not None and pipe.entity_index.count() == 0
    assert pipe.chunk_index is not None and pipe.chunk_index.count() == 0
    store.add = add  # type: ignore[method-assign]  # space freed: the next run writes everything
    asyncio.run(pipe.run(chunks, only_missing=True, on_commit=committed.extend))
    assert sorted(d.value for d in committed) == ["urn:doc:a", "urn:doc:b"]
    assert store.count(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE) == 4


def test_a_failed_batch_keeps_the_vectors_of_earlier_batches(tmp_path: Path) -> None:
    store = OxigraphStore()
    pipe, chunks = _pipeline(tmp_path, store)
    first = [c for c in chunks if c.document.value == "urn:doc:b"]
    asyncio.run(pipe.run(first))
    assert pipe.entity_index is not None and pipe.chunk_index is not None
    entities, chunk_ids = set(pipe.entity_index.ids()), set(pipe.chunk_index.ids())
    assert entities and chunk_ids == {"urn:chunk:b0"}
    add = store.add

    def full_disk(quads: Any, *, atomic: bool = True) -> int:
        if not atomic:
            raise StoreError("collection memory: bulk load failed: No space left on device")
        return add(quads, atomic=atomic)

    store.add = full_disk  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="No space left"):
        asyncio.run(pipe.run(chunks))  # b0 again (a re-extraction) and a's three chunks
    assert set(pipe.chunk_index.ids()) == chunk_ids and set(pipe.entity_index.ids()) == entities
