"""ChatModel running a GGUF file in-process with llama-cpp-python (extra ``provgraph[local]``).

llama-cpp is imported on first use. Calls run in a worker thread, one at a time (a llama
context is not thread-safe). On machines with two cores or fewer it uses one thread: with two
threads and a busy core generation slows down by an order of magnitude.
Token usage of streams is estimated (and marked so): prompt tokens by tokenizing the messages,
one output token per streamed piece.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from provgraph.errors import ConfigError, ModelError
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage
from provgraph.models.bounds import ensure_grammar_safe, output_tokens
from provgraph.models.jsonrepair import json_completion
from provgraph.models.schema import with_schema_instruction

__all__ = ["LocalChatModel", "default_threads"]

T = TypeVar("T")

_INSTALL = "pip install 'provgraph[local]'"
_DONE = object()


def default_threads() -> int:
    """1 on machines with two cores or fewer, else half the cores."""
    cores = os.cpu_count() or 1
    return 1 if cores <= 2 else max(1, cores // 2)


class LocalChatModel:
    """A GGUF model served in-process; ``name`` is ``local:<file stem>``.

    Raises :class:`ConfigError` when the file is missing or llama-cpp-python is not installed
    (on first call, naming ``pip install 'provgraph[local]'``).
    """

    def __init__(
        self,
        *,
        gguf_path: Path,
        n_threads: int | None = None,
        n_ctx: int = 4096,
        default_max_tokens: int = 1024,
        seed: int = 0,
    ) -> None:
        path = Path(gguf_path).expanduser()
        if not path.is_file():
            raise ConfigError(f"local LLM: GGUF file {path} not found (set PROVGRAPH_LLM_GGUF_PATH)")
        self._path = path
        self._threads = n_threads or default_threads()
        self._n_ctx = n_ctx
        self._default_max_tokens = default_max_tokens
        self._seed = seed
        self._llama: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``local:<gguf file stem>``."""
        return f"local:{self._path.stem}"

    async def complete(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> Completion:
        """One completion, generated in a worker thread."""
        response = await self._run(
            lambda llm: llm.create_chat_completion(**self._request(messages, temperature, max_tokens))
        )
        return Completion(_text(response), self._usage(response))

    async def complete_json(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> JsonCompletion:
        """JSON constrained by llama.cpp's grammar from ``schema``, which must be grammar-safe
        (:mod:`provgraph.models.bounds`: an unbounded one can crash llama.cpp, so it raises
        ModelError before loading anything). Raises MalformedOutput."""
        ensure_grammar_safe(schema, schema_name)
        budget = output_tokens(schema, self._default_max_tokens, max_tokens)
        request = self._request(messages, temperature, budget)
        request["messages"] = with_schema_instruction(request["messages"], schema)
        request["response_format"] = {"type": "json_object", "schema": schema}
        response = await self._run(lambda llm: llm.create_chat_completion(**request))
        cut_off = ((response.get("choices") or [{}])[0]).get("finish_reason") == "length"
        return json_completion(_text(response), self._usage(response), schema, model=self.name,
                               schema_name=schema_name, cut_off=cut_off)

    def stream(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> StreamResult:
        """Stream pieces as llama.cpp produces them."""
        return StreamResult(self._stream_source(messages, temperature, max_tokens), model=self.name)

    async def aclose(self) -> None:
        """Free the model; idempotent (it is reloaded on next use)."""
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None and hasattr(llama, "close"):
            llama.close()

    # -- internals -------------------------------------------------------------------------------

    def _request(self, messages: Sequence[Message], temperature: float, max_tokens: int | None) -> dict[str, Any]:
        return {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens or self._default_max_tokens,
            "seed": self._seed,
        }

    def _load(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp  # type: ignore[import-not-found]
            except ImportError as exc:
                raise ConfigError(f"the local LLM needs llama-cpp-python: {_INSTALL}") from exc
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(self._path),
                    n_ctx=self._n_ctx,
                    n_threads=self._threads,
                    seed=self._seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(self._describe(f"cannot load the model: {exc}")) from exc
        return self._llama

    async def _run(self, call: Callable[[Any], T]) -> T:
        def work() -> T:
            with self._lock:
                llm = self._load()
                try:
                    return call(llm)
                except (ValueError, RuntimeError, OSError) as exc:
                    raise ModelError(self._describe(str(exc))) from exc

        return await asyncio.to_thread(work)

    async def _stream_source(
        self, messages: Sequence[Message], temperature: float, max_tokens: int | None
    ) -> AsyncIterator[str | Usage]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        request = {**self._request(messages, temperature, max_tokens), "stream": True}

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                with self._lock:
                    llm = self._load()
                    prompt = "\n".join(m.content for m in messages).encode("utf-8")
                    input_tokens = len(llm.tokenize(prompt, add_bos=True))
                    produced = 0
                    for chunk in llm.create_chat_completion(**request):
                        if stop.is_set():
                            break
                        piece = (chunk.get("choices") or [{}])[0].get("delta", {}).get("content")
                        if piece:
                            produced += 1
                            put(piece)
                    put(Usage(input_tokens, produced, self.name, estimated=True))
            except ConfigError as exc:
                put(exc)
            except (ValueError, RuntimeError, OSError) as exc:
                put(ModelError(self._describe(str(exc))))
            finally:
                put(_DONE)

        worker = threading.Thread(target=work, name="provgraph-local-llm", daemon=True)
        worker.start()
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    def _describe(self, cause: str) -> str:
        return f"local provider, model {self._path}: {cause}"

    def _usage(self, response: dict[str, Any]) -> Usage:
        usage = response.get("usage") or {}
        return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), self.name)


def _text(response: dict[str, Any]) -> str:
    choices = response.get("choices") or [{}]
    return (choices[0].get("message") or {}).get("content") or ""
