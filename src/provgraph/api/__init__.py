"""The HTTP API (``provgraph serve``): FastAPI routes over the same Runtime the CLI uses.

``create_app(settings)`` builds the app; one process owns every collection's stores
(:class:`~provgraph.api.pool.RuntimePool`), any number of clients share them.
"""

from __future__ import annotations

__all__ = ["create_app"]


def create_app(*args: object, **kwargs: object) -> object:
    """The FastAPI app (imported lazily, so ``provgraph`` without ``serve`` never loads FastAPI)."""
    from provgraph.api.app import create_app as build

    return build(*args, **kwargs)  # type: ignore[arg-type]
