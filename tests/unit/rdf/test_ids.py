from __future__ import annotations

import re

import pytest

from provgraph.errors import InputError
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def test_document_ids() -> None:
    assert ids.document_iri("report") == Iri("urn:doc:report")
    assert ids.document_iri("https://example.org/d/1") == Iri("https://example.org/d/1")
    assert ids.document_iri("a b/c") == Iri("urn:doc:a%20b%2Fc")
    with pytest.raises(InputError):
        ids.document_iri("")


def test_deterministic_ids_follow_the_spec_patterns() -> None:
    doc = ids.document_iri("d")
    page = ids.page_iri(doc, 2)
    assert re.fullmatch(f"urn:page:{UUID}", page.value)
    assert page == ids.page_iri(doc, 2) != ids.page_iri(doc, 3)
    assert re.fullmatch(f"urn:section:{UUID}", ids.section_iri(doc, 0).value)
    chunk = ids.chunk_iri(page, 1, 0, 100)
    assert re.fullmatch(f"urn:chunk:{UUID}", chunk.value)
    assert chunk == ids.chunk_iri(page, 1, 0, 100) != ids.chunk_iri(page, 1, 0, 101)
    sg = ids.subgraph_iri(chunk, "relationships", "0.1.0", "gpt")
    assert re.fullmatch(f"https://trustgraph.ai/subgraph/{UUID}", sg.value)
    assert sg != ids.subgraph_iri(chunk, "relationships", "0.1.0", "other")
    assert sg != ids.subgraph_iri(chunk, "definitions", "0.1.0", "gpt")
    assert re.fullmatch(f"https://trustgraph.ai/activity/{UUID}", ids.activity_iri(sg.value).value)
    assert ids.agent_iri("kg-extract") == Iri("https://trustgraph.ai/agent/kg-extract")


def test_query_ids() -> None:
    sid = "0f1e"
    assert ids.question_iri(sid).value == "urn:trustgraph:question:0f1e"
    assert ids.grounding_iri(sid).value == "urn:trustgraph:prov:grounding:0f1e"
    assert ids.exploration_iri(sid).value == "urn:trustgraph:prov:exploration:0f1e"
    assert ids.focus_iri(sid).value == "urn:trustgraph:prov:focus:0f1e"
    assert ids.synthesis_iri(sid).value == "urn:trustgraph:prov:synthesis:0f1e"
    assert ids.edge_selection_iri(sid, 0).value == "urn:trustgraph:prov:edge:0f1e:0"
    assert ids.graph_rag_answer_iri(sid).value == "urn:trustgraph:synthesis:0f1e"
    assert ids.docrag_question_iri(sid).value == "urn:trustgraph:docrag:0f1e"
    assert ids.docrag_exploration_iri(sid).value == "urn:trustgraph:docrag:0f1e/exploration"
    assert ids.docrag_synthesis_iri(sid).value == "urn:trustgraph:docrag:0f1e/synthesis"
    assert ids.docrag_answer_iri(sid).value == "urn:trustgraph:docrag:0f1e/answer"
    assert ids.agent_question_iri(sid).value == "urn:trustgraph:agent:0f1e"
    assert ids.agent_analysis_iri(sid, 1).value == "urn:trustgraph:agent:0f1e/i1"
    assert ids.agent_conclusion_iri(sid).value == "urn:trustgraph:agent:0f1e/final"
    assert ids.agent_answer_iri(sid).value == "urn:trustgraph:agent:0f1e/answer"
    for make in (ids.question_iri, ids.docrag_question_iri, ids.agent_question_iri):
        assert ids.session_id_of(make(sid)) == sid
    assert ids.new_session_id() != ids.new_session_id()


def test_vocabulary_is_closed() -> None:
    from provgraph.rdf.vocab import TG

    assert TG.contains.value == "https://trustgraph.ai/ns/contains"
    with pytest.raises(AttributeError, match="tg: has no term 'contain'"):
        TG.contain  # noqa: B018


def test_a_term_named_like_a_namespace_method_leaves_the_method_alone() -> None:
    from provgraph.rdf.vocab import Namespace

    ns = Namespace("x", "urn:x:", ["terms", "base", "item", "_terms"])
    assert ns.item.value == "urn:x:item" and ns["terms"].value == "urn:x:terms" and ns.base == "urn:x:"
    assert set(ns.terms()) == {"terms", "base", "item", "_terms"}
