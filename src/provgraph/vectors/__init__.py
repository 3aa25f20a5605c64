"""vectors layer: the ``VectorIndex`` contract and its usearch + numpy backend."""

from provgraph.vectors.base import CHUNKS, ENTITIES, Hit, VectorIndex, matches
from provgraph.vectors.usearch_index import open_index

__all__ = ["CHUNKS", "ENTITIES", "Hit", "VectorIndex", "matches", "open_index"]
