"""The ASGI guard in front of every ``/api/v1`` route: token → user, per-token concurrency, body size.

Without any token stored the server is open and every request acts as one user (loopback only:
``serve`` refuses other hosts then). Refusals use the one error shape: 401 bad or missing token,
413 body too large, 429 too many requests in flight for the token.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from provgraph.api.errors import error_body
from provgraph.api.state import ServerState

__all__ = ["Guard"]

_OPEN = ("/api/v1/openapi.json", "/api/v1/docs", "/api/v1/health")


class _TooLarge(Exception):
    pass


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _token(scope: dict[str, Any]) -> str | None:
    auth = _header(scope, b"authorization")
    if auth and auth.lower().startswith("bearer "):
        return auth[7:].strip()
    if scope["type"] == "websocket":  # browsers cannot set headers on a WebSocket
        from urllib.parse import parse_qs

        found = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return found[0] if found else None
    return None


class Guard:
    """ASGI middleware: authenticates, limits concurrency per token, bounds request bodies."""

    def __init__(self, app: Any, state: ServerState) -> None:
        self.app = app
        self.state = state
        self.in_flight: Counter[str] = Counter()

    async def _refuse(self, scope: dict[str, Any], send: Any, status: int, type_: str, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4000 + status, "reason": message[:120]})
            return
        body = json.dumps(error_body(type_, message)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or not scope["path"].startswith("/api/v1") \
                or scope["path"] in _OPEN:
            await self.app(scope, receive, send)
            return
        await self._call(scope, receive, send)

    async def _call(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        token = _token(scope)
        if self.state.tokens.enabled():
            user = self.state.tokens.user_of(token) if token else None
            if user is None:
                await self._refuse(scope, send, 401, "Unauthorized",
                                   "missing or invalid token: send 'Authorization: Bearer TOKEN' "
                                   "(create one with: provgraph tokens create -U USER)")
                return
        else:
            user = self.state.anonymous_user
        key = token or ""
        if self.in_flight[key] >= self.state.limits.concurrency_per_token:
            await self._refuse(scope, send, 429, "TooManyRequests",
                               f"more than {self.state.limits.concurrency_per_token} requests in flight "
                               "for this token: wait for one to finish")
            return
        limit = int(self.state.limits.max_body_mb * 2**20)
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await self._refuse(scope, send, 413, "PayloadTooLarge",
                               f"request body of {int(length):,} bytes is over the limit of {limit:,} bytes")
            return
        scope["provgraph.user"] = user
        received = 0
        started = False

        async def bounded_receive() -> Any:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge()
            return message

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        self.in_flight[key] += 1
        try:
            await self.app(scope, bounded_receive if scope["type"] == "http" else receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._refuse(scope, send, 413, "PayloadTooLarge",
                                   f"request body is over the limit of {limit:,} bytes")
        finally:
            self.in_flight[key] -= 1
