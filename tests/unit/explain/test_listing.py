from __future__ import annotations

from datetime import timedelta

import pytest

from provgraph.errors import InputError
from provgraph.explain import TraceSummary, list_traces
from provgraph.explain.render_text import render_list
from provgraph.provenance import question_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import TG
from tests.unit.explain.conftest import CountingStore
from tests.unit.explain.scenario import (
    A_QUERY,
    D_QUERY,
    G_QUERY,
    S_QUERY,
    SID_A,
    SID_D,
    SID_G,
    SID_S,
    T0,
    Scenario,
)

AGENT = TraceSummary(SID_A, ids.agent_question_iri(SID_A), "Agent", A_QUERY, T0 + timedelta(hours=3))
DOCRAG = TraceSummary(SID_D, ids.docrag_question_iri(SID_D), "DocRAG", D_QUERY, T0 + timedelta(hours=2))
GRAPHRAG = TraceSummary(SID_G, ids.question_iri(SID_G), "GraphRAG", G_QUERY, T0 + timedelta(hours=1))
SUB = TraceSummary(SID_S, ids.question_iri(SID_S), "GraphRAG", S_QUERY, T0 + timedelta(hours=3, seconds=1),
                   informed_by=ids.agent_question_iri(SID_A))


def test_newest_first_with_sub_traces_hidden_in_one_query(store: CountingStore, scenario: Scenario) -> None:
    assert list_traces(store) == [AGENT, DOCRAG, GRAPHRAG]
    assert store.selects == 1


def test_all_includes_sub_traces_and_limit_cuts(store: CountingStore, scenario: Scenario) -> None:
    assert list_traces(store, include_sub_traces=True) == [SUB, AGENT, DOCRAG, GRAPHRAG]
    assert list_traces(store, limit=2) == [AGENT, DOCRAG]
    assert list_traces(store, include_sub_traces=True, limit=1) == [SUB]


def test_bad_limit_and_empty_store(store: CountingStore) -> None:
    assert list_traces(store) == []
    with pytest.raises(InputError, match="limit must be at least 1, got 0"):
        list_traces(store, limit=0)


def test_type_falls_back_to_the_iri_pattern_and_foreign_questions_keep_their_iri(store: CountingStore) -> None:
    store.add([q for q in question_quads(ids.agent_question_iri("x1"), query="q1", started=T0) if q.o != TG.GraphRagQuestion])
    store.add(question_quads(Iri("https://example.org/q/7"), query="q2", started=T0 + timedelta(minutes=1),
                             kind=TG.DocRagQuestion))
    found = list_traces(store)
    assert [(s.session_id, s.type) for s in found] == [("https://example.org/q/7", "DocRAG"), ("x1", "Agent")]


def test_table_is_plain_fixed_width_text(store: CountingStore, scenario: Scenario) -> None:
    assert render_list(list_traces(store)) == (
        "Session ID                            Type      Question                                       Time\n"
        "6f1c2a9e-0000-4000-8000-00000000000c  Agent     When was polonium discovered, and by whom?     2026-03-13 13:00:00\n"
        "6f1c2a9e-0000-4000-8000-00000000000b  DocRAG    What does the lab journal record?              2026-03-13 12:00:00\n"
        "6f1c2a9e-0000-4000-8000-00000000000a  GraphRAG  Who discovered polonium, and what was the ne…  2026-03-13 11:00:00\n"
    )
    with_parent = render_list(list_traces(store, include_sub_traces=True), show_parent=True).splitlines()
    assert with_parent[0].endswith("Time                 Sub-trace of")
    assert with_parent[1].endswith("2026-03-13 13:00:01  urn:trustgraph:agent:6f1c2a9e-0000-4000-8000-00000000000c")
    assert with_parent[2].endswith("2026-03-13 13:00:00")


def test_question_column_is_45_characters_with_an_ellipsis_only_when_cut() -> None:
    fits = "x" * 45
    row = render_list([TraceSummary("s", Iri("urn:q:1"), "Agent", fits, T0),
                       TraceSummary("t", Iri("urn:q:2"), "Agent", "y" * 46 + "\nz", T0)]).splitlines()
    assert f"  {fits}  " in row[1] and "…" not in row[1]
    assert "y" * 44 + "…" in row[2] and "z" not in row[2]


def test_a_question_with_duplicate_values_is_listed_once(store: CountingStore) -> None:
    q = ids.question_iri("dup")
    store.add(question_quads(q, query="first wording", started=T0))
    store.add(question_quads(q, query="second wording", started=T0 + timedelta(minutes=5)))
    store.add(question_quads(ids.question_iri("other"), query="other", started=T0 + timedelta(minutes=1)))
    found = list_traces(store, limit=2)
    assert [(s.session_id, s.started) for s in found] == [("other", T0 + timedelta(minutes=1)), ("dup", T0)]
