"""Structured-output negotiation and bounded calls against recorded request/response shapes.

The response bodies follow each server's documented shapes: OpenAI's chat completion and error
objects, Ollama's OpenAI-compatible endpoint (``system_fingerprint: fp_ollama``), vLLM's (top-level
``{"object": "error", "message", "code"}`` errors, ``stop_reason`` in choices), llama-cpp-python's
0.3 server (HTTP 500 for ``json_schema``) and llama.cpp's ``llama-server`` (grammar errors).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from provgraph.errors import MalformedOutput, ModelError, ModelUnavailable
from provgraph.models.base import Usage, system, user
from provgraph.models.openai_compat import OpenAIChatModel
from provgraph.models.retry import RetryPolicy
from provgraph.models.structured import REMEMBERED
from tests.fakes.openai_server import FakeOpenAIServer, Reply, chat, chat_stream, error

pytestmark = pytest.mark.server

T = TypeVar("T")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"names": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 30}}},
    "required": ["names"],
}
MESSAGES = [system("List names."), user("Marie Curie met Pierre Curie.")]


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def model(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"retry": RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.1), "timeout": 5.0}
    options.update(kwargs)
    return OpenAIChatModel(model="m", base_url=server.base_url, **options)


def ask(llm: OpenAIChatModel) -> Any:
    return run(llm.complete_json(MESSAGES, schema=SCHEMA, schema_name="names")).data


def openai_chat(text: str, *, finish: str = "stop") -> Reply:
    """OpenAI's documented chat.completion object."""
    return Reply(body={
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion", "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None,
                                             "annotations": []}, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
        "service_tier": "default", "system_fingerprint": "fp_3a2b",
    })


def ollama_chat(text: str) -> Reply:
    """Ollama's /v1/chat/completions answer."""
    return Reply(body={
        "id": "chatcmpl-574", "object": "chat.completion", "created": 1733000000, "model": "llama3.2",
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
    })


def vllm_chat(text: str, *, finish: str = "stop") -> Reply:
    """vLLM's OpenAI-compatible chat completion."""
    return Reply(body={
        "id": "chatcmpl-9f4c", "object": "chat.completion", "created": 1733000000,
        "model": "Qwen/Qwen2.5-1.5B-Instruct",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "tool_calls": [],
                                             "reasoning_content": None}, "logprobs": None,
                     "finish_reason": finish, "stop_reason": None}],
        "usage": {"prompt_tokens": 25, "total_tokens": 40, "completion_tokens": 15, "prompt_tokens_details": None},
        "prompt_logprobs": None,
    })


def vllm_error(message: str, status: int = 400) -> Reply:
    """vLLM's error object (top-level, not nested under ``error``)."""
    return Reply(status=status, body={"object": "error", "message": message, "type": "BadRequestError",
                                      "param": None, "code": status})


LLAMA_CPP_PYTHON_500 = Reply(status=500, body={"error": {
    "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
    "type": "internal_server_error", "param": None, "code": None}})

LLAMA_SERVER_GRAMMAR = Reply(status=400, body={"error": {
    "code": 400, "message": "Failed to parse grammar", "type": "invalid_request_error"}})


def test_openai_gets_json_schema_and_a_max_tokens_from_the_schema(server: FakeOpenAIServer) -> None:
    server.push(openai_chat('{"names": ["Marie Curie", "Pierre Curie"]}'))
    llm = model(server, max_tokens=4096)
    assert ask(llm) == {"names": ["Marie Curie", "Pierre Curie"]}
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "names", "schema": SCHEMA, "strict": False}}
    # 3 items of at most 30 characters: (30 // 3 + 4 + 1) * 3 + 2 = 47, plus the key's 1 + 3, plus 2
    assert body["max_tokens"] == 53
    assert llm.structured_mode == "json_schema"


def test_the_max_tokens_cap_wins_over_a_larger_schema_budget(server: FakeOpenAIServer) -> None:
    server.push(openai_chat('{"names": []}'))
    ask(model(server, max_tokens=20))
    assert server.requests[0].body["max_tokens"] == 20


def test_ollama_shape_with_json_schema(server: FakeOpenAIServer) -> None:
    server.push(ollama_chat('{"names": ["Marie Curie"]}'))
    completion = run(model(server).complete_json(MESSAGES, schema=SCHEMA, schema_name="names"))
    assert completion.data == {"names": ["Marie Curie"]}
    assert completion.usage == Usage(30, 12, "openai:m")


def test_vllm_cut_off_answer_keeps_the_complete_items(server: FakeOpenAIServer) -> None:
    server.push(vllm_chat('{"names": ["Marie Curie", "Pierre Cu', finish="length"))
    assert ask(model(server)) == {"names": ["Marie Curie"]}


def test_vllm_cut_off_before_any_item_is_malformed_and_says_so(server: FakeOpenAIServer) -> None:
    server.push(vllm_chat('{"names": ["Mar', finish="length"))
    completion = run(model(server).complete_json(MESSAGES, schema=SCHEMA, schema_name="names"))
    assert completion.data == {"names": []}
    server.push(vllm_chat('{"nam', finish="length"))
    with pytest.raises(MalformedOutput, match="stopped at its token limit before any complete item"):
        ask(model(server))


def test_vllm_schema_error_steps_down_to_json_object(server: FakeOpenAIServer) -> None:
    server.push(vllm_error("guided_json: the JSON schema could not be compiled"), vllm_chat('{"names": []}'))
    assert ask(model(server)) == {"names": []}
    assert server.requests[1].body["response_format"]["type"] == "json_object"


