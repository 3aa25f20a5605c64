"""The extraction pipeline hands a document to ``on_commit`` only after all its chunks' vectors are written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from provgraph.extract.base import ChunkInput
from provgraph.extract.cooccurrence import CooccurrenceExtractor
from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.models.embedders import Model2VecEmbedder
from provgraph.rdf.terms import Iri
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
