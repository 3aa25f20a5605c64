"""Edge sources read with their sentence evidence in one pass, as the explain path reads them in two."""

from __future__ import annotations

from provgraph.config import Settings
from provgraph.rdf.terms import TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, TG
from provgraph.retrieval.evidence import with_evidence
from provgraph.retrieval.read_cache import Bounded
from provgraph.retrieval.sources import edge_sources
from provgraph.runtime import Runtime


def test_sources_with_evidence_match_the_two_step_reading_and_slice_to_sentences(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False) as rt:
        facts = [q.o for q in rt.store.match(p=TG.contains, g=GRAPH_SOURCE) if isinstance(q.o, TripleTerm)]
        edges = list(dict.fromkeys(facts))[:60]
        found = edge_sources(rt.store, edges, evidence=True)
        assert found == with_evidence(rt.store, edge_sources(rt.store, edges))
        spans = [s for sources in found.values() for s in sources if s.evidence]
        assert len(spans) > 10
        texts = rt.librarian.texts([s.chunk for s in spans])
        for s in spans:
            offset, length = s.evidence  # type: ignore[misc]
            sentence = texts[s.chunk][offset:offset + length]
            assert sentence.strip() and len(sentence) < len(texts[s.chunk])


def test_cached_sources_are_those_read_in_one_query_whatever_edges_came_with_them(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False) as rt:
        facts = [q.o for q in rt.store.match(p=TG.contains, g=GRAPH_SOURCE) if isinstance(q.o, TripleTerm)]
        edges = list(dict.fromkeys(facts))[:40]
        cache = Bounded(100)
        for evidence in (True, False):
            whole = edge_sources(rt.store, edges, evidence=evidence)
            assert edge_sources(rt.store, edges[:25], evidence=evidence, cache=cache) == \
                {e: whole[e] for e in edges[:25]}
            mixed = edges[30:] + edges[10:30]  # half of them kept from the first call, half read now
            assert edge_sources(rt.store, mixed, evidence=evidence, cache=cache) == {e: whole[e] for e in mixed}
        assert any(s.evidence for e in edges for s in cache[(e, True)])
        assert not any(s.evidence for e in edges for s in cache[(e, False)])
        cache[(edges[0], True)] = []  # a kept edge is not read again
        assert edge_sources(rt.store, edges[:1], evidence=True, cache=cache) == {edges[0]: []}
