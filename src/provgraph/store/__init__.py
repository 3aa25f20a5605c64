"""Quad stores: the protocol and the embedded pyoxigraph backend."""

from provgraph.store.base import ANY, DEFAULT, QuadStore, SelectResult
from provgraph.store.collections import (
    CollectionInfo,
    create_collection,
    drop_collection,
    list_collections,
    open_store,
)
from provgraph.store.oxigraph import OxigraphStore

__all__ = [
    "ANY", "DEFAULT", "QuadStore", "SelectResult", "OxigraphStore",
    "CollectionInfo", "create_collection", "drop_collection", "list_collections", "open_store",
]
