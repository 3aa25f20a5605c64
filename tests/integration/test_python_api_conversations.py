"""The Python API's conversations and agent: ``conversation=`` on graph_rag/document_rag, the thread, deletion,
``Provgraph.agent`` with a tool group (the real OpenAI provider against the loopback server)."""

from __future__ import annotations

import pytest

from provgraph import Provgraph
from provgraph.config import Settings
from provgraph.errors import InputError, NotFound
from tests.fakes.openai_server import FakeOpenAIServer
from tests.integration.test_agent_cli import use_steps
from tests.unit.agent.conftest import step


def test_conversations_in_process(corpus_settings: Settings) -> None:
    with Provgraph(collection="corpus", home=corpus_settings.home, llm="none") as pg:
        first = pg.graph_rag("Who discovered polonium?", conversation="py")
        second = pg.document_rag("Where was she born?", conversation="py")
        assert (first.conversation, first.turn, second.conversation, second.turn) == ("py", 1, "py", 2)
        assert "Warsaw" in second.text
        thread = pg.conversation("py")
        assert [t["query"] for t in thread["turns"]] == ["Who discovered polonium?", "Where was Marie Curie born?"]
        assert [c["conversation"] for c in pg.conversations()] == ["py"]
        assert pg.delete_conversation("py") == 2
        with pytest.raises(NotFound):
            pg.conversation("py")


def test_agent_in_process_with_a_tool_group(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, step("Ask the graph.", "knowledge-query", {"question": "Who discovered polonium?"}),
              step("Done.", final_answer="Marie and Pierre Curie."))
    with Provgraph(collection="corpus", home=corpus_settings.home) as pg:
        answer = pg.agent("Who discovered polonium?", group=["knowledge"])
        assert answer.text == "Marie and Pierre Curie." and answer.sources
        question = answer.steps[0]
        allowed = [q.o.value for q in question.triples if q.p.value.endswith("/allowedTool")]  # type: ignore[union-attr]
        assert allowed == ["knowledge-query"]
        with pytest.raises(InputError, match="^unknown tool group 'nope'"):
            pg.agent("Who?", group=["nope"])
