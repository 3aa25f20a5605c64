"""What GraphRAG keeps between questions: chunk facts (until the sources change) and edge-text vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from provgraph.config import Settings
from provgraph.events import Event, Final
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE, RDFS
from provgraph.retrieval.edge_select import LabelledEdge, similarities
from provgraph.retrieval.graph_rag import GraphRag
from provgraph.retrieval.graph_rank import GraphRanker
from provgraph.retrieval.passage_graph import PassageGraph
from provgraph.retrieval.graph_walk import facts_by_chunk
from provgraph.retrieval.read_cache import Bounded, ReadCache
from provgraph.runtime import Runtime
from provgraph.store.oxigraph import OxigraphStore
from tests.unit.retrieval.graph_world import World, world  # noqa: F401

X = Iri("urn:x:s")


def test_cached_chunks_are_answered_from_the_cache_and_read_ones_are_kept(world: World) -> None:
    curie, radium = world.chunks["curie"], world.chunks["radium"]
    plain = facts_by_chunk(world.store, [curie, radium])
    assert sorted(plain[curie], key=str) == sorted((world.facts[k] for k in ("discovered", "born", "named", "year")),
                                                   key=str)
    cache = Bounded(10)
    assert facts_by_chunk(world.store, [curie, radium], cache=cache) == plain
    assert cache == plain
    marker = TripleTerm(X, X, X)
    cache[radium] = [marker]  # a cached chunk is not read again
    again = facts_by_chunk(world.store, [radium, curie], cache=cache)
    assert again == {radium: [marker], curie: plain[curie]}
    again[curie].append(marker)  # what the caller gets is its own list
    assert cache[curie] == plain[curie]


def test_a_full_cache_is_emptied_before_it_grows_past_its_bound(world: World) -> None:
    curie, radium = world.chunks["curie"], world.chunks["radium"]
    cache = Bounded(1)
    facts_by_chunk(world.store, [curie], cache=cache)
    assert list(cache) == [curie]
    facts_by_chunk(world.store, [radium], cache=cache)
    assert list(cache) == [radium]


def test_a_write_to_the_sources_empties_the_facts_and_sources_and_a_trace_write_keeps_them() -> None:
    store = OxigraphStore()
    reads = ReadCache(store)
    reads.facts()[X] = []
    reads.sources()[X] = []
    store.add([Quad(X, RDFS.label, Literal("a trace"), GRAPH_RETRIEVAL)])
    assert X in reads.facts() and X in reads.sources()
    store.add([Quad(X, RDFS.label, Literal("provenance"), GRAPH_SOURCE)])
    assert X not in reads.facts() and X not in reads.sources()
    reads.facts()[X] = []
    store.apply(remove=[Quad(X, RDFS.label, Literal("provenance"), GRAPH_SOURCE)])
    assert X not in reads.facts()
    reads.facts()[X] = []
    store.update("DELETE WHERE { GRAPH <urn:graph:retrieval> { ?s ?p ?o } }")  # unknown extent: emptied too
    assert X not in reads.facts()


class CountingEmbedder:
    """The real embedder, remembering every text it was asked to embed."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.name = "counting"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.embed(texts)  # type: ignore[attr-defined]


def test_edge_vectors_are_embedded_once_and_score_exactly_as_without_the_cache(world: World) -> None:
    a, b = (LabelledEdge(TripleTerm(X, X, X), *labels) for labels in
            (("Marie Curie", "discovered", "polonium"), ("radium", "glows", "faintly")))
    edges = [a, b, a]
    question = world.embedder.embed(["Who discovered polonium?"])[0]
    counting = CountingEmbedder(world.embedder)
    cache = Bounded(10)
    first = similarities(counting, question, edges, cache=cache)  # type: ignore[arg-type]
    assert counting.texts == [a.text, b.text]
    assert np.array_equal(first, similarities(world.embedder, question, edges))
    again = similarities(counting, question, [b, a], cache=cache)  # type: ignore[arg-type]
    assert counting.texts == [a.text, b.text] and np.array_equal(again, first[[1, 0]])


def _sources(rag: GraphRag, question: str, sid: str) -> Final:
    async def run() -> list[Event]:
        return [ev async for ev in rag.ask(question, session_id=sid)]

    done = asyncio.run(run())[-1]
    assert isinstance(done, Final)
    return done


def test_a_removed_document_leaves_no_stale_fact_or_source_behind(corpus_settings: Settings) -> None:
    question = "Who discovered polonium?"
    with Runtime(corpus_settings, create=False) as rt:
        reads = rt._graph_reads
        before = _sources(rt.graph_rag(), question, "r1")  # one engine per question, as the API makes them
        assert before.sources
        kept = dict(reads.facts())
        assert kept and reads.sources()  # the ranked chunks' facts and the sources, for the next engine
        assert _sources(rt.graph_rag(), question, "r2").sources == before.sources
        assert reads.facts() == kept  # answered from the cache (a question's trace changes nothing)
        gone = before.sources[0].document
        rt.remove_document(Iri(gone))
        assert not reads.facts() and not reads.sources()
        after = _sources(rt.graph_rag(), question, "r3")
        assert gone not in {s.document for s in after.sources}
        fresh = GraphRag(rt.store, rt.librarian, rt.embedder, rt.entity_index, None, retriever=rt.retriever(),
                         ranker=GraphRanker(rt.retriever(), PassageGraph(rt.store, rt.librarian)))
        assert after.sources == _sources(fresh, question, "r4").sources  # what an engine with nothing kept finds
        kept_graph, fresh_graph = rt.retriever().graph, fresh.ranker.graph  # type: ignore[union-attr]
        assert (kept_graph.chunk_count, kept_graph.entity_count) == (fresh_graph.chunk_count, fresh_graph.entity_count)
        assert before.sources[0].chunk not in kept_graph
