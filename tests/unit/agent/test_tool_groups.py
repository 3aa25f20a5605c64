"""Tool groups: a request's groups and state choose the agent's tools; the trace records them; bad groups fail."""

from __future__ import annotations

import pytest

from provgraph.agent.groups import select_tools
from provgraph.agent.tools import TextCompletionTool, document_query, knowledge_query
from provgraph.errors import InputError
from provgraph.events import Action, Final, Observation
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, TG
from provgraph.runtime import Runtime
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema
from tests.unit.agent.conftest import collect, step


def _tools(rt: Runtime) -> list:  # type: ignore[type-arg]
    llm = ScriptedChatModel(by_schema({}))
    return [knowledge_query(rt.graph_rag()), document_query(rt.document_rag()), TextCompletionTool(llm)]


def _names(tools: list) -> list[str]:  # type: ignore[type-arg]
    return [t.spec.name for t in tools]


def test_groups_and_states_choose_the_tools(rt: Runtime) -> None:
    tools = _tools(rt)
    assert _names(select_tools(tools, None, None, {})) == ["knowledge-query", "document-query", "text-completion"]
    assert _names(select_tools(tools, ["knowledge"], None, {})) == ["knowledge-query"]
    assert _names(select_tools(tools, ["knowledge", "text"], None, {})) == ["knowledge-query", "text-completion"]
    assert _names(select_tools(tools, ["*"], None, {})) == ["knowledge-query", "document-query", "text-completion"]
    overrides = {"document-query": {"group": ["docs"], "applicable-states": ["research"]}}
    assert _names(select_tools(tools, ["docs"], "research", overrides)) == ["document-query"]
    assert _names(select_tools(tools, ["default"], None, overrides)) == ["knowledge-query", "text-completion"]
    with pytest.raises(InputError, match="^no agent tool is in group.s. docs in state 'undefined'$"):
        select_tools(tools, ["docs"], None, overrides)
    with pytest.raises(InputError, match=r"^unknown tool group 'nope': the groups are default, documents, "
                                         r"knowledge, text \(or \* for all\)$"):
        select_tools(tools, ["nope"], None, {})


def test_a_request_without_document_query_never_calls_it(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from provgraph.config import load_settings

    llm = ScriptedChatModel(by_schema({"agent_step": [
        step("Search the documents.", "document-query", {"question": "q"}),
        step("Done.", final_answer="nothing")]}))
    settings = load_settings(home=str(tmp_path / "home"), collection="agent", llm="none")
    with Runtime(settings, llm=llm) as rt:
        events = collect(rt.ask_agent("Who discovered polonium?", groups=["knowledge"]))
        question = Iri(next(e for e in events if hasattr(e, "explain_id")).explain_id)  # type: ignore[union-attr]
        allowed = {q.o for q in rt.store.match(question, TG.allowedTool, None, g=GRAPH_RETRIEVAL)}
        groups = {q.o for q in rt.store.match(question, TG.toolGroup, None, g=GRAPH_RETRIEVAL)}
        docrag = [q for q in rt.store.match(None, None, None, g=GRAPH_RETRIEVAL) if "docrag" in str(q.s)]
    assert allowed == {Literal("knowledge-query")} and groups == {Literal("knowledge")}
    # the model asked for it; the agent refused it as a tool it does not have
    assert [e.name for e in events if isinstance(e, Action)] == ["document-query"]
    refused = [e for e in events if isinstance(e, Observation)]
    assert [(o.error, o.text) for o in refused] == [
        (True, "InputError: unknown tool 'document-query'; the tools are: knowledge-query")]
    assert docrag == []  # no Document RAG trace: the tool never ran
    assert isinstance(events[-1], Final)
    prompt = llm.calls[0].messages[0].content
    assert "knowledge-query" in prompt and "document-query" not in prompt
