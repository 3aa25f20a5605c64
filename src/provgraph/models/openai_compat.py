"""ChatModel over any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp…).

Uses the official ``openai`` SDK with its own retries switched off: this module retries
connection errors, timeouts, 429 and 5xx with jittered exponential backoff (honouring
``Retry-After``), never other 4xx. A semaphore bounds the requests in flight per instance.
Errors leave as :class:`ModelUnavailable` (unreachable, timed out, still failing after retries)
or :class:`ModelError` (refused), naming provider, endpoint, model and cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from provgraph.errors import ModelError, ModelUnavailable
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage
from provgraph.models.jsonrepair import json_completion
from provgraph.models.retry import RETRY_STATUSES, RetryPolicy, retry_after_seconds
from provgraph.models.schema import with_schema_instruction

__all__ = ["OpenAIChatModel", "status_detail", "not_json"]

T = TypeVar("T")

_OPTIONAL_PARAMS = ("response_format", "stream_options")
"""Request fields some compatible servers reject; dropped (once, for good) on a 400 naming them."""

_HINTS = {
    401: "check PROVGRAPH_LLM_API_KEY",
    403: "check PROVGRAPH_LLM_API_KEY",
    404: "check PROVGRAPH_LLM_MODEL and PROVGRAPH_LLM_BASE_URL",
}


class OpenAIChatModel:
    """An OpenAI-compatible chat model; one instance per endpoint and model.

    ``retry`` defaults to ``RetryPolicy(max_retries)``. Safe for concurrent calls within an event
    loop; a new loop (e.g. a second ``asyncio.run``) gets a fresh connection pool.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        concurrency: int = 4,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not model:
            raise ModelError("openai provider needs a model name: set PROVGRAPH_LLM_MODEL")
        self._model = model
        self._base_url = base_url
        self._api_key = api_key or "not-needed"
        self._timeout = timeout
        self._retry = retry or RetryPolicy(max_retries=max_retries)
        self._concurrency = max(1, concurrency)
        self._unsupported: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def name(self) -> str:
        """``openai:<model>``."""
        return f"openai:{self._model}"

    @property
    def base_url(self) -> str:
        """The endpoint in use (the SDK default when none was given)."""
        return self._base_url or "https://api.openai.com/v1"

    async def complete(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> Completion:
        """One completion. Raises ModelUnavailable / ModelError."""
        request = self._request(messages, temperature, max_tokens)
        response = await self._with_retries(request, lambda: self._create(request))
        return Completion(_message_text(response), self._usage(response))

    async def complete_json(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> JsonCompletion:
        """JSON matching ``schema``, asked through structured output when the server has it.

        Raises MalformedOutput (``raw`` = the model's text) when the answer is not JSON or breaks
        the schema, ModelUnavailable / ModelError as :meth:`complete`.
        """
        request = self._request(messages, temperature, max_tokens)
        if "response_format" in self._unsupported:
            request["messages"] = with_schema_instruction(request["messages"], schema)
        else:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            }
            request["_schema"] = schema
        response = await self._with_retries(request, lambda: self._create(request))
        return json_completion(
            _message_text(response), self._usage(response), schema, model=self.name, schema_name=schema_name
        )

    def stream(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> StreamResult:
        """Stream text pieces; ``usage`` comes from the server's final chunk (0/0 if it sends none).

        Failures before the first piece are retried; a stream broken later raises ModelUnavailable.
        """
        request = self._request(messages, temperature, max_tokens)
        request["stream"] = True
        if "stream_options" not in self._unsupported:
            request["stream_options"] = {"include_usage": True}
        return StreamResult(self._stream_source(request), model=self.name)

    async def aclose(self) -> None:
        """Close the connection pool; idempotent."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    # -- internals -------------------------------------------------------------------------------

    def _request(self, messages: Sequence[Message], temperature: float, max_tokens: int | None) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        return request

    def _state(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._semaphore is None:
            try:
                from openai import AsyncOpenAI
            except ImportError as exc:  # pragma: no cover - openai is a core dependency
                raise ModelError("the openai package is missing: pip install openai") from exc
            self._client = AsyncOpenAI(
                api_key=self._api_key, base_url=self._base_url, timeout=self._timeout, max_retries=0
            )
            self._semaphore = asyncio.Semaphore(self._concurrency)
            self._loop = loop
        return self._client, self._semaphore

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[Any]:
        client, semaphore = self._state()
        async with semaphore:
            yield client

    async def _create(self, request: dict[str, Any]) -> Any:
        async with self._slot() as client:
            body = {k: v for k, v in request.items() if not k.startswith("_")}
            response = await client.chat.completions.create(**body, timeout=self._timeout)
        if isinstance(response, (str, bytes)):  # the SDK returns a non-JSON body (e.g. text/html) as text
            raise ModelError(self._describe(not_json(response)))
        return response

    async def _with_retries(self, request: dict[str, Any], call: Callable[[], Awaitable[T]]) -> T:
        import openai

        attempt = 0
        while True:
            try:
                return await call()
            except openai.APIStatusError as exc:
                if self._drop_rejected(exc, request):
                    continue
                if exc.status_code not in RETRY_STATUSES or attempt >= self._retry.max_retries:
                    raise self._translate(exc, attempt + 1) from exc
                wait = self._retry.delay(attempt, retry_after_seconds(exc.response.headers))
            except openai.APIConnectionError as exc:
                if attempt >= self._retry.max_retries:
                    raise self._translate(exc, attempt + 1) from exc
                wait = self._retry.delay(attempt)
            except openai.OpenAIError as exc:
                raise self._translate(exc, attempt + 1) from exc
            except ValueError as exc:  # HTTP 200 whose body is not JSON (an HTML page, a proxy's login form…)
                raise ModelError(self._describe(not_json(exc))) from exc
            await asyncio.sleep(wait)
            attempt += 1

    async def _stream_source(self, request: dict[str, Any]) -> AsyncIterator[str | Usage]:
        import openai

        attempt = 0
        while True:
            started = events = False
            try:
                async with self._slot() as client:
                    body = {k: v for k, v in request.items() if not k.startswith("_")}
                    stream = await client.chat.completions.create(**body, timeout=self._timeout)
                    try:
                        async for chunk in stream:
                            events = True
                            if getattr(chunk, "usage", None) is not None:
                                yield self._usage(chunk)
                            for choice in chunk.choices or ():
                                piece = getattr(choice.delta, "content", None)
                                if piece:
                                    started = True
                                    yield piece
                    finally:
                        await stream.close()
                if not events:  # an HTML page or any non-SSE body parses as no events at all
                    raise ModelError(self._describe(not_json(None)))
                return
            except openai.APIStatusError as exc:
                if not started and self._drop_rejected(exc, request):
                    continue
                if started or exc.status_code not in RETRY_STATUSES or attempt >= self._retry.max_retries:
                    raise self._translate(exc, attempt + 1) from exc
                wait = self._retry.delay(attempt, retry_after_seconds(exc.response.headers))
            except openai.APIConnectionError as exc:
                if started or attempt >= self._retry.max_retries:
                    raise self._translate(exc, attempt + 1) from exc
                wait = self._retry.delay(attempt)
            except openai.OpenAIError as exc:
                raise self._translate(exc, attempt + 1) from exc
            except (ModelError, GeneratorExit):
                raise
            except Exception as exc:  # transport errors surfacing mid-stream (e.g. a dropped connection)
                raise ModelUnavailable(self._describe(f"stream interrupted: {exc!r}")) from exc
            await asyncio.sleep(wait)
            attempt += 1

    def _drop_rejected(self, exc: Any, request: dict[str, Any]) -> bool:
        """On a 400 that names an optional field we sent, drop it for good; True to resend at once."""
        if exc.status_code != 400:
            return False
        text = f"{exc.message} {exc.body}".lower()
        for param in _OPTIONAL_PARAMS:
            if param in request and (param in text or (param == "response_format" and "json_schema" in text)):
                self._unsupported.add(param)
                del request[param]
                schema = request.pop("_schema", None)
                if param == "response_format" and schema is not None:
                    request["messages"] = with_schema_instruction(request["messages"], schema)
                return True
        return False

    def _translate(self, exc: Exception, attempts: int) -> ModelError:
        import openai

        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelUnavailable(self._describe(f"timed out after {self._timeout:g} s{tries}"))
        if isinstance(exc, openai.APIConnectionError):
            return ModelUnavailable(self._describe(f"cannot connect ({_cause(exc)}){tries}"))
        if isinstance(exc, openai.APIStatusError):
            detail = f"HTTP {exc.status_code}: {status_detail(exc)}"
            if exc.status_code in RETRY_STATUSES:
                return ModelUnavailable(self._describe(detail + tries))
            hint = _HINTS.get(exc.status_code)
            return ModelError(self._describe(detail + (f" ({hint})" if hint else "")))
        return ModelError(self._describe(_short(str(exc))))

    def _describe(self, cause: str) -> str:
        return f"openai provider at {self.base_url}, model {self._model}: {cause}"

    def _usage(self, response: Any) -> Usage:
        usage = getattr(response, "usage", None)
        if usage is None:
            return Usage(0, 0, self.name)
        return Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0), self.name)


def not_json(reply: object) -> str:
    """The cause for an HTTP 200 reply that is not the API's JSON (or event stream): ``reply`` is the
    body the SDK handed back as text, or the JSON decoding error (which holds the body)."""
    doc = getattr(reply, "doc", reply)
    doc = doc.decode("utf-8", "replace") if isinstance(doc, bytes) else doc
    begins = f" (it begins {_short(doc, 40)!r})" if isinstance(doc, str) and doc.strip() else ""
    return (f"HTTP 200 but the reply is not an OpenAI-compatible API response{begins}; "
            "check the base URL (usually ending in /v1)")


def status_detail(exc: Any) -> str:
    """The server's own error message from an SDK status error (without the SDK's prefix)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return _short(message)
    return _short(str(getattr(exc, "message", exc)))


def _message_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    return choices[0].message.content or ""


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return _short(str(inner) if inner is not None and str(inner) else str(exc))


def _short(text: str, size: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"
