"""Ingestion: decode files into text with pages or sections, and chunk text with exact offsets.

``decoders`` dispatches by suffix or MIME type to ``text``, ``markdown``, ``pdf`` and ``html``;
``chunker`` splits a text; ``types`` holds the result types. (``pipeline`` ties these to the
librarian and the store.)
"""

from provgraph.ingest.chunker import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, check_chunking, chunk_text
from provgraph.ingest.decoders import (
    DEFAULT_MAX_BYTES,
    SUFFIXES,
    decode_bytes,
    decode_file,
    mime_type_for,
    read_file,
)
from provgraph.ingest.types import ChunkSpan, DecodedDocument, Part

__all__ = [
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_MAX_BYTES",
    "SUFFIXES",
    "ChunkSpan",
    "DecodedDocument",
    "Part",
    "check_chunking",
    "chunk_text",
    "decode_bytes",
    "decode_file",
    "mime_type_for",
    "read_file",
]
