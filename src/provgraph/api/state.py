"""What the server shares between requests: base settings, open collections, tokens, jobs, limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from provgraph.api.pool import RuntimePool
from provgraph.api.tokens import TokenStore
from provgraph.config import Settings

__all__ = ["Limits", "ServerState", "state_of", "user_of", "request_settings"]


@dataclass(frozen=True)
class Limits:
    """Request limits; each refusal is a clear 4xx."""

    max_body_mb: float = 64.0  # request bodies and uploads (413)
    concurrency_per_token: int = 8  # requests in flight per token (429)
    timeout_s: float = 300.0  # a query's whole run (408)


@dataclass
class ServerState:
    """The server's shared parts, built once by ``create_app``."""

    settings: Settings
    limits: Limits = field(default_factory=Limits)
    pool: RuntimePool = field(default_factory=RuntimePool)
    tokens: TokenStore = field(init=False)
    anonymous_user: str = "default"
    jobs: Any = None

    def __post_init__(self) -> None:
        self.tokens = TokenStore(self.settings.home)

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
