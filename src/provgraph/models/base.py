"""The model contracts: ``ChatModel`` (async LLM) and ``Embedder`` (sync text → vectors).

"No LLM" is a state, not a model: ``build_chat_model`` returns ``None`` and callers check
``if llm is None``. Nothing here raises at call time because no LLM is configured.

Backends satisfy the protocols structurally (no inheritance) and translate their SDK's errors
into :mod:`provgraph.errors` at the boundary.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Role",
    "Message",
    "Usage",
    "Completion",
    "JsonCompletion",
    "StreamResult",
    "estimate_tokens",
    "estimated_usage",
    "ChatModel",
    "Embedder",
    "system",
    "user",
    "assistant",
]

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: Role
    content: str


def system(content: str) -> Message:
    """A system message."""
    return Message("system", content)


def user(content: str) -> Message:
    """A user message."""
    return Message("user", content)


def assistant(content: str) -> Message:
    """An assistant message."""
    return Message("assistant", content)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens spent by one call; ``model`` is the provider-qualified model name.

    ``estimated`` is true when the server reported no usage and the counts were estimated
    from the text (:func:`estimate_tokens`).
    """

    input_tokens: int
    output_tokens: int
    model: str
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens, self.model,
                     self.estimated or other.estimated)


def estimate_tokens(text: str) -> int:
    """A rough token count for usage the server did not report: one token per 4 characters.

    >>> estimate_tokens("Marie Curie discovered polonium")
    8
    """
    return (len(text) + 3) // 4


def estimated_usage(prompt: str, output: str, model: str) -> Usage:
    """Usage estimated from the prompt and output text, marked as estimated."""
    return Usage(estimate_tokens(prompt), estimate_tokens(output), model, estimated=True)


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished text completion."""

    text: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class JsonCompletion:
    """A JSON completion: ``data`` is parsed and validated against the asked schema."""

    data: Any
    text: str
    usage: Usage


@dataclass(eq=False)
class StreamResult:
    """Async iterator over text pieces; ``usage`` and ``text`` are complete once it ends.

    Backends feed it an async iterator yielding ``str`` pieces and, at most once, a ``Usage``.
    If none arrives, ``usage`` is estimated at the end from ``prompt`` and the streamed text
    (marked ``estimated``). Before the end, ``usage`` is ``None``.
    """

    source: AsyncIterator[str | Usage]
    model: str
    prompt: str = ""
    usage: Usage | None = None
    done: bool = False
    _parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text streamed so far (all of it once ``done``)."""
        return "".join(self._parts)

    def __aiter__(self) -> StreamResult:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                item = await self.source.__anext__()
            except StopAsyncIteration:
                self._finish()
                raise
            if isinstance(item, Usage):
                self.usage = item
                continue
            if item:
                self._parts.append(item)
                return item

    async def aclose(self) -> None:
        """Stop early and release the connection; usage stays as known so far (estimated if none)."""
        closer = getattr(self.source, "aclose", None)
        if closer is not None:
            await closer()
        self._finish()

    async def collect(self) -> Completion:
        """Consume the rest of the stream and return it as one completion."""
        async for _ in self:
            pass
        assert self.usage is not None
        return Completion(self.text, self.usage)

    def _finish(self) -> None:
        self.done = True
        if self.usage is None:
            self.usage = estimated_usage(self.prompt, self.text, self.model)


@runtime_checkable
class ChatModel(Protocol):
    """An LLM behind any provider. Calls are independent and safe to run concurrently.

    Every method raises :class:`~provgraph.errors.ModelUnavailable` when the endpoint cannot be
    reached (after retries), :class:`~provgraph.errors.ModelError` when it refuses the request.
    """

    @property
    def name(self) -> str:
        """``provider:model``, e.g. ``openai:gpt-4o-mini``; recorded as ``tg:llmModel``."""
        ...

    async def complete(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> Completion:
        """Complete the conversation; not idempotent (sampling)."""
        ...

    async def complete_json(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> JsonCompletion:
        """Complete as JSON valid against ``schema``; raises MalformedOutput (with the raw text) otherwise.

        ``max_tokens`` only lowers the bound the schema and the backend's own limit set."""
        ...

    def stream(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> StreamResult:
        """Stream the completion; the request starts on first iteration."""
        ...

    async def aclose(self) -> None:
        """Release connections; idempotent."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Text → float32 vectors with L2-normalised rows (cosine = dot product). Sync: local and fast."""

    @property
    def name(self) -> str:
        """``backend:model``; recorded by vector indexes and as ``tg:embeddingModel``."""
        ...

    @property
    def dimension(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches; shape ``(len(texts), dimension)``. Deterministic."""
        ...
