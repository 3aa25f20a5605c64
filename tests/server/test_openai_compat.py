"""The OpenAI-compatible chat of ``provgraph serve``, driven by the official ``openai`` client against a real server:
models, streamed and whole answers with markers, the ``provgraph`` extra field resolving to a stored trace, the
message history as the conversation, tokens and bad model names."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.server.live import LiveServer

pytestmark = pytest.mark.server


def _client(corpus_served: tuple[LiveServer, dict[str, str]], user: str = "default") -> openai.OpenAI:
    server, tokens = corpus_served
    return openai.OpenAI(base_url=server.url + "/v1", api_key=tokens[user], max_retries=0, timeout=120)


def _trace(corpus_served: tuple[LiveServer, dict[str, str]], path: str) -> dict[str, Any]:
    server, tokens = corpus_served
    response = httpx.get(server.url + path, headers={"Authorization": f"Bearer {tokens['default']}"}, timeout=60)
    response.raise_for_status()
    found: dict[str, Any] = response.json()
    return found


def test_models_name_each_collection_and_mode(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    ids = [m.id for m in _client(corpus_served).models.list()]
    assert ids == ["provgraph:corpus:graph-rag", "provgraph:corpus:document-rag", "provgraph:corpus:agent"]
    assert [m.id for m in _client(corpus_served, "bob").models.list()] == []


def test_a_streamed_answer_has_markers_and_its_extra_field_resolves_to_the_trace(
        corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    stream = _client(corpus_served).chat.completions.create(
        model="provgraph:corpus:graph-rag", stream=True,
        messages=[{"role": "user", "content": "Who discovered polonium?"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1  # it streamed
    assert "[1]" in text and "Marie Curie" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    extra = last.model_extra["provgraph"]  # type: ignore[index]
    trace = _trace(corpus_served, extra["trace"])
    assert trace["session_id"] == extra["session_id"] and trace["question"]["query"] == "Who discovered polonium?"
    assert trace["synthesis"]["content"] == text
    cited = {s["marker"]: s for s in extra["sources"] if s["marker"]}
    assert cited["[1]"]["section_title"] == "The discovery of polonium" and cited["[1]"]["length"] > 0


def test_the_message_history_is_the_conversation(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    client = _client(corpus_served)
    first = client.chat.completions.create(model="provgraph:corpus:document-rag",
                                           messages=[{"role": "user", "content": "Who discovered polonium?"}])
    answer = first.choices[0].message.content or ""
    second = client.chat.completions.create(model="provgraph:corpus:document-rag", messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Who discovered polonium?"},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "Where was she born?"}])
    extra = second.model_extra["provgraph"]  # type: ignore[index]
    assert "Warsaw" in (second.choices[0].message.content or "")
    trace = _trace(corpus_served, extra["trace"])
    assert trace["question"]["query"] == "Where was Marie Curie born?"
    assert second.usage is not None and second.usage.total_tokens == 0  # no LLM: no tokens


def test_bad_model_names_and_tokens_are_one_line_errors(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        _client(corpus_served).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert bad.value.status_code == 400
    assert bad.value.body == {"type": "InputError", "message": (
        "bad model 'gpt-4o': use provgraph:COLLECTION:MODE, MODE one of graph-rag, document-rag, agent "
        "(GET /v1/models lists them)")}
    with pytest.raises(openai.NotFoundError):  # bob has no collection "corpus"
        _client(corpus_served, "bob").chat.completions.create(model="provgraph:corpus:graph-rag",
                                                       messages=[{"role": "user", "content": "hi"}])
    server, _ = corpus_served
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0).models.list()
