"""What the server shares between requests: base settings, open collections, tokens, jobs, limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from provgraph.api.budget import Budget
from provgraph.api.origin import HostPolicy
from provgraph.api.pool import RuntimePool
from provgraph.api.tokens import TokenStore
from provgraph.config import Settings

__all__ = ["Limits", "ServerState", "state_of", "user_of", "request_settings"]


@dataclass(frozen=True)
class Limits:
    """Request limits; each refusal is a clear 4xx."""

    max_body_mb: float = 64.0  # request bodies and uploads (413)
    concurrency_per_token: int = 8  # requests in flight per token, HTTP and WebSocket together (429)
    timeout_s: float = 300.0  # a query's whole run (408)
    header_timeout_s: float = 10.0  # from a connection's first byte to its request's last header (408, closed)
    max_connections: int = 512  # open connections, HTTP and WebSocket (503, closed)
    collections_per_user: int = 8  # collections one user keeps open; the least recently used one is closed
    max_open_collections: int = 64  # collections open in the server, every user together
    max_result_rows: int = 100_000  # SPARQL solutions or triples in one answer (then "truncated")
    max_result_mb: float = 64.0  # SPARQL results' serialised size (then "truncated")


@dataclass
class ServerState:
    """The server's shared parts, built once by ``create_app``."""

    settings: Settings
    limits: Limits = field(default_factory=Limits)
    hosts: HostPolicy = field(default_factory=HostPolicy)
    pool: RuntimePool = field(init=False)
    tokens: TokenStore = field(init=False)
    budget: Budget = field(init=False)
    anonymous_user: str = "default"
    require_tokens: bool = False  # fixed at start, and never undone (fail closed); see api/guard.py
    jobs: Any = None

    def __post_init__(self) -> None:
        self.tokens = TokenStore(self.settings.home)
        self.budget = Budget(self.limits.concurrency_per_token)
        self.pool = RuntimePool(per_user=self.limits.collections_per_user, total=self.limits.max_open_collections)
        self.require_tokens = self.require_tokens or self.tokens.enabled()

    def settings_for(self, user: str, collection: str | None, **overrides: Any) -> Settings:
        """The server's settings for one request (the environment is not read again: it was at start).

        ``overrides`` come from request models that validated them; names are checked when the
        collection is opened.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        return self.settings.model_copy(update={"user": user, "collection": collection or "default", **given})


def state_of(request: Request) -> ServerState:
    """The server state of the app serving ``request``."""
    state: ServerState = request.app.state.provgraph
    return state


def user_of(request: Request) -> str:
    """The user the request acts as (set by the guard from its token)."""
    user: str = request.scope["provgraph.user"]
    return user


def request_settings(request: Request, collection: str | None = None, **overrides: Any) -> Settings:
    """Settings for one request: the server's data directory, the caller's user, the request's options."""
    return state_of(request).settings_for(user_of(request), collection, **overrides)
