"""One open Runtime per ``(user, collection)`` for the whole server process.

A store opens read-write once per process, so the server opens each collection once and every
request shares it: reads run concurrently (pyoxigraph reads are thread-safe; the librarian and
vector indexes lock internally) and answer from what is committed; writes to one collection
(load, extract, remove, import, traces delete) take its write lock, one at a time. Dropping,
backing up or restoring a collection takes it for itself: it waits until nobody uses it, closes it,
and new requests for it wait until that is done.

Open collections are bounded (each holds about 30 file descriptors and a few MB): one user keeps
at most ``per_user`` open and the server ``total``; opening one more first closes the least
recently used collection that no request is using (of that user, or of anyone for ``total``). When
every one is in use, the request waits for one to be free, and gives up after ``wait_s``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from provgraph.config import Settings
from provgraph.errors import NotFound, StoreUnavailable
from provgraph.layout import CollectionRef
from provgraph.models.base import Embedder
from provgraph.models.factory import build_embedder
from provgraph.runtime import Runtime, collection_exists, drop_collection

__all__ = ["RuntimePool"]


@dataclass
class _Entry:
    runtime: Runtime
    write: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    queries: int = 0  # of the users, SPARQL query threads (shutdown does not wait for them)


class RuntimePool:
    """The server's open collections; ``use`` lends a runtime configured with the request's settings."""

    def __init__(self, *, per_user: int = 8, total: int = 64, wait_s: float = 30.0,
                 close_wait_s: float = 30.0) -> None:
        self.per_user, self.total, self.wait_s, self.close_wait_s = per_user, total, wait_s, close_wait_s
        self._entries: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()  # least recently used first
        self._embedders: dict[tuple[str, str | None], Embedder] = {}
        self._lock = threading.Condition()
        self._exclusive: set[tuple[str, str, str]] = set()  # collections closed for a drop, backup or restore
        self.closed = False

    def _embedder(self, settings: Settings) -> Embedder:
        key = (settings.embedder, settings.embedder_model)
        if key not in self._embedders:
            self._embedders[key] = build_embedder(settings)
        return self._embedders[key]

    def _entry(self, settings: Settings, create: bool) -> _Entry:
        key = (str(settings.home), settings.user, settings.collection)
        while True:
            self._lock.wait_for(lambda: key not in self._exclusive)
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            ref = CollectionRef(settings.home, settings.user, settings.collection)
            if not create and not collection_exists(settings, ref):
                raise NotFound(f"collection {ref} does not exist (create it with: provgraph collections create)")
            full = self._full(settings.user)
            if full is None:
                break
            if not self._lock.wait_for(lambda: self._full(settings.user) is None, timeout=self.wait_s):
                raise StoreUnavailable(f"{full}: try again when one of their requests has finished")
        rt = Runtime(settings, create=create, embedder=self._embedder(settings))
        try:
            for part in ("store", "librarian", "entity_index", "chunk_index"):
                getattr(rt, part)  # opened once, here, under the pool's lock
            rt.retriever()  # one lexical index and retriever per collection: requests share its sync state
        except BaseException:
            rt.close()
            raise
        entry = self._entries[key] = _Entry(rt)
        return entry

    def _full(self, user: str) -> str | None:
        """Close least recently used idle collections until one more of ``user``'s fits (under the lock);
        what is full of collections in use when none can be closed."""
        for cap, owner, where in ((self.per_user, user, f"user {user} has"), (self.total, None, "the server has")):
            counted = [k for k in self._entries if owner is None or k[1] == owner]  # least recently used first
            while len(counted) >= cap:
                idle = next((k for k in counted if self._entries[k].users == 0), None)
                if idle is None:
                    return f"{where} {cap} collections open and in use, the server's limit"
                counted.remove(idle)
                self._entries.pop(idle).runtime.close()
        return None

    @contextmanager
    def use(self, settings: Settings, *, create: bool = False, write: bool = False,
            query: bool = False) -> Iterator[Runtime]:
        """A runtime for ``settings``' collection, sharing the pool's open parts; ``write`` serialises.

        ``query``: the user is a SPARQL query's thread, which shutdown does not wait for: pyoxigraph
        cannot stop a query computing its first solution (an aggregate over a large join can take
        hours), and the query holds its own reference to the store, so closing under it is safe."""
        with self._lock:
            if self.closed:
                raise NotFound("the server is shutting down")
            entry = self._entry(settings, create)
            entry.users += 1
            entry.queries += query
        try:
            rt = entry.runtime.sharing(settings)
            if write:
                with entry.write:
                    yield rt
            else:
                yield rt
        finally:
            with self._lock:
                entry.users -= 1
                entry.queries -= query
                self._lock.notify_all()

    @contextmanager
    def exclusive(self, ref: CollectionRef) -> Iterator[None]:
        """The collection closed and kept from every other request while the block runs (waits for users)."""
        key = (str(ref.home), ref.user, ref.collection)
        with self._lock:
            if self.closed:
                raise NotFound("the server is shutting down")
            self._lock.wait_for(lambda: key not in self._exclusive)
            self._exclusive.add(key)
            entry = self._entries.get(key)
            try:
                if entry is not None:
                    self._lock.wait_for(lambda: entry.users == 0)
                    del self._entries[key]
                    entry.runtime.close()
            except BaseException:
                self._exclusive.discard(key)
                raise
        try:
            yield
        finally:
            with self._lock:
                self._exclusive.discard(key)
                self._lock.notify_all()

    @contextmanager
    def alone(self, settings: Settings) -> Iterator[Runtime]:
        """A private runtime on the collection while every other request is kept away (for ``check --repair``)."""
        ref = CollectionRef(settings.home, settings.user, settings.collection)
        with self.exclusive(ref):
            if not collection_exists(settings, ref):
                raise NotFound(f"collection {ref} does not exist (create it with: provgraph collections create)")
            rt = Runtime(settings, create=False, embedder=self._embedder(settings))
            try:
                yield rt
            finally:
                rt.close()

    def drop(self, settings: Settings, ref: CollectionRef) -> None:
        """Close the collection once nobody uses it, then delete it, in the configured store too (NotFound if it
        exists nowhere)."""
        with self.exclusive(ref):
            drop_collection(settings, ref)

    def close(self) -> tuple[int, int]:
        """Wait for running requests (``close_wait_s`` at most), then flush and close every collection (graceful shutdown);
        returns how many collections, and how many requests were still running (not waited for further)."""
        with self._lock:
            self.closed = True
            self._lock.wait_for(lambda: self._running() == 0, timeout=self.close_wait_s)
            running = self._running()
            for entry in self._entries.values():
                entry.runtime.close()
            count = len(self._entries)
            self._entries.clear()
        return count, running

    def _running(self) -> int:
        return sum(e.users - e.queries for e in self._entries.values())
