"""A scripted chat model for tests: answers come from a function of the request. Tests only.

It parses and validates JSON exactly like a real provider (via ``models.jsonrepair`` and
``models.schema``), so malformed scripted answers fail the same way real ones do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from provgraph.errors import ModelError
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage
from provgraph.models.jsonrepair import parse_validated


@dataclass
class Call:
    """One request the scripted model received."""

    kind: str  # complete | json | stream
    messages: list[Message]
    schema_name: str | None = None


Script = Callable[[Call], "str | Exception"]


@dataclass
class ScriptedChatModel:
    """Answers each call with ``script(call)``: a string, or an exception to raise.

    ``pieces`` controls how a streamed answer is cut (default: words).
    """

    script: Script
    model: str = "scripted:test"
    calls: list[Call] = field(default_factory=list)
    tokens_in: int = 10
    tokens_out: int = 5

    @property
    def name(self) -> str:
        return self.model

    def _answer(self, call: Call) -> str:
        self.calls.append(call)
        out = self.script(call)
        if isinstance(out, Exception):
            raise out
        return out

    def _usage(self) -> Usage:
        return Usage(self.tokens_in, self.tokens_out, self.model)

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0,
                       max_tokens: int | None = None) -> Completion:
        return Completion(self._answer(Call("complete", list(messages))), self._usage())

    async def complete_json(self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str,
                            temperature: float = 0.0, max_tokens: int | None = None) -> JsonCompletion:
        text = self._answer(Call("json", list(messages), schema_name))
        data = parse_validated(text, schema, what=f"{self.model} ({schema_name})")
        return JsonCompletion(data, text, self._usage())

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.0,
               max_tokens: int | None = None) -> StreamResult:
        async def gen() -> AsyncIterator[str | Usage]:
            text = self._answer(Call("stream", list(messages)))
            for i, word in enumerate(text.split(" ")):
                yield word if i == 0 else " " + word
            yield self._usage()

        return StreamResult(gen(), self.model)

    async def aclose(self) -> None:
        return None


def by_schema(answers: dict[str, str | Exception | list[str | Exception]], default: str | Exception = "") -> Script:
    """A script answering by JSON schema name (or ``"complete"``/``"stream"``); lists are consumed in order."""

    def script(call: Call) -> str | Exception:
        key = call.schema_name or call.kind
        value = answers.get(key, default)
        if isinstance(value, list):
            return value.pop(0) if value else default
        return value

    return script


def failing(exc: Exception | None = None) -> Script:
    """A script whose every call raises (default: an unreachable endpoint)."""
    from provgraph.errors import ModelUnavailable

    return lambda call: exc or ModelUnavailable("scripted: endpoint unreachable")


__all__ = ["Call", "ScriptedChatModel", "by_schema", "failing", "ModelError"]
