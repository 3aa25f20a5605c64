"""``provgraph traces list`` / ``traces show`` on a real on-disk collection holding finished queries."""

from __future__ import annotations

import json

import pytest

from provgraph.config import load_settings
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.unit.explain import expected
from tests.unit.explain.scenario import (
    F1,
    F2,
    F4,
    G_ANSWER,
    G_REASONS,
    SID_A,
    SID_D,
    SID_G,
    SID_S,
    write_scenario,
)

C = ("-C", "traces")


@pytest.fixture(autouse=True)
def collection() -> None:
    with Runtime(load_settings(collection="traces", llm="none")) as rt:
        write_scenario(rt.store, rt.librarian)


def test_list_table_newest_first_with_sub_traces_hidden() -> None:
    r = run("traces", "list", *C)
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        "Session ID                            Type      Question                                       Time\n"
        f"{SID_A}  Agent     When was polonium discovered, and by whom?     2026-03-13 13:00:00\n"
        f"{SID_D}  DocRAG    What does the lab journal record?              2026-03-13 12:00:00\n"
        f"{SID_G}  GraphRAG  Who discovered polonium, and what was the ne…  2026-03-13 11:00:00\n"
    )


def test_list_json_all_and_limit() -> None:
    rows = json.loads(run("traces", "list", *C, "--format", "json", "--all").out)
    assert [(r["session_id"], r["type"], r["informed_by"]) for r in rows] == [
        (SID_S, "GraphRAG", f"urn:trustgraph:agent:{SID_A}"), (SID_A, "Agent", None),
        (SID_D, "DocRAG", None), (SID_G, "GraphRAG", None),
    ]
    assert rows[0]["started"] == "2026-03-13T13:00:01Z"
    limited = json.loads(run("traces", "list", *C, "-f", "json", "--limit", "2").out)
    assert [r["session_id"] for r in limited] == [SID_A, SID_D]
    table = run("traces", "list", *C, "--all").out.splitlines()
    assert table[1].startswith(SID_S) and table[1].endswith(f"urn:trustgraph:agent:{SID_A}")


def test_list_of_an_empty_collection() -> None:
    run("collections", "create", "empty")
    assert run("traces", "list", "-C", "empty").out == "no traces in default/empty\n"
    assert run("traces", "list", "-C", "empty", "--format", "json").out == "[]\n"


def test_show_graph_rag_with_provenance_in_the_spec_layout() -> None:
    r = run("traces", "show", SID_G, *C, "--show-provenance")
    assert (r.code, r.err) == (0, "")
    assert r.out == expected.GRAPH_RAG_WITH_PROVENANCE
    by_iri = run("traces", "show", f"urn:trustgraph:question:{SID_G}", *C, "-p")
    assert by_iri.out == r.out


def test_show_doc_rag_and_agent_with_nested_sub_trace() -> None:
    assert run("traces", "show", SID_D, *C).out == expected.DOC_RAG
    assert run("traces", "show", SID_A, *C).out == expected.AGENT


def test_show_reproduces_the_finished_query_exactly() -> None:
    data = json.loads(run("traces", "show", SID_G, *C, "--format", "json", "--show-provenance").out)
    scripted = [(F1, G_REASONS[0], 0.83), (F2, G_REASONS[1], 0.71), (F4, G_REASONS[2], None)]
    assert [(e["s"], e["p"], e["o"], e["reasoning"], e["score"]) for e in data["focus"]["edges"]] == [
        (str(f.s), str(f.p), str(f.o), reason, score) for f, reason, score in scripted]
    assert data["answer"] == G_ANSWER
    assert [len(e["sources"]) for e in data["focus"]["edges"]] == [2, 1, 0]


def test_unknown_trace_is_one_line_exit_3() -> None:
    r = run("traces", "show", "nope", *C)
    assert (r.code, r.out) == (3, "")
    assert r.err == "error: no trace 'nope' in collection default/traces (list them with: provgraph traces list)\n"
    missing = run("traces", "list", "-C", "missing")
    assert missing.code == 3 and missing.err.startswith("error: collection default/missing does not exist")


def test_bad_limit_is_a_usage_error() -> None:
    assert run("traces", "list", *C, "--limit", "0").code == 2


def test_every_traces_command_has_help_with_an_example() -> None:
    for cmd in (["traces", "list"], ["traces", "show"]):
        r = run(*cmd, "--help")
        assert r.code == 0 and "Example:" in r.out, cmd
