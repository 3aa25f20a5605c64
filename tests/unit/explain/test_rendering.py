from __future__ import annotations

import json
from datetime import timedelta

from provgraph.explain import AgentTrace, load_trace
from provgraph.explain.render_json import iso_time, summary_json, trace_json
from provgraph.explain.render_text import render_trace
from provgraph.explain.traces import list_traces
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.provenance import agent_question_quads, docrag_question_quads
from provgraph.provenance.retraction import retraction_quads
from provgraph.rdf import ids
from tests.unit.explain import expected
from tests.unit.explain.conftest import CountingStore
from tests.unit.explain.scenario import (
    CA,
    CC,
    CHUNK_A,
    D_ANSWER,
    D_QUERY,
    DOC1,
    DOC2,
    F1,
    G_ANSWER,
    JOURNAL,
    P2,
    SID_A,
    SID_D,
    SID_G,
    SID_S,
    T0,
    Scenario,
)


def test_graph_rag_text_with_provenance(store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario) -> None:
    trace = load_trace(store, SID_G, librarian=librarian, provenance=True)
    assert render_trace(trace) == expected.GRAPH_RAG_WITH_PROVENANCE


def test_graph_rag_text_without_provenance_has_no_source_lines(store: CountingStore, scenario: Scenario) -> None:
    text = render_trace(load_trace(store, SID_G))
    assert text == "".join(
        line for line in expected.GRAPH_RAG_WITH_PROVENANCE.splitlines(keepends=True)
        if "Source:" not in line and "Text:" not in line
    )


def test_doc_rag_text(store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario) -> None:
    assert render_trace(load_trace(store, SID_D, librarian=librarian)) == expected.DOC_RAG


def test_agent_text_nests_the_sub_trace_and_marks_the_error(store: CountingStore, scenario: Scenario) -> None:
    assert render_trace(load_trace(store, SID_A)) == expected.AGENT


def test_partial_and_unlinked_traces_render(store: CountingStore, scenario: Scenario) -> None:
    q = ids.agent_question_iri("stub")
    store.add(agent_question_quads(q, query="never finished", started=T0))
    store.add(docrag_question_quads(ids.docrag_question_iri("orphan"), query="tool run", started=T0, informed_by=q))
    trace = load_trace(store, "stub")
    assert isinstance(trace, AgentTrace)
    assert render_trace(trace) == (
        "  [question] urn:trustgraph:agent:stub\n"
        "    Query: never finished\n"
        "    Time: 2026-03-13 10:00:00 UTC\n"
        "  [sub-trace] (DocRAG, not linked to an analysis)\n"
        "      [question] urn:trustgraph:docrag:orphan\n"
        "        Query: tool run\n"
        "        Time: 2026-03-13 10:00:00 UTC\n"
        "        Informed by: urn:trustgraph:agent:stub\n"
        "\n"
        "(no answer: the trace ends before its last step)\n"
    )


def test_doc_rag_json_is_the_whole_trace(store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario) -> None:
    journal = {"document": DOC2.value, "title": "Lab Journal", "chunk": CC.value, "chunk_index": 1, "offset": 0,
               "length": len(JOURNAL), "page": None, "page_number": None, "section": None, "section_title": None,
               "subgraph": None}
    notes = {"document": DOC1.value, "title": "Radioactivity Notes", "chunk": CA.value, "chunk_index": 1,
             "offset": 0, "length": len(CHUNK_A), "page": P2.value, "page_number": 2, "section": None,
             "section_title": None, "subgraph": None}
    usage = {"model": "scripted", "input_tokens": 220, "output_tokens": 40}
    unranked = {"rank": None, "score": None, "retriever": None, "retracted": False}  # written before ranks were
    assert trace_json(load_trace(store, SID_D, librarian=librarian)) == {
        "type": "DocRAG",
        "session_id": SID_D,
        "stale": False,
        "retracted": [],
        "question": {"iri": f"urn:trustgraph:docrag:{SID_D}", "query": D_QUERY, "started": "2026-03-13T12:00:00Z",
                     "informed_by": None},
        "exploration": {
            "iri": f"urn:trustgraph:docrag:{SID_D}/exploration", "chunk_count": 2,
            "chunks": [{"chunk": CC.value, **unranked, "source": journal, "excerpt": None},
                       {"chunk": CA.value, **unranked, "source": notes, "excerpt": None}],
        },
        "synthesis": {
            "iri": f"urn:trustgraph:docrag:{SID_D}/synthesis", "document": f"urn:trustgraph:docrag:{SID_D}/answer",
            "content": D_ANSWER, "usage": usage,
            "cited": [{"chunk": CC.value, **unranked, "source": journal, "excerpt": None}],
        },
        "answer": D_ANSWER,
        "citations": [],
    }


