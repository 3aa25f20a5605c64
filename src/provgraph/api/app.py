"""``create_app``: the FastAPI app of ``provgraph serve`` (routes under ``/api/v1``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request

from provgraph import __version__
from provgraph.api import routes_conversations, routes_data, routes_rag
from provgraph.api.errors import install_handlers
from provgraph.store.sparql_run import cancel_all
from provgraph.api.connections import quiet_accept_errors
from provgraph.api.guard import Guard
from provgraph.api.origin import HostPolicy, OriginGuard
from provgraph.api.schemas import TokenUser
from provgraph.api.state import Limits, ServerState, user_of
from provgraph.config import Settings

__all__ = ["create_app"]

PREFIX = "/api/v1"


def create_app(settings: Settings, *, limits: Limits | None = None, anonymous_user: str = "default",
               hosts: HostPolicy | None = None, require_tokens: bool = False,
               on_stop: Callable[[str], None] | None = None) -> FastAPI:
    """The app over the data directory of ``settings``; without tokens every request acts as ``anonymous_user``.

    With ``require_tokens`` (a server bound beyond loopback), or when a token exists now, every
    request needs a token for the life of the app. ``hosts`` names the server (the bound address and
    allowed host names; loopback names always). ``on_stop`` hears one line once shutdown has closed
    every collection.
    """
    state = ServerState(settings, limits=limits or Limits(), hosts=hosts or HostPolicy(),
                        anonymous_user=anonymous_user, require_tokens=require_tokens)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        quiet_accept_errors(asyncio.get_running_loop())
        yield
        cancel_all()  # running SPARQL queries stop at their next solution, so they do not hold collections
        if state.jobs is not None:
            await state.jobs.shutdown()
        closed, running = state.pool.close()  # every collection flushed and closed: consistent on disk
        if on_stop is not None:
            unfinished = f" ({running} request(s) still running after {state.pool.close_wait_s:g} s)" if running else ""
            on_stop(f"provgraph stopped: {closed} collection(s) flushed and closed{unfinished}")

    app = FastAPI(
        title="provgraph", version=__version__, lifespan=lifespan,
        description="Explainable knowledge-graph RAG over HTTP: the CLI's commands, streamed explain events.",
        openapi_url=f"{PREFIX}/openapi.json", docs_url=None, redoc_url=None,  # docs: api/viewer.py
    )
    app.state.provgraph = state
    install_handlers(app)
    app.include_router(routes_data.router, prefix=PREFIX)
    app.include_router(routes_rag.router, prefix=PREFIX)
    app.include_router(routes_conversations.router, prefix=PREFIX)
    _extras(app, state)

    @app.get(f"{PREFIX}/health", tags=["server"])
    def health() -> dict[str, Any]:
        """Liveness (no token needed)."""
        return {"status": "ok", "version": __version__}

    @app.get(f"{PREFIX}/whoami", response_model=TokenUser, tags=["server"])
    def whoami(request: Request) -> dict[str, str]:
        """The user the request's token acts as."""
        return {"user": user_of(request)}

    app.add_middleware(Guard, state=state)  # type: ignore[arg-type]
    app.add_middleware(OriginGuard, policy=state.hosts)  # type: ignore[arg-type]  # outermost: every path
    return app


def _extras(app: FastAPI, state: ServerState) -> None:
    """Routes that live in their own modules and may be absent while being built."""
    import importlib

    for name in ("routes_jobs", "socket", "remote", "routes_records", "viewer", "routes_backup", "routes_explore", "routes_loads",
                 "routes_openai", "routes_communities"):
        try:
            module = importlib.import_module(f"provgraph.api.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"provgraph.api.{name}":
                raise
            continue
        module.install(app, state, PREFIX)
