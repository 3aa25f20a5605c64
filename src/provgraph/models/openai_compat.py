"""ChatModel over any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp…).

Uses the official ``openai`` SDK with its own retries switched off: this module retries
connection errors, 429 and 5xx with jittered exponential backoff (honouring ``Retry-After``),
never other 4xx, never a timeout (the same request would take as long again) and never a refused
connection (nothing listens there). JSON is asked
for as :mod:`provgraph.models.structured` negotiates per endpoint; every call carries a
``max_tokens`` (the schema's budget, capped). A semaphore bounds the requests in flight.
Errors leave as :class:`ModelUnavailable` (unreachable, timed out, still failing after retries)
or :class:`ModelError` (refused), naming provider, endpoint, model and cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from provgraph.errors import ModelError, ModelUnavailable
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage, estimated_usage
from provgraph.models.bounds import ensure_grammar_safe, output_tokens
from provgraph.models.jsonrepair import json_completion
from provgraph.models.retry import RETRY_STATUSES, RetryPolicy, retry_after_seconds
from provgraph.models.structured import MODES, Mode, apply_mode, is_format_rejection, remember, remembered_mode

__all__ = ["OpenAIChatModel", "status_detail", "not_json"]

T = TypeVar("T")

DEFAULT_MAX_TOKENS = 1024
"""Output tokens of a call when neither the caller nor the schema's budget asks for fewer."""


class _FormatRejected(Exception):
    """The server refused the structured-output part of a request (internal)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error

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
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        if not model:
            raise ModelError("openai provider needs a model name: set PROVGRAPH_LLM_MODEL")
        self._model = model
        self._base_url = base_url
        self._api_key = api_key or "not-needed"
        self._timeout = timeout
        self._retry = retry or RetryPolicy(max_retries=max_retries)
        self._concurrency = max(1, concurrency)
        self._max_tokens = max(16, max_tokens)
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
        text = _message_text(response)
        return Completion(text, self._usage(response, request, text))

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
        ensure_grammar_safe(schema, schema_name)
        base = self._request(messages, temperature, output_tokens(schema, self._max_tokens, max_tokens))
        mode = remembered_mode(self.base_url, self._model)
        while True:
            request = apply_mode(base, mode, schema, schema_name)
            try:
                response = await self._with_retries(request, lambda: self._create(request))
                break
            except _FormatRejected as rejected:
                if mode == MODES[-1]:
                    raise self._translate(rejected.error, 1) from rejected.error
                refused = mode
                mode = MODES[MODES.index(mode) + 1]
                remember(self.base_url, self._model, mode, f"{refused} refused: {status_detail(rejected.error)}")
        text = _message_text(response)
        return json_completion(text, self._usage(response, request, text), schema, model=self.name,
                               schema_name=schema_name, cut_off=_finish_reason(response) == "length")

    @property
    def structured_mode(self) -> Mode:
        """How JSON is asked of this endpoint now (``json_schema`` until the server refused it)."""
        return remembered_mode(self.base_url, self._model)

    def stream(
        self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> StreamResult:
        """Stream text pieces; ``usage`` comes from the server's final chunk (estimated if it sends none).

        Failures before the first piece are retried; a stream broken later raises ModelUnavailable.
        """
        request = self._request(messages, temperature, max_tokens)
        request["stream"] = True
        if "stream_options" not in self._unsupported:
            request["stream_options"] = {"include_usage": True}
        return StreamResult(self._stream_source(request), model=self.name, prompt=_prompt_text(request))

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
        limit = "max_completion_tokens" if "max_tokens" in self._unsupported else "max_tokens"
        request[limit] = max_tokens or self._max_tokens
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
                if "response_format" in request and is_format_rejection(exc.status_code, _error_text(exc)):
                    raise _FormatRejected(exc) from exc
                if exc.status_code not in RETRY_STATUSES or attempt >= self._retry.max_retries:
                    raise self._translate(exc, attempt + 1) from exc
                wait = self._retry.delay(attempt, retry_after_seconds(exc.response.headers))
            except openai.APITimeoutError as exc:
                raise self._translate(exc, attempt + 1) from exc
            except openai.APIConnectionError as exc:
                if attempt >= self._retry.max_retries or _refused(exc):
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
            except openai.APITimeoutError as exc:
                raise self._translate(exc, attempt + 1) from exc
            except openai.APIConnectionError as exc:
                if started or attempt >= self._retry.max_retries or _refused(exc):
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
        """Adapt a request to an error naming one of its optional fields, for good; True to resend at once.

        ``stream_options`` is dropped; ``max_tokens`` becomes ``max_completion_tokens`` when the
        server asks for that (OpenAI's reasoning models).
        """
        text = _error_text(exc).lower()
        if exc.status_code < 400:
            return False
        if "stream_options" in request and "stream_options" in text:
            self._unsupported.add("stream_options")
            del request["stream_options"]
            return True
        if "max_tokens" in request and "max_completion_tokens" in text:
            self._unsupported.add("max_tokens")
            request["max_completion_tokens"] = request.pop("max_tokens")
            return True
        return False

    def _translate(self, exc: Exception, attempts: int) -> ModelError:
        import openai

        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelUnavailable(self._describe(
                f"timed out after {self._timeout:g} s{tries} (not retried: the same request would take as long)"))
        if isinstance(exc, openai.APIConnectionError):
            if _refused(exc):
                return ModelUnavailable(self._describe(
                    "connection refused (nothing listens there: is the server running, is the URL right?)"))
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

    def _usage(self, response: Any, request: dict[str, Any] | None = None, text: str = "") -> Usage:
        usage = getattr(response, "usage", None)
        if usage is None or not (usage.prompt_tokens or usage.completion_tokens):
            if request is None:
                return Usage(0, 0, self.name)
            return estimated_usage(_prompt_text(request), text, self.name)
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


def _error_text(exc: Any) -> str:
    return f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}"


def _prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []))


def _finish_reason(response: Any) -> str | None:
    choices = getattr(response, "choices", None) or []
    return getattr(choices[0], "finish_reason", None) if choices else None


def _message_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    return choices[0].message.content or ""


def _refused(exc: BaseException) -> bool:
    """Whether the connection was refused: nothing listens at the address, so trying again at once would too."""
    seen: set[int] = set()
    inner: BaseException | None = exc
    while inner is not None and id(inner) not in seen:
        if isinstance(inner, ConnectionRefusedError):
            return True
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__
    return False


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return _short(str(inner) if inner is not None and str(inner) else str(exc))


def _short(text: str, size: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"
