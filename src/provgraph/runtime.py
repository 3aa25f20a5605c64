"""The ONLY place that picks backends: settings in, a collection's open parts out.

Parts are opened lazily and closed together; a runtime serves one ``(user, collection)``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from provgraph.config import Settings
from provgraph.layout import CollectionRef
from provgraph.store.collections import create_collection, open_store
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["Runtime"]


class Runtime:
    """A collection's store, librarian, vector indexes and models, built from settings."""

    def __init__(self, settings: Settings, *, create: bool = True) -> None:
        self.settings = settings
        self.ref = CollectionRef(settings.home, settings.user, settings.collection)
        self._create = create
        self._opened: list[Any] = []
        if create:
            create_collection(self.ref)

    @cached_property
    def store(self) -> OxigraphStore:
        """The collection's quad store."""
        store = open_store(self.ref, create=self._create)
        self._opened.append(store)
        return store

    def close(self) -> None:
        """Close everything this runtime opened (newest first)."""
        while self._opened:
            self._opened.pop().close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