def test_llama_cpp_python_500_on_json_schema_falls_back_without_retrying(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.push(LLAMA_CPP_PYTHON_500, chat('{"names": ["Marie Curie"]}'), chat('{"names": []}'))
    llm = model(server)
    with caplog.at_level(logging.WARNING, logger="provgraph.models"):
        assert ask(llm) == {"names": ["Marie Curie"]}
        assert ask(llm) == {"names": []}
    first, second, third = (r.body for r in server.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == third["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "List names." in second["messages"][0]["content"] and '"maxItems":3' in second["messages"][0]["content"]
    fallbacks = [r.getMessage() for r in caplog.records if "falls back" in r.getMessage()]
    assert len(fallbacks) == 1 and "json_object" in fallbacks[0] and "Input should be" in fallbacks[0]
    assert REMEMBERED[(server.base_url, "m")] == "json_object"


def test_the_mode_is_remembered_across_instances_for_the_same_endpoint(server: FakeOpenAIServer) -> None:
    server.push(LLAMA_CPP_PYTHON_500, chat('{"names": []}'), chat('{"names": []}'))
    ask(model(server))
    ask(model(server))
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object", "json_object"]


def test_grammar_errors_step_down_to_prompt_only(server: FakeOpenAIServer) -> None:
    server.push(LLAMA_SERVER_GRAMMAR, LLAMA_SERVER_GRAMMAR, chat('Sure: {"names": ["Marie Curie",]}'))
    llm = model(server)
    assert ask(llm) == {"names": ["Marie Curie"]}
    assert [r.body.get("response_format", {}).get("type") for r in server.requests] == [
        "json_schema", "json_object", None]
    assert '"maxItems":3' in server.requests[2].body["messages"][0]["content"]
    assert llm.structured_mode == "prompt"


def test_an_error_in_prompt_mode_is_a_model_error_not_a_loop(server: FakeOpenAIServer) -> None:
    server.push(LLAMA_SERVER_GRAMMAR, LLAMA_SERVER_GRAMMAR, LLAMA_SERVER_GRAMMAR)
    with pytest.raises(ModelError, match="HTTP 400: Failed to parse grammar"):
        ask(model(server))
    assert len(server.requests) == 3


def test_an_unrelated_server_error_is_still_retried_in_the_same_mode(server: FakeOpenAIServer) -> None:
    server.push(error(503, "model is loading"), chat('{"names": []}'))
    assert ask(model(server)) == {"names": []}
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema", "json_schema"]


def test_an_unbounded_schema_is_refused_before_anything_is_sent(server: FakeOpenAIServer) -> None:
    unbounded = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 20000}}}
    with pytest.raises(ModelError, match=r"schema 'step' is not safe.*maxLength 20000 is above 1000"):
        run(model(server).complete_json(MESSAGES, schema=unbounded, schema_name="step"))
    assert server.requests == []


def test_a_timeout_is_not_retried_with_the_same_request(server: FakeOpenAIServer) -> None:
    server.push(chat("late", delay=1.0), chat("never asked"))
    llm = model(server, timeout=0.2, retry=RetryPolicy(max_retries=3, base_delay=0.01))
    with pytest.raises(ModelUnavailable, match="timed out after 0.2 s after 1 attempt .not retried"):
        run(llm.complete([user("hi")]))
    assert len(server.requests) == 1


def test_usage_missing_from_a_completion_is_estimated_and_marked(server: FakeOpenAIServer) -> None:
    reply = chat("12345678")
    reply.body.pop("usage")
    server.push(reply)
    completion = run(model(server).complete([user("abcd")]))
    assert completion.usage == Usage(1, 2, "openai:m", estimated=True)


def test_vllm_stream_usage_chunk_is_used(server: FakeOpenAIServer) -> None:
    server.push(chat_stream(["Marie ", "Curie"], usage=(25, 3)))
    completion = run(model(server).stream([user("who?")]).collect())
    assert completion.usage == Usage(25, 3, "openai:m")
    assert server.requests[0].body["stream_options"] == {"include_usage": True}
    assert server.requests[0].body["max_tokens"] == 1024


def test_a_server_refusing_stream_options_with_a_500_is_asked_again_without(server: FakeOpenAIServer) -> None:
    server.push(error(500, "Unrecognized request argument supplied: stream_options"), chat_stream(["ok"], usage=None))
    completion = run(model(server).stream([user("abcd")]).collect())
    assert completion.text == "ok" and completion.usage == Usage(1, 1, "openai:m", estimated=True)
    assert "stream_options" not in server.requests[1].body


def test_config_show_probe_reports_the_negotiated_mode(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Any) -> None:
    from tests.cli_runner import run as cli

    server.push(LLAMA_CPP_PYTHON_500, chat('{"answer": "Paris"}'), chat_stream(["Hello"], usage=None))
    monkeypatch.setenv("PROVGRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "m")
    r = cli("config", "show", "--probe", "-f", "json")
    assert r.code == 0, r.err
    import json

    shown = json.loads(r.out)
    assert shown["probe_model"] == "openai:m" and shown["probe_structured_output"] == "json_object"
    assert shown["probe_json_ok"] is True and shown["probe_streaming"] is True
    assert shown["probe_usage"] == "reported (completions), estimated (streams)"
    assert [q.body.get("response_format", {}).get("type") for q in server.requests] == [
        "json_schema", "json_object", None]


def test_a_server_wanting_max_completion_tokens_gets_it_from_then_on(server: FakeOpenAIServer) -> None:
    refusal = error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                         "Use 'max_completion_tokens' instead.", param="max_tokens")
    server.push(refusal, openai_chat("one"), openai_chat("two"))
    llm = model(server, max_tokens=64)
    assert run(llm.complete([user("hi")])).text == "one"
    assert run(llm.complete([user("hi")])).text == "two"
    first, second, third = (r.body for r in server.requests)
    assert first["max_tokens"] == 64 and "max_completion_tokens" not in first
    for body in (second, third):
        assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
