"""The agent extractor's tools over one collection: what the graph already knows, and a chunk's neighbours.

``find-entities`` tells, for each name, whether the collection already has that entity (its stored
label and definition) and, when entity vectors exist, the closest known entities, so the extractor can
reuse a known name instead of minting a variant. ``chunk-neighbours`` gives the text of the chunks
before and after the one being read (same page, section or document), so a pronoun or a truncated
sentence at an edge can be resolved. Each answer is JSON text of bounded size; the extractor hands it
to the LLM as data, never as instructions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from provgraph.errors import InputError, NotFound
from provgraph.extract.entities import FactBuilder
from provgraph.librarian.base import Librarian
from provgraph.models.base import Embedder
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import RDFS, SKOS
from provgraph.store.base import DEFAULT, QuadStore
from provgraph.vectors.base import VectorIndex

__all__ = ["ExtractionTools", "TOOL_NAMES", "MAX_NAMES", "NEIGHBOUR_CHARS"]

TOOL_NAMES = ("find-entities", "chunk-neighbours")
MAX_NAMES = 10  # names one find-entities call may ask about
NEIGHBOUR_CHARS = 600  # of each neighbour: the end of the one before, the start of the one after
DEFINITION_CHARS = 300
SIMILAR = 3  # closest known entities per name (with entity vectors)


class ExtractionTools:
    """The tools, bound to a collection's store and librarian (and entity vectors when given)."""

    def __init__(self, store: QuadStore, librarian: Librarian, *, entity_base: str,
                 embedder: Embedder | None = None, entity_index: VectorIndex | None = None) -> None:
        self._store = store
        self._librarian = librarian
        self._base = entity_base
        self._embedder = embedder
        self._index = entity_index

    def run(self, tool: str, chunk: Iri, names: Sequence[str]) -> str:
        """The tool's answer as JSON text; InputError (the step's error observation) on unusable arguments."""
        if tool == "find-entities":
            return json.dumps(self.find_entities(names), ensure_ascii=False)
        if tool == "chunk-neighbours":
            return json.dumps(self.chunk_neighbours(chunk), ensure_ascii=False)
        raise InputError(f"unknown tool {tool!r}; the tools are {', '.join(TOOL_NAMES)}")

    def find_entities(self, names: Sequence[str]) -> dict[str, Any]:
        """For each name: ``known`` (the collection has the entity), its stored label and definition, and
        ``similar`` known entities (label, definition) when entity vectors exist."""
        wanted = list(dict.fromkeys(n for n in names if n.strip()))
        if not wanted:
            raise InputError("find-entities needs at least one name in 'names'")
        if len(wanted) > MAX_NAMES:
            raise InputError(f"find-entities takes at most {MAX_NAMES} names, got {len(wanted)}")
        builder = FactBuilder(self._base)
        found: dict[str, Any] = {}
        for name in wanted:
            iri = builder.entity(name)  # InputError for an empty or overlong label
            labels = [q.o.value for q in self._store.match(iri, RDFS.label, None, g=DEFAULT) if isinstance(q.o, Literal)]
            entry: dict[str, Any] = {"known": bool(labels)}
            if labels:
                entry["label"] = labels[0]
                entry["definition"] = self._definition(iri)
            entry["similar"] = self._similar(name, iri)
            found[name] = entry
        return {"entities": found}

    def _definition(self, iri: Iri) -> str | None:
        for q in self._store.match(iri, SKOS.definition, None, g=DEFAULT):
            if isinstance(q.o, Literal):
                return q.o.value[:DEFINITION_CHARS]
        return None

    def _similar(self, name: str, iri: Iri) -> list[dict[str, Any]]:
        if self._embedder is None or self._index is None:
            return []
        hits = self._index.search(self._embedder.embed([name])[0], SIMILAR + 1)
        return [{"label": h.payload.get("label"), "definition": (h.payload.get("definition") or "")[:DEFINITION_CHARS]
                 or None, "score": round(h.score, 3)} for h in hits if h.id != iri.value][:SIMILAR]

    def chunk_neighbours(self, chunk: Iri) -> dict[str, Any]:
        """The end of the chunk before and the start of the chunk after, under the same parent (``null`` at an edge)."""
        try:
            record = self._librarian.get(chunk.value)
        except NotFound:
            raise InputError(f"chunk {chunk.value} is not stored: it has no neighbours to read") from None
        if record.parent_id is None or record.number is None:
            return {"before": None, "after": None}
        around = {r.number: r.id for r in self._librarian.children(record.parent_id)
                  if r.kind == "chunk" and r.number in (record.number - 1, record.number + 1)}
        texts = self._librarian.texts(list(around.values()), missing_ok=True)
        before = texts.get(around.get(record.number - 1, ""))
        after = texts.get(around.get(record.number + 1, ""))
        return {"before": before[-NEIGHBOUR_CHARS:] if before else None,
                "after": after[:NEIGHBOUR_CHARS] if after else None}
