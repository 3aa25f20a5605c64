"""Graph-ranked passages: the walk, the bridge hop, the ranking graph following loads and removals, the
ranking step of the trace, the relevance floor and the chain answer."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from provgraph import Provgraph
from provgraph.explain.render_json import trace_json
from provgraph.explain.render_text import render_trace
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import RDF, TG, XSD
from provgraph.retrieval.graph_rank import GraphRanker
from provgraph.retrieval.passage_graph import PassageGraph
from provgraph.retrieval.ranking_trace import TRACED_PASSAGES, TRACED_SEEDS
from provgraph.session import Answer

BRIDGE = Path(__file__).resolve().parents[2] / "data" / "bridge"
BRIDGE_FILES = sorted(BRIDGE.glob("*.txt"))
QUESTION = "Which city is the father of Ada Lovelace from?"
E = "urn:e:"
C = "urn:c:"


class _Facts:
    """A store double answering only what the passage graph reads: the facts of chunks, the generation."""

    def __init__(self, facts: dict[str, list[tuple[str, str]]]) -> None:
        self.facts = facts
        self.knowledge_generation = 1
        self.asked: list[list[str]] = []

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        self.asked.append([c.value for c in chunks])
        return {c: [TripleTerm(Iri(E + s), Iri(E + "p"), Iri(E + o)) for s, o in self.facts[c.value]]
                for c in chunks if self.facts.get(c.value)}


class _Records:
    """A librarian double listing chunk records."""

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks
        self.content_generation = 1

    def list(self, kind: str) -> list:
        return [type("R", (), {"id": c})() for c in self.chunks]


def test_the_walk_ranks_chunks_by_their_distance_from_the_seeds() -> None:
    store = _Facts({C + "1": [("a", "b")], C + "2": [("b", "c")], C + "3": [("c", "d")], C + "4": [("x", "y")]})
    graph = PassageGraph(store, _Records([C + "1", C + "2", C + "3", C + "4"]))  # type: ignore[arg-type]
    graph.sync()
    ranked = graph.rank({E + "a": 1.0}, limit=10)
    assert [h.id for h in ranked] == [C + "1", C + "2", C + "3"]  # c4 is not connected: no mass
    assert ranked[0].score > ranked[1].score > ranked[2].score
    assert graph.specificity(E + "b") == 0.5 and graph.entities_of(C + "2") == [E + "b", E + "c"]


def test_loading_and_removing_chunks_reads_only_the_new_ones_and_drops_the_gone_ones() -> None:
    store = _Facts({C + "1": [("a", "b")], C + "2": [("b", "c")], C + "3": [("c", "d")]})
    records = _Records([C + "1", C + "2"])
    graph = PassageGraph(store, records)  # type: ignore[arg-type]
    graph.sync()
    records.chunks, records.content_generation = [C + "1", C + "2", C + "3"], 2
    graph.sync()
    assert store.asked == [[C + "1", C + "2"], [C + "3"]]  # no full rebuild: only the new chunk is read
    records.chunks, records.content_generation = [C + "1", C + "3"], 3
    graph.sync()
    assert store.asked[-1] == [C + "3"] and len(store.asked) == 2
    assert C + "2" not in graph and E + "b" in graph and graph.chunks_of(E + "b") == {C + "1"}
    assert [h.id for h in graph.rank({E + "c": 1.0}, limit=10)] == [C + "3"]  # c2 no longer carries c to b
    records.chunks, records.content_generation = [C + "1"], 4
    graph.sync()
    assert E + "d" not in graph and E + "c" not in graph  # mentioned by removed chunks only


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provgraph]:
    with Provgraph(collection="bridge", home=tmp_path_factory.mktemp("bridge"), llm="none") as pg:
        pg.load([BRIDGE])
        yield pg


def _chunk_of(pg: Provgraph, title: str) -> str:
    for record in pg.runtime.librarian.list("chunk"):
        if pg.runtime.librarian.text(record.id).startswith(title):
            return record.id
    raise AssertionError(title)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


def test_a_bridge_question_finds_a_passage_sharing_no_word_with_it_through_the_bridge_entity(bridge) -> None:
    byron, ada = _chunk_of(bridge, "Lord Byron"), _chunk_of(bridge, "Ada Lovelace")
    assert not _words(bridge.runtime.librarian.text(byron)) & _words(QUESTION)
    vector = bridge.runtime.embedder.embed([QUESTION])[0]
    ranker = GraphRanker(bridge.runtime.retriever())
    assert byron not in [p.chunk for p in ranker.rank(QUESTION, vector, 5, bridge=False).passages]
    ranking = ranker.rank(QUESTION, vector, 5)
    found = next(p for p in ranking.passages if p.chunk == byron)
    assert (found.hop, found.bridge, found.via) == (2, "urn:provgraph:entity:lord%20byron", ada)
    assert ranking.passages[0].chunk == ada and ranking.chain()[1].chunk == byron


def _ranking(answer: Answer) -> dict[str, dict[Iri, list]]:
    """Each ranked passage and seed node of the trace's ranking step, with its properties."""
    step = next(s for s in answer.steps if s.step == "ranking")
    nodes: dict[str, dict[Iri, list]] = {}
    for q in step.triples:
        nodes.setdefault(str(q.s), {}).setdefault(q.p, []).append(q.o)
    return nodes


