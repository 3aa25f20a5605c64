"""The openai provider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from provgraph.config import Settings
from provgraph.errors import MalformedOutput, ModelError, ModelUnavailable
from provgraph.models import build_chat_model
from provgraph.models.base import Usage, system, user
from provgraph.models.openai_compat import OpenAIChatModel
from provgraph.models.retry import RetryPolicy
from tests.fakes.openai_server import FakeOpenAIServer, chat, chat_stream, error

pytestmark = pytest.mark.server

T = TypeVar("T")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "tags"],
    "properties": {
        "id": {"type": "string", "maxLength": 20},
        "tags": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 20}},
    },
}


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def model(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"retry": RetryPolicy(max_retries=3, base_delay=0.01, max_delay=1.0), "timeout": 5.0}
    options.update(kwargs)
    return OpenAIChatModel(model="test-model", base_url=server.base_url, api_key="sk-test", **options)


def test_complete_sends_the_conversation_and_reads_usage(server: FakeOpenAIServer) -> None:
    server.push(chat("Paris.", prompt_tokens=12, completion_tokens=3))
    result = run(model(server).complete([system("Be brief."), user("Capital of France?")], max_tokens=20))
    assert result.text == "Paris."
    assert result.usage == Usage(12, 3, "openai:test-model")
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "test-model" and request.body["max_tokens"] == 20
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert "stream" not in request.body


def test_stream_yields_pieces_then_usage(server: FakeOpenAIServer) -> None:
    server.push(chat_stream(["Pa", "ri", "s."], usage=(8, 3)))

    async def consume() -> tuple[Usage | None, list[str], Usage | None]:
        stream = model(server).stream([user("Capital?")])
        before = stream.usage
        pieces = [piece async for piece in stream]
        return before, pieces, stream.usage

    before, pieces, usage = run(consume())
    assert before is None
    assert pieces == ["Pa", "ri", "s."]
    assert usage == Usage(8, 3, "openai:test-model")
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_without_usage_chunk_estimates_usage(server: FakeOpenAIServer) -> None:
    server.push(chat_stream(["ok then"], usage=None))
    completion = run(model(server).stream([user("12345678")]).collect())
    assert completion.text == "ok then" and completion.usage == Usage(2, 2, "openai:test-model", estimated=True)


def test_stream_retries_a_failure_before_the_first_piece(server: FakeOpenAIServer) -> None:
    server.push(error(503, "warming up"), chat_stream(["fine"]))
    assert run(model(server).stream([user("hi")]).collect()).text == "fine"
    assert len(server.requests) == 2


def test_complete_json_asks_for_the_schema_and_repairs_the_text(server: FakeOpenAIServer) -> None:
    text = 'Here you go:\n```json\n{"id": "e1", "tags": ["a", "b",],}\n```\nAnything else?'
    server.push(chat(text))
    result = run(model(server).complete_json([user("tag it")], schema=SCHEMA, schema_name="tagging"))
    assert result.data == {"id": "e1", "tags": ["a", "b"]}
    assert result.text == text and result.usage.input_tokens == 11
    assert server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "tagging", "schema": SCHEMA, "strict": False},
    }


def test_schema_violation_is_malformed_output_with_raw_text(server: FakeOpenAIServer) -> None:
    server.push(chat('{"id": 7}'))
    with pytest.raises(MalformedOutput) as info:
        run(model(server).complete_json([user("x")], schema=SCHEMA, schema_name="tagging"))
    message = str(info.value)
    assert "openai:test-model" in message and "'tagging'" in message
    assert "$.id: expected string, got integer" in message and "missing required property 'tags'" in message
    assert info.value.raw == '{"id": 7}'


def test_prose_only_answer_is_malformed_output(server: FakeOpenAIServer) -> None:
    server.push(chat("I am sorry, I cannot do that."))
    with pytest.raises(MalformedOutput, match="not JSON") as info:
        run(model(server).complete_json([user("x")], schema=SCHEMA, schema_name="tagging"))
    assert info.value.raw == "I am sorry, I cannot do that."


def test_rejected_response_format_falls_back_once_and_is_remembered(server: FakeOpenAIServer) -> None:
    llm = model(server)
    server.push(
        error(
            400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported", param="response_format"
        ),
        chat('{"id": "e1", "tags": []}'),
        chat('{"id": "e2", "tags": []}'),
    )

    async def twice() -> list[Any]:
        messages = [system("Tag things."), user("x")]
        first = await llm.complete_json(messages, schema=SCHEMA, schema_name="tagging")
        second = await llm.complete_json(messages, schema=SCHEMA, schema_name="tagging")
        return [first.data, second.data]

    assert run(twice()) == [{"id": "e1", "tags": []}, {"id": "e2", "tags": []}]
    first, retried, later = (r.body for r in server.requests)
    assert first["response_format"]["type"] == "json_schema"
    for body in (retried, later):
        assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
        assert body["messages"][0]["role"] == "system"
        assert body["messages"][0]["content"].startswith("Tag things.")
        assert '"required":["id","tags"]' in body["messages"][0]["content"]
    assert llm.structured_mode == "json_object"


def test_retries_server_errors_then_succeeds(server: FakeOpenAIServer) -> None:
    server.push(error(500, "boom"), error(502, "bad gateway"), chat("ok"))
    assert run(model(server).complete([user("hi")])).text == "ok"
    assert len(server.requests) == 3


def test_server_errors_exhaust_retries_into_model_unavailable(server: FakeOpenAIServer) -> None:
    server.push(*[error(500, "still broken")] * 3)
    llm = model(server, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    with pytest.raises(ModelUnavailable) as info:
        run(llm.complete([user("hi")]))
    message = str(info.value)
    assert "openai provider" in message and server.base_url in message and "test-model" in message
    assert "HTTP 500" in message and "still broken" in message and "3 attempts" in message
    assert len(server.requests) == 3


def test_rate_limit_honours_retry_after(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.push(error(429, "slow down", headers={"Retry-After": "0.3"}), chat("ok"))
    llm = model(server, retry=RetryPolicy(max_retries=3, base_delay=0.001, max_delay=5.0))
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
        slept.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)  # the wait is read, not timed
    assert run(llm.complete([user("hi")])).text == "ok"
    assert len(server.requests) == 2
    assert [d for d in slept if d > 0] == [0.3]


def test_client_errors_are_not_retried(server: FakeOpenAIServer) -> None:
    server.push(error(400, "messages must not be empty"), error(401, "bad key"))
    llm = model(server)
    with pytest.raises(ModelError) as info:
        run(llm.complete([user("hi")]))
    assert not isinstance(info.value, ModelUnavailable)
    assert "HTTP 400: messages must not be empty" in str(info.value)
    assert len(server.requests) == 1
    with pytest.raises(ModelError, match="PROVGRAPH_LLM_API_KEY"):
        run(llm.complete([user("hi")]))
    assert len(server.requests) == 2


def test_timeout_is_model_unavailable(server: FakeOpenAIServer) -> None:
    server.push(chat("too late", delay=1.5))
    llm = model(server, timeout=0.2, retry=RetryPolicy(max_retries=0))
    with pytest.raises(ModelUnavailable, match="timed out after 0.2 s"):
        run(llm.complete([user("hi")]))
    assert len(server.requests) == 1  # no retry after the timeout


_WAITS: list[int] = []


class _CountingRetry(RetryPolicy):
    """A retry policy that records each wait it is asked for (one per retry) in ``_WAITS``."""

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        _WAITS.append(attempt)
        return 0.0


def test_a_refused_connection_is_model_unavailable_and_not_retried() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _WAITS.clear()
    llm = OpenAIChatModel(model="m", base_url=f"http://127.0.0.1:{port}/v1", retry=_CountingRetry(max_retries=3))
    with pytest.raises(ModelUnavailable, match=f"127.0.0.1:{port}.*: connection refused \\(nothing listens there"):
        run(llm.complete([user("hi")]))
    with pytest.raises(ModelUnavailable, match="connection refused"):
        run(llm.stream([user("hi")]).collect())
    assert _WAITS == []  # nothing listens there: trying again at once would be refused again


def test_concurrency_limit_is_respected(server: FakeOpenAIServer) -> None:
    server.default = chat("ok", delay=0.15)
    llm = model(server, concurrency=2)

    async def many() -> list[str]:
        results = await asyncio.gather(*(llm.complete([user(f"q{i}")]) for i in range(6)))
        await llm.aclose()
        return [r.text for r in results]

    assert run(many()) == ["ok"] * 6
    assert len(server.requests) == 6
    assert server.max_in_flight == 2


def test_model_built_from_settings_talks_to_the_endpoint(server: FakeOpenAIServer) -> None:
    server.push(chat("hello"))
    llm = build_chat_model(Settings(llm_base_url=server.base_url, llm_model="m1", llm_api_key="sk-x"))
    assert llm is not None and llm.name == "openai:m1"
    assert run(llm.complete([user("hi")])).text == "hello"
    assert server.requests[0].headers["authorization"] == "Bearer sk-x"


def test_one_model_serves_successive_event_loops(server: FakeOpenAIServer) -> None:
    server.push(chat("one"), chat("two"))
    llm = model(server)
    assert run(llm.complete([user("a")])).text == "one"
    assert run(llm.complete([user("b")])).text == "two"
