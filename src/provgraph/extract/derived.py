"""What the vector indexes must hold, derived from the store and the librarian alone.

Vectors are derived data: a chunk's vector is its librarian text embedded, with payload
``{"chunk", "document"}``; an entity has a vector exactly while some extraction subgraph contains
a fact naming it (subject or object) and it has an ``rdfs:label``; its payload is the label, the
definition (``skos:definition``) and the chunks of those subgraphs. So a lost or damaged index is
rebuilt from here (``provgraph check --repair``), and removing a document drops the vectors of
the entities it alone supported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, RDFS, SKOS, TG
from provgraph.store.base import QuadStore

__all__ = ["VectorRecord", "entity_text", "supported_entities", "entity_records", "chunk_records",
           "subgraph_entities", "still_supported"]


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """One record an index must hold: its id, payload and the text whose embedding is its vector."""

    id: str
    payload: dict[str, Any]
    text: str


def entity_text(label: str, definition: str | None) -> str:
    """The text embedded for an entity: its label, and its definition when it has one."""
    return label + (f": {definition}" if definition else "")


def _mentions(fact: TripleTerm) -> list[Iri]:
    return [t for t in (fact.s, fact.o) if isinstance(t, Iri)]


def subgraph_entities(store: QuadStore, subgraphs: Iterable[Iri]) -> set[Iri]:
    """Every IRI a fact of these subgraphs names as subject or object."""
    found: set[Iri] = set()
    for sg in subgraphs:
        for q in store.match(sg, TG.contains, None, g=GRAPH_SOURCE):
            if isinstance(q.o, TripleTerm):
                found.update(_mentions(q.o))
    return found


def supported_entities(store: QuadStore) -> dict[Iri, list[str]]:
    """Entities with support (and a label), each with its supporting chunks, sorted."""
    chunk_of = {q.s: q.o for q in store.match(None, PROV.wasDerivedFrom, None, g=GRAPH_SOURCE)
                if isinstance(q.o, Iri) and store.count(q.s, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)}
    chunks: dict[Iri, set[str]] = {}
    predicates: set[Iri] = set()
    for q in store.match(None, TG.contains, None, g=GRAPH_SOURCE):
        chunk = chunk_of.get(q.s)  # type: ignore[arg-type]
        if chunk is None or not isinstance(q.o, TripleTerm):
            continue
        predicates.add(q.o.p)
        for entity in _mentions(q.o):
            chunks.setdefault(entity, set()).add(chunk.value)  # type: ignore[union-attr]
    return {e: sorted(c) for e, c in chunks.items()
            if e not in predicates and store.count(e, RDFS.label, None, g=None)}


def still_supported(store: QuadStore, entities: Iterable[Iri]) -> set[Iri]:
    """Those of ``entities`` that some remaining subgraph still names."""
    wanted = set(entities)
    if not wanted:
        return set()
    found: set[Iri] = set()
    for q in store.match(None, TG.contains, None, g=GRAPH_SOURCE):
        if isinstance(q.o, TripleTerm):
            found.update(e for e in _mentions(q.o) if e in wanted)
            if found == wanted:
                break
    return found


def _first(store: QuadStore, entity: Iri, predicate: Iri) -> str | None:
    values = sorted(q.o.value for q in store.match(entity, predicate, None, g=None) if isinstance(q.o, Literal))
    return values[0] if values else None


def entity_records(store: QuadStore, supported: dict[Iri, list[str]]) -> list[VectorRecord]:
    """The entity index's records for ``supported`` (from :func:`supported_entities`)."""
    out: list[VectorRecord] = []
    for entity in sorted(supported, key=lambda e: e.value):
        label = _first(store, entity, RDFS.label) or entity.value
        definition = _first(store, entity, SKOS.definition)
        payload = {"entity": entity.value, "label": label, "definition": definition, "chunks": supported[entity]}
        out.append(VectorRecord(entity.value, payload, entity_text(label, definition)))
    return out


def chunk_records(librarian: Librarian, documents: Iterable[str], *, texts: bool = True) -> list[VectorRecord]:
    """The chunk index's records of ``documents``: every chunk under each, with its text (or ``""``)."""
    out: list[VectorRecord] = []
    for doc in documents:
        parents = [doc, *(r.id for r in librarian.list(parent=doc) if r.kind != "chunk")]
        ids = [r.id for p in parents for r in librarian.list(kind="chunk", parent=p)]
        found = librarian.texts(ids, missing_ok=True) if texts else dict.fromkeys(ids, "")
        out += [VectorRecord(i, {"chunk": i, "document": doc}, found[i]) for i in ids if i in found]
    return out
