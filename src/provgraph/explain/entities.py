"""Browsing the knowledge graph: entities found by name, one entity's facts with their sources and
sentences, its neighbours, and the facts one chunk gave.

Reads go through the named readers below the explain layer: the lexical index (through
:class:`~provgraph.retrieval.hybrid.HybridRetriever`, kept in step with the store), the label
scan of :func:`~provgraph.retrieval.lexical_sync.entity_names`, :class:`LabelCache`,
:func:`~provgraph.retrieval.sources.edge_sources` and pattern matches on the store.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from provgraph.events import Source
from provgraph.explain.model import Evidence, SourceRef
from provgraph.librarian.base import Librarian
from provgraph.librarian.lexical import query_terms
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, SCHEMA_PREDICATES, TG
from provgraph.retrieval.hybrid import HybridRetriever
from provgraph.retrieval.labels import LabelCache
from provgraph.retrieval.lexical_sync import entity_names
from provgraph.retrieval.sources import edge_sources
from provgraph.store.base import DEFAULT
from provgraph.store.base import QuadStore

__all__ = ["EntityMatch", "Fact", "Neighbour", "EntityView", "search_entities", "entity_view", "chunk_facts",
           "FUZZY_CUTOFF"]

FUZZY_CUTOFF = 0.72  # difflib ratio a name (or a run of its words) must reach to count as a fuzzy match


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """An entity found by name: ``match`` is ``exact`` (a name the query holds), ``lexical`` (BM25 on
    its names) or ``fuzzy`` (a name spelled like the query)."""

    iri: Iri
    label: str
    names: tuple[str, ...]
    match: str
    score: float


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact of the knowledge graph with labels and every source (each with its sentence when recorded)."""

    edge: TripleTerm
    labels: tuple[str, str, str]
    sources: tuple[SourceRef, ...] = ()


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An entity one fact away, and how many facts join the two."""

    iri: Iri
    label: str
    facts: int


@dataclass(frozen=True, slots=True)
class EntityView:
    """One entity: its names, its facts (as subject or object) and its neighbours."""

    iri: Iri
    label: str
    names: tuple[str, ...]
    facts: tuple[Fact, ...]
    neighbours: tuple[Neighbour, ...]
    more: int  # facts left out past the limit


def _fuzzy(query: str, name: str) -> float:
    """How close ``name``, or its best run of as many words as the query has, is spelled to ``query``."""
    q = " ".join(query_terms(query)) or query.strip().lower()
    words = query_terms(name) or [name.strip().lower()]
    size = max(1, len(q.split()))
    runs = [" ".join(words)] + [" ".join(words[i:i + size]) for i in range(max(0, len(words) - size + 1))]
    best = 0.0
    for run in runs:
        matcher = difflib.SequenceMatcher(None, q, run)
        if matcher.real_quick_ratio() >= FUZZY_CUTOFF and matcher.quick_ratio() >= FUZZY_CUTOFF:
            best = max(best, matcher.ratio())
    return best


def search_entities(store: QuadStore, retriever: HybridRetriever, query: str, *, limit: int = 20) -> list[EntityMatch]:
    """Entities by name, best first: names the query holds, then BM25 over names and aliases, then
    names spelled like the query (typos, missing letters). Each entity once."""
    if not query.strip() or limit < 1:
        return []
    names = entity_names(store)
    found: dict[str, tuple[str, float]] = {}
    for ranked in retriever.entities(query, None, limit):
        if ranked.id in names:
            found.setdefault(ranked.id, ("exact" if ranked.exact else "lexical", ranked.score))
    if len(found) < limit:
        fuzzy = sorted(((iri, max(_fuzzy(query, n) for n in ns)) for iri, ns in names.items() if iri not in found),
                       key=lambda hit: (-hit[1], hit[0]))
        for iri, ratio in fuzzy[: limit - len(found)]:
            if ratio < FUZZY_CUTOFF:
                break
            found[iri] = ("fuzzy", ratio)
    labels = LabelCache(store)
    iris = [Iri(i) for i in found]
    labels.resolve(iris)
    return [EntityMatch(iri, labels.label(iri), tuple(names[iri.value]), *found[iri.value]) for iri in iris]


def _refs(found: Mapping[TripleTerm, Sequence[Source]], librarian: Librarian) -> dict[TripleTerm, tuple[SourceRef, ...]]:
    """Sources as references whose evidence carries its sentence's text (chunk texts read in one call)."""
    chunks = list(dict.fromkeys(s.chunk for sources in found.values() for s in sources if s.evidence))
    texts = librarian.texts(chunks, missing_ok=True) if chunks else {}

    def ref(s: Source) -> SourceRef:
        if s.evidence is None:
            return SourceRef(s)
        offset, length = s.evidence
        text = texts.get(s.chunk)
        return SourceRef(s, None, Evidence(offset, length, text[offset:offset + length] if text is not None else None))

    return {edge: tuple(ref(s) for s in sources) for edge, sources in found.items()}


