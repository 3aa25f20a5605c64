"""A batch's quads go to the store once each: an entity's label comes with every chunk naming it."""

from __future__ import annotations

import asyncio
from typing import Any

from provgraph.extract.base import ChunkInput
from provgraph.extract.cooccurrence import CooccurrenceExtractor
from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import RDFS
from provgraph.store.oxigraph import OxigraphStore


def test_a_label_named_by_many_chunks_of_a_batch_is_bulk_loaded_once() -> None:
    store = OxigraphStore()
    loaded: list[Quad] = []
    bulk_add = store.bulk_add

    def logged(quads: Any) -> int:
        loaded.extend(quads)
        return bulk_add(loaded[-len(quads):])

    store.bulk_add = logged  # type: ignore[method-assign]
    texts = ["Marie Curie met Pierre Curie.", "Marie Curie discovered polonium.", "Marie Curie taught in Paris."]
    chunks = [ChunkInput(Iri(f"urn:chunk:a{i}"), text, Iri("urn:doc:a")) for i, text in enumerate(texts)]
    pipe = ExtractionPipeline(store, [CooccurrenceExtractor(entity_base="urn:e:")])
    outcomes = asyncio.run(pipe.run(chunks))
    assert not any(o.failed for o in outcomes)
    marie = Quad(Iri("urn:e:marie%20curie"), RDFS.label, Literal("Marie Curie"))
    assert loaded.count(marie) == 1
    assert list(store.match(marie.s, RDFS.label, g=None)) == [marie]