def test_graph_rag_json_edges_are_n_triples_with_labels_reasoning_score_sources(
    store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario
) -> None:
    data = json.loads(json.dumps(trace_json(load_trace(store, SID_G, librarian=librarian, provenance=True))))
    assert [data[k] is not None for k in ("grounding", "exploration", "focus", "synthesis")] == [True] * 4
    assert data["answer"] == data["synthesis"]["content"] == G_ANSWER
    first = data["focus"]["edges"][0]
    assert {k: first[k] for k in ("selection", "index", "s", "p", "o", "labels", "reasoning", "score")} == {
        "selection": f"urn:trustgraph:prov:edge:{SID_G}:0", "index": 0,
        "s": str(F1.s), "p": str(F1.p), "o": str(F1.o),
        "labels": {"s": "Marie Curie", "p": "discovered", "o": "polonium"},
        "reasoning": "States who discovered polonium.", "score": 0.83,
    }
    assert [(s["title"], s["page_number"], s["offset"], s["length"], s["excerpt"]) for s in first["sources"]] == [
        ("Lab Journal", None, 0, len(JOURNAL), JOURNAL), ("Radioactivity Notes", 2, 0, len(CHUNK_A), CHUNK_A)]
    assert data["focus"]["edges"][2]["o"] == '"1898"' and data["focus"]["edges"][2]["sources"] == []
    assert trace_json(load_trace(store, SID_G))["focus"]["edges"][0]["sources"] is None


def test_agent_json_nests_sub_traces(store: CountingStore, scenario: Scenario) -> None:
    data = trace_json(load_trace(store, SID_A))
    assert [(a["step"], a["error"], a["sub_trace"] is not None) for a in data["analyses"]] == [
        (1, False, True), (2, True, False), (3, False, False)]
    assert data["analyses"][0]["sub_trace"] == trace_json(load_trace(store, SID_S))
    assert data["conclusion"]["termination_reason"] == "final-answer" and data["answer"] == data["conclusion"]["answer"]


def test_summary_json_and_times(store: CountingStore, scenario: Scenario) -> None:
    assert [summary_json(s) for s in list_traces(store, limit=1)] == [{
        "session_id": SID_A, "question": f"urn:trustgraph:agent:{SID_A}", "type": "Agent",
        "query": "When was polonium discovered, and by whom?", "started": "2026-03-13T13:00:00Z", "informed_by": None,
    }]
    assert iso_time(T0 + timedelta(milliseconds=250)) == "2026-03-13T10:00:00.250Z"


def test_a_retraction_makes_the_sub_trace_and_its_agent_stale(store: CountingStore, scenario: Scenario) -> None:
    sub = load_trace(store, SID_S)
    edge = sub.focus.edges[0].edge
    at = T0 + timedelta(days=1)
    store.add(retraction_quads(ids.retraction_iri(DOC1, "x"), document=DOC1, at=at, reason="removed",
                               traces=[ids.question_iri(SID_S)], edges=[edge], chunks=[CC]))
    agent = trace_json(load_trace(store, SID_A))
    expected_retraction = {"document": DOC1.value, "at": iso_time(at), "reason": "removed",
                           "edges": [{"s": str(edge.s), "p": str(edge.p), "o": str(edge.o)}], "chunks": []}
    assert agent["stale"] is True and agent["retracted"] == [expected_retraction]
    assert agent["analyses"][0]["sub_trace"]["retracted"] == [expected_retraction]
    assert [e["retracted"] for e in agent["analyses"][0]["sub_trace"]["focus"]["edges"]] == [
        e.edge == edge for e in sub.focus.edges]
    assert trace_json(load_trace(store, SID_G))["stale"] is False  # same edge, trace not named
    text = render_trace(load_trace(store, SID_A))
    assert text.startswith(
        "  STALE: a document this trace used has been removed or replaced since\n"
        f"    {DOC1.value} removed at {(at).strftime('%Y-%m-%d %H:%M:%S')} UTC: 1 edge(s), 0 chunk(s) of this trace\n")


def test_a_retracted_sub_trace_no_analysis_derives_from_makes_its_agent_stale(
        store: CountingStore, scenario: Scenario) -> None:
    orphan = ids.docrag_question_iri("orphan")  # a tool that failed before its synthesis: in other_sub_traces
    store.add(docrag_question_quads(orphan, query="half-run tool", started=T0, informed_by=scenario.agent))
    before = load_trace(store, SID_A)
    assert isinstance(before, AgentTrace) and [t.question.iri for t in before.other_sub_traces] == [orphan]
    assert before.stale is False and trace_json(before)["stale"] is False
    at = T0 + timedelta(days=2)
    store.add(retraction_quads(ids.retraction_iri(DOC2, "y"), document=DOC2, at=at, reason="replaced",
                               traces=[orphan], edges=[], chunks=[CC]))
    agent = load_trace(store, SID_A)
    assert isinstance(agent, AgentTrace) and agent.other_sub_traces[0].stale is True
    assert all(not a.sub_trace.stale for a in agent.analyses if a.sub_trace is not None)  # only the orphan is
    data = trace_json(agent)
    assert data["stale"] is True and [r["document"] for r in data["retracted"]] == [DOC2.value]
    assert data["other_sub_traces"][0]["stale"] is True
    assert render_trace(agent).startswith("  STALE: a document this trace used has been removed or replaced since\n"
                                          f"    {DOC2.value} replaced at ")
