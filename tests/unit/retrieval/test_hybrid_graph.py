"""GraphRAG's hybrid entry points: paths between the question's entities, and what the LLM is shown."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest

from provgraph.config import Settings
from provgraph.events import Explain
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.rdf.vocab import TG
from provgraph.retrieval.edge_select import label_edges
from provgraph.retrieval.graph_paths import PATH_BOOST, SEED_BOOST, boost_scores, path_edges
from provgraph.retrieval.graph_walk import chunk_facts
from provgraph.retrieval.labels import LabelCache
from provgraph.runtime import Runtime
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema

E = "urn:e:"
P = Iri(E + "p")


def t(s: str, o: str) -> TripleTerm:
    return TripleTerm(Iri(E + s), P, Iri(E + o))


def test_paths_between_two_named_entities_are_found_in_either_direction() -> None:
    edges = [t("curie", "polonium"), t("radium", "polonium"), t("radium", "paris"), t("curie", "warsaw"),
             t("nobel", "paris")]
    on_path = path_edges(edges, [Iri(E + "curie"), Iri(E + "paris")])
    assert on_path == {t("curie", "polonium"), t("radium", "polonium"), t("radium", "paris")}
    assert path_edges(edges, [Iri(E + "curie")]) == set()  # one entity: no path


def test_boosts_add_path_named_entity_and_chunk_rank() -> None:
    edges = [t("curie", "polonium"), t("polonium", "paris"), t("x", "y")]
    scores = boost_scores(edges, np.zeros(3, dtype=np.float32), linked=[Iri(E + "curie"), Iri(E + "paris")],
                          chunk_rank={"c1": 1}, edge_chunks={edges[2]: ["c1"]})
    assert scores[0] == pytest.approx(PATH_BOOST + SEED_BOOST) and scores[1] == pytest.approx(PATH_BOOST + SEED_BOOST)
    assert scores[2] == pytest.approx(0.3)  # found in the best-ranked chunk


@pytest.fixture
def rt_llm(corpus_settings: Settings) -> Iterator[tuple[Runtime, ScriptedChatModel]]:
    llm = ScriptedChatModel(by_schema({"complete": "", "stream": "Nothing [1]."}))
    with Runtime(corpus_settings, create=False, llm=llm) as runtime:
        yield runtime, llm


def test_with_an_llm_the_hybrid_entry_points_feed_edge_selection(rt_llm) -> None:
    rt, llm = rt_llm
    question = "Who discovered polonium?"

    async def run() -> list:
        return [ev async for ev in rt.graph_rag().ask(question, session_id="h1")]

    events = asyncio.run(run())
    # the entity the question names is the first seed (lexical, exact label)
    polonium = rt.retriever().entities(question, None, 1)[0]
    assert polonium.exact and "polonium" in polonium.id
    exploration = next(e for e in events if isinstance(e, Explain) and e.step == "exploration")
    assert (TG.entity, Iri(polonium.id)) in {(q.p, q.o) for q in exploration.triples}
    # the facts of the best hybrid-ranked passage are among the edges the LLM chooses from
    top = rt.retriever().chunks(question, rt.embedder.embed([question])[0], 1)[0]
    facts = label_edges(chunk_facts(rt.store, [Iri(top.id)]), LabelCache(rt.store))
    prompt = next(c for c in llm.calls if c.kind == "complete").messages[-1].content
    assert facts and any(f.line in prompt for f in facts)