def test_the_trace_of_every_ranked_passage_carries_its_scores_and_path(bridge) -> None:
    answer = bridge.graph_rag(QUESTION)
    nodes = _ranking(answer)
    passages = [n for n in nodes.values() if TG.RankedPassage in n.get(RDF.type, [])]
    # the five best of the ranking's ten (every chunk of this small collection), each hop's five heaviest seeds
    assert sorted(p[TG.rank][0].value for p in passages) == [str(i) for i in range(1, TRACED_PASSAGES + 1)]
    assert len({p[TG.chunk][0] for p in passages}) == TRACED_PASSAGES < len(BRIDGE_FILES)
    by_hop: dict[str, list[float]] = {}
    for n in nodes.values():
        if TG.weight in n:
            by_hop.setdefault(n[TG.hop][0].value, []).append(float(n[TG.weight][0].value))
    assert sorted(by_hop) == ["1", "2"] and all(len(w) <= TRACED_SEEDS for w in by_hop.values())
    retrieved = {r.chunk: r for r in bridge.retrieve(QUESTION, k=len(BRIDGE_FILES)).passages}
    for p in passages:
        assert {TG.chunk, TG.rank, TG.score, TG.hop} <= set(p)
        assert {TG.graphScore, TG.lexicalRank, TG.denseRank} & set(p)  # some ranking placed it
        r = retrieved[p[TG.chunk][0].value]  # the scores are the ranking's, each one recorded
        for prop, value in ((TG.graphScore, r.graph_score), (TG.graphRank, r.graph_rank),
                            (TG.lexicalRank, r.lexical_rank), (TG.denseRank, r.dense_rank)):
            assert [float(v.value) for v in p.get(prop, [])] == ([] if value is None else [float(value)])
    bridged = [p for p in passages if p[TG.hop] == [Literal.integer(2)]]
    assert bridged and all(p[TG.bridgeEntity] and p[TG.bridgedFrom] for p in bridged)
    seeds = [n for n in nodes.values() if TG.weight in n]
    assert {n[TG.linkedBy][0].value for n in seeds} >= {"exact", "bridge"}
    byron = _chunk_of(bridge, "Lord Byron")
    # the chain answer: one cited sentence per hop, the bridge passage's after the first hop's
    sentences = answer.text.split("]. ")
    assert "Ada Lovelace" in sentences[0] and "Lord Byron" in sentences[0] and "Aberdeen" in sentences[-1]
    assert "Aberdeen" not in " ".join(sentences[:-1])  # the bridge passage's sentence comes last, once
    assert answer.text != bridge.document_rag(QUESTION).text
    assert byron in [s.chunk for s in answer.sources]


def test_an_off_topic_question_gets_nothing_relevant_found_with_the_closest_in_the_trace(bridge) -> None:
    answer = bridge.graph_rag("What is the best recipe for banana bread?")
    assert answer.text.startswith("Nothing relevant found")
    ranking = next(n for n in _ranking(answer).values() if TG.relevant in n)
    assert ranking[TG.relevant] == [Literal("false", datatype=XSD.boolean)]
    assert ranking[TG.closest] and answer.sources == ()


def test_traces_show_gives_each_ranked_passage_its_scores_and_bridge_in_text_and_json(bridge) -> None:
    answer = bridge.graph_rag(QUESTION)
    trace = bridge.trace(answer.session_id)
    shown = trace_json(trace)["ranking"]
    byron = _chunk_of(bridge, "Lord Byron")
    bridged = next(p for p in shown["passages"] if p["chunk"] == byron)
    assert (bridged["hop"], bridged["bridge_label"], bridged["via"]) == (2, "Lord Byron", _chunk_of(bridge, "Ada Lovelace"))
    assert bridged["source"]["document"].endswith("byron.txt") and bridged["score"] is not None
    assert shown["relevant"] and any(s["label"] == "Ada Lovelace" and s["linked_by"] == "exact" for s in shown["seeds"])
    text = render_trace(trace)
    assert "[ranking]" in text and "byron.txt" in text and "hop 2 via Lord Byron" in text
