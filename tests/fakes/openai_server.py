"""A real HTTP server on 127.0.0.1 speaking enough of the OpenAI API for provider tests.

Scripted per test: ``push()`` replies, consumed in order by ``/v1/chat/completions``; when the
queue is empty ``script(request)`` answers (if given, see :func:`by_kind`), else the ``default`` reply.
A reply with a ``gate`` waits until the test sets it, so a test sees what happens before it.
``/v1/embeddings`` answers with deterministic vectors unless a reply is queued. Every request is recorded with its arrival
time, and the server tracks the most requests it had in flight at once.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeOpenAIServer",
    "Reply",
    "Recorded",
    "chat",
    "chat_stream",
    "error",
    "fake_vector",
    "by_kind",
    "request_kind",
]


@dataclass
class Reply:
    """One scripted response: JSON ``body``, or SSE ``events`` (``[DONE]`` is appended)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    events: list[dict[str, Any]] | None = None
    event_delay: float = 0.0
    content_type: str = "application/json"
    gate: threading.Event | None = None  # the reply waits until it is set (at most 60 s)
    after_event: Callable[[int], None] | None = None  # called after SSE event i is flushed (a test holds it there)


@dataclass
class Recorded:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    at: float


def chat(text: str, *, prompt_tokens: int = 11, completion_tokens: int = 7, delay: float = 0.0) -> Reply:
    """A chat completion answering ``text``."""
    return Reply(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
        delay=delay,
    )


def chat_stream(pieces: list[str], *, usage: tuple[int, int] | None = (11, 7), event_delay: float = 0.0) -> Reply:
    """A streamed chat completion sending ``pieces``; a final usage chunk unless ``usage`` is None."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    events += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage is not None:
        events.append(
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
            }
        )
    return Reply(events=events, event_delay=event_delay)


def error(status: int, message: str, *, headers: dict[str, str] | None = None, param: str | None = None) -> Reply:
    """An OpenAI-style error response."""
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}},
        headers=headers or {},
    )


def fake_vector(text: str, dimension: int) -> list[float]:
    """A deterministic, text-dependent vector."""
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % len(digest)] / 255.0) - 0.5) for i in range(dimension)]


def request_kind(recorded: Recorded) -> str:
    """``stream``, the JSON schema's name, or ``complete`` for a chat request (as ScriptedChatModel names calls)."""
    body = recorded.body if isinstance(recorded.body, dict) else {}
    if body.get("stream"):
        return "stream"
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    return str(schema.get("name") or "complete")


Answer = str | Reply


def by_kind(answers: dict[str, Answer | list[Answer]], default: Answer | None = None) -> Callable[[Recorded], Reply | None]:
    """A script answering chat requests by :func:`request_kind` (lists are consumed in order, then
    ``default``); text becomes a completion, streamed when the request asks for a stream."""
    lock = threading.Lock()

    def script(recorded: Recorded) -> Reply | None:
        if not recorded.path.endswith("/chat/completions"):
            return None
        kind = request_kind(recorded)
        with lock:
            value = answers.get(kind, default)
            answer = (value.pop(0) if value else default) if isinstance(value, list) else value
        if answer is None or isinstance(answer, Reply):
            return answer
        return chat_stream(answer.split(" ")[:1] + [" " + w for w in answer.split(" ")[1:]]) if kind == "stream" \
            else chat(answer)

    return script


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer() as server:``; point clients at ``server.base_url``."""

    def __init__(self, *, default: Reply | None = None, embedding_dimension: int = 8,
                 script: Callable[[Recorded], Reply | None] | None = None) -> None:
        self.default = default
        self.script = script
        self.embedding_dimension = embedding_dimension
        self.requests: list[Recorded] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def chat_requests(self) -> list[Recorded]:
        """The chat-completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> FakeOpenAIServer:
        """Listen on a free loopback port, serving from a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still sleeping are abandoned."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # called from handler threads
    def _enter(self, recorded: Recorded) -> Reply | None:
        with self._lock:
            self.requests.append(recorded)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self._queue.popleft() if self._queue else None

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._serve(None)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._serve(body)

    def _serve(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        recorded = Recorded(self.command, self.path, headers, body, time.monotonic())
        reply = self.fake._enter(recorded)
        try:
            if reply is None:
                reply = self._fallback(recorded)
            if reply.gate is not None:
                reply.gate.wait(timeout=60)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.events is not None:
                self._send_events(reply)
            else:
                self._send_json(reply)
        except OSError:
            pass  # the client gave up (timeout) and closed the connection
        finally:
            self.fake._leave()

    def _fallback(self, recorded: Recorded) -> Reply:
        if self.fake.script is not None:
            scripted = self.fake.script(recorded)
            if scripted is not None:
                return scripted
        if recorded.path.endswith("/embeddings") and isinstance(recorded.body, dict):
            inputs = recorded.body.get("input")
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            dim = self.fake.embedding_dimension
            return Reply(
                body={
                    "object": "list",
                    "model": recorded.body.get("model"),
                    "data": [
                        {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                        for i, t in enumerate(texts)
                    ],
                    "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
                }
            )
        if self.fake.default is not None:
            return self.fake.default
        return error(500, "fake server: no scripted reply left")

    def _send_json(self, reply: Reply) -> None:
        payload = reply.body if isinstance(reply.body, (bytes, str)) else json.dumps(reply.body)
        data = payload.encode() if isinstance(payload, str) else payload
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_events(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        for i, event in enumerate(reply.events or []):
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
            if reply.after_event is not None:
                reply.after_event(i)
            if reply.event_delay:
                time.sleep(reply.event_delay)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
