"""The passage graph's per-chunk edges on disk, so a new process reads only the chunks that changed.

Building the passage graph reads every chunk's facts (20,000 chunks, 400,000 facts: 13–27 s). The
file ``passage_graph.npz`` (beside the lexical index; derived data, rebuildable) keeps, for each
chunk, the two ends of each of its facts (entity IRIs, or none for a literal) and a *stamp* of its
extractions: a digest of every activity that used the chunk with its ``prov:startedAtTime``. Every
extraction writes its activity with a new start time, and removing a subgraph removes its activity,
so a chunk whose stamp is unchanged has the same facts; the stamps of all chunks are two pattern
reads (``prov:used``, ``prov:startedAtTime`` in ``urn:graph:source``; ~0.5 s at 20,000 chunks).
A chunk the file lacks, or whose stamp moved, is read from the store again; a file that cannot be
read is ignored (and written again).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np

from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV
from provgraph.store.base import QuadStore

__all__ = ["GRAPH_FILE", "Ends", "chunk_stamps", "read_edges", "write_edges"]

GRAPH_FILE = "passage_graph.npz"
_FORMAT = 1
Ends = list[tuple[str | None, str | None]]
"""A chunk's facts as their subject and object IRIs (None for a literal), in the order the graph took them."""


def chunk_stamps(store: QuadStore, chunks: Collection[str]) -> dict[str, str]:
    """Each of ``chunks`` with the digest of the extraction activities that used it and their start times
    ("" for a chunk no activity used yet)."""
    started = {q.s.value: q.o.value for q in store.match(p=PROV.startedAtTime, g=GRAPH_SOURCE)
               if isinstance(q.s, Iri) and isinstance(q.o, Literal)}
    lines: dict[str, list[str]] = defaultdict(list)
    for q in store.match(p=PROV.used, g=GRAPH_SOURCE):
        if isinstance(q.o, Iri) and q.o.value in chunks and isinstance(q.s, Iri):
            lines[q.o.value].append(f"{q.s.value} {started.get(q.s.value, '')}")
    return {c: hashlib.sha256("\n".join(sorted(lines[c])).encode()).hexdigest()[:32] if c in lines else ""
            for c in chunks}


def _text(strings: Sequence[str]) -> np.ndarray:
    return np.frombuffer("".join(f"{s}\n" for s in strings).encode("utf-8"), dtype=np.uint8)


def _strings(blob: np.ndarray) -> list[str]:
    return blob.tobytes().decode("utf-8").split("\n")[:-1]


def write_edges(path: Path, edges: Mapping[str, Ends], stamps: Mapping[str, str]) -> None:
    """Write each chunk's fact ends with its stamp (aside, then renamed over the old file)."""
    entities: dict[str, int] = {}
    chunks = list(edges)
    ptr = np.zeros(len(chunks) + 1, dtype=np.int64)
    ends: list[int] = []
    for i, chunk in enumerate(chunks):
        for pair in edges[chunk]:
            ends += [-1 if e is None else entities.setdefault(e, len(entities)) for e in pair]
        ptr[i + 1] = len(ends) // 2
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as out:
        np.savez(out, format=np.array([_FORMAT]), chunks=_text(chunks), stamps=_text([stamps[c] for c in chunks]),
                 entities=_text(list(entities)), ptr=ptr, ends=np.asarray(ends, dtype=np.int32).reshape(-1, 2))
    os.replace(tmp, path)


def read_edges(path: Path) -> dict[str, tuple[str, Ends]]:
    """Each chunk of the file with its stamp and fact ends; empty when the file is missing or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["format"][0]) != _FORMAT:
                return {}
            chunks, stamps = _strings(data["chunks"]), _strings(data["stamps"])
            entities: list[str | None] = list(_strings(data["entities"]))
            ptr, ends = data["ptr"], data["ends"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError):
        return {}
    if len(stamps) != len(chunks) or len(ptr) != len(chunks) + 1 or (len(ends) and int(ends.max()) >= len(entities)):
        return {}
    entities.append(None)  # -1: a literal
    pairs = [(entities[s], entities[o]) for s, o in ends.tolist()]
    bounds = ptr.tolist()
    return {c: (stamps[i], pairs[bounds[i]:bounds[i + 1]]) for i, c in enumerate(chunks)}