def _facts(store: QuadStore, librarian: Librarian, edges: Iterable[TripleTerm],
           labels: LabelCache) -> list[Fact]:
    unique = list(dict.fromkeys(edges))
    labels.resolve(t for e in unique for t in (e.s, e.p, e.o))
    refs = _refs(edge_sources(store, unique, evidence=True), librarian)
    return [Fact(e, (labels.label(e.s), labels.label(e.p), labels.label(e.o)), refs.get(e, ())) for e in unique]


def entity_view(store: QuadStore, librarian: Librarian, entity: Iri, *, limit: int = 200) -> EntityView | None:
    """The entity's facts (subject first, then object; schema edges left out) with their sources, and
    its neighbours; None when the knowledge graph does not name it."""
    edges: list[TripleTerm] = []
    names: list[str] = []
    for quad in [*store.match(entity, None, None, g=DEFAULT), *store.match(None, None, entity, g=DEFAULT)]:
        if quad.s == entity and quad.p in SCHEMA_PREDICATES and isinstance(quad.o, Literal):
            names.append(quad.o.value)
        elif quad.p not in SCHEMA_PREDICATES:
            edges.append(TripleTerm(quad.s, quad.p, quad.o))
    if not edges and not names:
        return None
    edges = list(dict.fromkeys(edges))
    labels = LabelCache(store)
    facts = _facts(store, librarian, edges[:limit], labels)
    joined: dict[Term, int] = {}
    for e in edges:
        other = e.o if e.s == entity else e.s
        if isinstance(other, Iri) and other != entity:
            joined[other] = joined.get(other, 0) + 1
    labels.resolve(joined)
    neighbours = sorted((Neighbour(iri, labels.label(iri), n) for iri, n in joined.items() if isinstance(iri, Iri)),
                        key=lambda nb: (-nb.facts, nb.label.lower(), nb.iri.value))
    return EntityView(entity, labels.label(entity), tuple(dict.fromkeys(names)), tuple(facts), tuple(neighbours),
                      max(0, len(edges) - limit))


def chunk_facts(store: QuadStore, librarian: Librarian, chunk: Iri) -> list[Fact]:
    """The facts extracted from one chunk, each with its source in that chunk (and its sentence)."""
    subgraphs = [q.s for q in store.match(None, PROV.wasDerivedFrom, chunk, g=GRAPH_SOURCE)
                 if isinstance(q.s, Iri) and store.count(q.s, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)]
    edges = [q.o for sg in subgraphs for q in store.match(sg, TG.contains, None, g=GRAPH_SOURCE)
             if isinstance(q.o, TripleTerm)]
    facts = _facts(store, librarian, edges, LabelCache(store))
    here = [Fact(f.edge, f.labels, tuple(r for r in f.sources if r.source.chunk == chunk.value)) for f in facts]
    return sorted(here, key=lambda f: (f.labels, str(f.edge)))
