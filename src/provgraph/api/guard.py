"""The ASGI guard in front of every ``/api/v1`` route: token → user, per-token concurrency, body size.

The auth mode is fixed when the server starts and can only close: a server started with tokens (or
bound beyond loopback) requires one on every request for the rest of its life, so revoking the last
token or deleting ``tokens.json`` leaves every request refused, never open. A server started open
(loopback, no token yet) acts as one user until the first token is created, and requires tokens from
then on. Refusals use the one error shape: 401 bad or missing token, 413 body too large, 429 too many
requests in flight for the token (WebSocket messages count too: api/budget.py), 503 token file unreadable.
"""

from __future__ import annotations

from typing import Any

from provgraph.api.errors import refuse
from provgraph.api.origin import header
from provgraph.api.state import ServerState
from provgraph.errors import ConfigError

__all__ = ["Guard"]

_OPEN = ("/api/v1/openapi.json", "/api/v1/docs", "/api/v1/health")


def _token(scope: dict[str, Any]) -> str | None:
    auth = header(scope, b"authorization")
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

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or not scope["path"].startswith(("/api/v1", "/v1/")) \
                or scope["path"] in _OPEN:
            await self.app(scope, receive, send)
            return
        await self._call(scope, receive, send)

    def _user(self, token: str | None) -> str | None:
        """The user a request acts as; None when it must be refused. Raises ConfigError (token file unreadable)."""
        tokens = self.state.tokens
        if not self.state.require_tokens and tokens.enabled():
            self.state.require_tokens = True  # the first token closes an open server for good
        if not self.state.require_tokens:
            return self.state.anonymous_user
        return tokens.user_of(token) if token else None

    async def _call(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        token = _token(scope)
        try:
            user = self._user(token)
        except ConfigError as exc:
            await refuse(scope, send, 503, "ConfigError", str(exc))
            return
        if user is None:
            await refuse(scope, send, 401, "Unauthorized", "missing or invalid token: send 'Authorization: Bearer "
                         "TOKEN' (create one with: provgraph tokens create -U USER)", [(b"www-authenticate", b"Bearer")])
            return
        scope["provgraph.user"] = user
        key = scope["provgraph.budget"] = token or ""
        if scope["type"] == "websocket":  # each message on the socket takes its own slot (api/socket.py)
            await self.app(scope, receive, send)
            return
        limit = int(self.state.limits.max_body_mb * 2**20)
        length = header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await refuse(scope, send, 413, "PayloadTooLarge",
                         f"request body of {int(length):,} bytes is over the limit of {limit:,} bytes")
            return
        if not self.state.budget.take(key):
            await refuse(scope, send, 429, "TooManyRequests", self.state.budget.refusal())
            return
        try:
            await _Bounded(self.app, limit).run(scope, receive, send)
        finally:
            self.state.budget.give(key)


class _Bounded:
    """One HTTP request whose body may not pass ``limit`` bytes, however it is sent (chunked included).

    Past the limit the request is answered 413 here; the route then reads a disconnect and whatever
    it would answer is dropped.
    """

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit
        self.received = 0
        self.started = False
        self.refused = False

    async def run(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def bounded_receive() -> Any:
            if self.refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message.get("type") == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.limit:
                    self.refused = True
                    if not self.started:
                        self.started = True
                        await refuse(scope, send, 413, "PayloadTooLarge",
                                     f"request body is over the limit of {self.limit:,} bytes")
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Any) -> None:
            if self.refused:
                return
            if message.get("type") == "http.response.start":
                self.started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracking_send)
        except Exception:
            if not self.refused:
                raise  # a route that failed on its own account; otherwise the 413 has been sent
