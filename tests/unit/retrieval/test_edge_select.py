"""Edge selection: ids over labels, the id map, dropped lines, and the no-LLM similarity choice."""

from __future__ import annotations

import asyncio
import hashlib
import json

import numpy as np

from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.retrieval.edge_select import (
    LabelledEdge,
    edge_id,
    prefilter,
    select_by_similarity,
    select_with_llm,
    selection_messages,
)
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema

P = Iri("urn:p:discovered")


def labelled(s: str, o: str, *, o_term: object = None) -> LabelledEdge:
    obj = o_term if o_term is not None else Iri(f"urn:e:{o}")
    return LabelledEdge(TripleTerm(Iri(f"urn:e:{s.replace(' ', '_')}"), P, obj), s, "discovered", o)  # type: ignore[arg-type]


def line(ident: str, reasoning: str = "relevant") -> str:
    return json.dumps({"id": ident, "reasoning": reasoning})


def test_edge_id_is_8_hex_of_sha256_over_the_labels() -> None:
    expected = hashlib.sha256("Marie Curie|discovered|polonium".encode()).hexdigest()[:8]
    assert edge_id("Marie Curie", "discovered", "polonium") == expected
    assert labelled("Marie Curie", "polonium").line == f"{expected}: Marie Curie | discovered | polonium"


def test_prompt_lists_each_id_once_then_the_question() -> None:
    a, b = labelled("Marie Curie", "polonium"), labelled("Marie Curie", "radium")
    messages = selection_messages("Who found polonium?", [a, a, b], 25)
    assert messages[1].content == f"Edges:\n{a.line}\n{b.line}\n\nQuestion: Who found polonium?"
    assert "at most 25 lines" in messages[0].content


def test_selection_restores_original_terms_and_counts_what_it_drops() -> None:
    polonium = labelled("Marie Curie", "polonium")
    year = labelled("polonium", "1898", o_term=Literal("1898"))
    reply = "\n".join([
        "Here you go:",
        line(year.id, "gives the year"),
        '{"id": ',
        line("deadbeef"),
        json.dumps({"reasoning": "no id"}),
        line(polonium.id.upper(), "names the discoverer"),
        line(year.id, "again"),
    ])
    llm = ScriptedChatModel(by_schema({"complete": reply}))
    sel = asyncio.run(select_with_llm(llm, "q", [polonium, year], np.array([0.5, 0.7]), 25))
    assert [(s.edge.edge, s.reasoning, s.score) for s in sel.chosen] == [
        (year.edge, "gives the year", 0.7), (polonium.edge, "names the discoverer", 0.5)]
    assert isinstance(sel.chosen[0].edge.edge.o, Literal)
    assert (sel.malformed, sel.unknown) == (3, 1)
    assert sel.warnings == ["3 malformed selection line(s) dropped", "1 unknown edge id(s) from the model dropped"]
    assert sel.usage is not None and len(llm.calls) == 1


def test_colliding_labels_keep_all_their_terms_and_the_cap_counts_ids() -> None:
    one = LabelledEdge(TripleTerm(Iri("urn:e:curie1"), P, Iri("urn:e:po")), "Curie", "discovered", "polonium")
    two = LabelledEdge(TripleTerm(Iri("urn:e:curie2"), P, Iri("urn:e:po")), "Curie", "discovered", "polonium")
    other = labelled("Curie", "radium")
    assert one.id == two.id
    llm = ScriptedChatModel(by_schema({"complete": "\n".join([line(one.id), line(other.id)])}))
    sel = asyncio.run(select_with_llm(llm, "q", [one, two, other], np.array([0.1, 0.2, 0.3]), 1))
    assert [s.edge.edge for s in sel.chosen] == [one.edge, two.edge]
    assert sel.malformed == 0 and sel.unknown == 0


def test_garbage_and_empty_replies_select_nothing_without_failing() -> None:
    edge = labelled("Marie Curie", "polonium")
    for reply, dropped in (("I cannot help with that.", 1), ("", 0), ("   \n", 0)):
        llm = ScriptedChatModel(by_schema({"complete": reply}))
        sel = asyncio.run(select_with_llm(llm, "q", [edge], np.array([0.5]), 25))
        assert sel.chosen == [] and sel.malformed == dropped


def test_no_edges_means_no_llm_call() -> None:
    llm = ScriptedChatModel(by_schema({}))
    assert asyncio.run(select_with_llm(llm, "q", [], np.zeros(0), 25)).chosen == []
    assert llm.calls == []


def test_similarity_selection_keeps_the_best_above_the_threshold_and_says_why() -> None:
    edges = [labelled("Marie Curie", o) for o in ("polonium", "radium", "thorium", "uranium")]
    sel = select_by_similarity(edges, np.array([0.62, 0.1, 0.9, 0.5]), 2, 0.3)
    assert [s.edge.o for s in sel.chosen] == ["thorium", "polonium"]
    assert sel.chosen[1].score == 0.62
    assert sel.chosen[1].reasoning == (
        "Selected by embedding similarity 0.62 between the question and 'Marie Curie discovered polonium' "
        "(no LLM configured)"
    )
    assert select_by_similarity(edges, np.array([0.2, 0.1, 0.0, 0.1]), 2, 0.3).chosen == []


def test_a_boosted_score_says_what_it_is_made_of() -> None:
    edges = [labelled("Marie Curie", o) for o in ("polonium", "radium")]
    plain = {edges[0].edge: 0.57, edges[1].edge: 0.4}
    sel = select_by_similarity(edges, np.array([1.22, 0.4]), 2, 0.3, similarity=plain)
    assert [s.reasoning for s in sel.chosen] == [
        "Selected by score 1.22: embedding similarity 0.57 between the question and 'Marie Curie discovered "
        "polonium' plus 0.65 from hybrid retrieval (the question's named entities / paths between them / "
        "top-ranked passages) (no LLM configured)",
        "Selected by embedding similarity 0.40 between the question and 'Marie Curie discovered radium' "
        "(no LLM configured)",
    ]


def test_prefilter_keeps_the_most_similar_in_discovery_order() -> None:
    edges = [labelled("a", str(i)) for i in range(5)]
    kept, scores = prefilter(edges, np.array([0.1, 0.9, 0.3, 0.8, 0.2]), 2)
    assert [e.o for e in kept] == ["1", "3"] and scores.tolist() == [0.9, 0.8]
    assert prefilter(edges, np.zeros(5), 10)[0] == edges
