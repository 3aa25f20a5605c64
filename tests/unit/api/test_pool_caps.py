"""The server's open collections are bounded per user and in all; the least recently used idle one is closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from provgraph.api.pool import RuntimePool
from provgraph.config import load_settings
from provgraph.errors import StoreUnavailable


def test_idle_collections_make_room_and_busy_ones_refuse(tmp_path: Path) -> None:
    pool = RuntimePool(per_user=2, total=3, wait_s=0.05)

    def settings(user: str, collection: str) -> object:
        return load_settings(home=str(tmp_path), user=user, collection=collection, llm="none")

    def open_ones() -> list[tuple[str, str]]:
        return [(user, collection) for _, user, collection in pool._entries]

    try:
        for name in ("a", "b", "c"):  # alice may keep two: opening c closes a, the least recently used
            with pool.use(settings("alice", name), create=True):  # type: ignore[arg-type]
                pass
        assert open_ones() == [("alice", "b"), ("alice", "c")]
        with pool.use(settings("alice", "b")):  # type: ignore[arg-type]  # b is now the most recently used
            pass
        with pool.use(settings("bob", "x"), create=True):  # type: ignore[arg-type]
            pass
        assert open_ones() == [("alice", "c"), ("alice", "b"), ("bob", "x")]
        with pool.use(settings("bob", "y"), create=True):  # type: ignore[arg-type]  # three in all: c goes
            assert open_ones() == [("alice", "b"), ("bob", "x"), ("bob", "y")]
            with pool.use(settings("bob", "x")), pytest.raises(StoreUnavailable) as busy:  # type: ignore[arg-type]
                with pool.use(settings("bob", "z"), create=True):  # type: ignore[arg-type]
                    pass
        assert str(busy.value) == ("user bob has 2 collections open and in use, the server's limit: try again when "
                                   "one of their requests has finished")
        assert ("bob", "z") not in open_ones()
    finally:
        pool.close()


def test_closing_waits_for_requests_but_not_for_query_threads(tmp_path: Path) -> None:
    """A SPARQL query's thread may compute for hours without a solution (pyoxigraph cannot stop it)."""
    pool = RuntimePool(close_wait_s=0.5)
    settings = load_settings(home=str(tmp_path), collection="c", llm="none")
    with pool.use(settings, create=True, query=True):
        assert pool.close() == (1, 0)
    pool = RuntimePool(close_wait_s=0.5)
    with pool.use(settings):
        assert pool.close() == (1, 1)  # a request still running after the wait: closed under it, and told
