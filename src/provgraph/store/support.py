"""Support sets: which quads to remove when subgraphs or whole documents go away (SPEC §4.2).

A fact leaves the default graph only when no remaining subgraph contains it. These functions
only READ the store and return the quads to remove, so callers can remove and add in one
transaction (``store.apply``).
"""

from __future__ import annotations

from collections.abc import Iterable

from provgraph.rdf.terms import Iri, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDFS, TG
from provgraph.store.base import DEFAULT, QuadStore

__all__ = ["subgraph_removal", "document_nodes", "document_removal", "supporting_subgraphs"]


def supporting_subgraphs(store: QuadStore, fact: TripleTerm) -> set[Iri]:
    """Every subgraph that contains the fact: its support set."""
    return {q.s for q in store.match(None, TG.contains, fact, g=GRAPH_SOURCE) if isinstance(q.s, Iri)}


def _subject_quads(store: QuadStore, nodes: Iterable[Iri]) -> list[Quad]:
    out: list[Quad] = []
    for node in nodes:
        out += store.match(node, None, None, g=GRAPH_SOURCE)
    return out


def subgraph_removal(store: QuadStore, subgraphs: Iterable[Iri], *, keep_facts: Iterable[TripleTerm] = ()) -> list[Quad]:
    """Quads to remove so the subgraphs, their activities (with their tool steps) and their orphaned facts are gone.

    Facts in ``keep_facts`` stay (they are about to be written again in the same transaction).
    """
    gone = set(subgraphs)
    keep = set(keep_facts)
    removal: list[Quad] = []
    facts: set[TripleTerm] = set()
    activities: set[Iri] = set()
    for sg in gone:
        for q in store.match(sg, None, None, g=GRAPH_SOURCE):
            removal.append(q)
            if q.p == TG.contains and isinstance(q.o, TripleTerm):
                facts.add(q.o)
            elif q.p == PROV.wasGeneratedBy and isinstance(q.o, Iri):
                activities.add(q.o)
    of_activities = _subject_quads(store, activities)
    steps = {q.o for q in of_activities if q.p == PROV.generated and isinstance(q.o, Iri)}  # an agent's tool steps
    removal += of_activities + _subject_quads(store, steps)
    orphaned: list[Quad] = []
    for fact in facts - keep:
        if not (supporting_subgraphs(store, fact) - gone):
            orphaned += store.match(fact.s, fact.p, fact.o, g=DEFAULT)
    return removal + orphaned + _orphan_labels(store, orphaned, keep)


def _orphan_labels(store: QuadStore, removed: list[Quad], keep: set[TripleTerm]) -> list[Quad]:
    """Labels of entities and predicates that no remaining fact uses."""
    gone = set(removed)
    kept_terms = {t for f in keep for t in (f.s, f.p, f.o)}
    terms = {t for q in removed for t in (q.s, q.p, q.o) if isinstance(t, Iri)} - kept_terms
    out: list[Quad] = []
    for term in terms:
        used = any(q.p != RDFS.label and q not in gone  # the first use will do: an entity has thousands at scale
                   for pattern in ((term, None, None), (None, term, None), (None, None, term))
                   for q in store.match(*pattern, g=DEFAULT))  # type: ignore[arg-type]
        if not used:
            out += store.match(term, RDFS.label, None, g=DEFAULT)
    return out


def document_nodes(store: QuadStore, document: Iri) -> set[Iri]:
    """The document and everything derived from it: pages/sections, chunks, subgraphs."""
    return {document, *store.derived_nodes(document)}


def document_removal(store: QuadStore, document: Iri) -> list[Quad]:
    """Quads to remove to delete a document: its tree, their activities, and facts it alone supports."""
    tree = store.derived_nodes(document)
    subgraphs = {n for n, is_subgraph in tree.items() if is_subgraph}
    removal = subgraph_removal(store, subgraphs)
    others = _subject_quads(store, {document, *(n for n, is_subgraph in tree.items() if not is_subgraph)})
    # a decoder/chunker activity is shared by siblings of the same parent: all of them go with the document
    activities = {q.o for q in others if q.p == PROV.wasGeneratedBy and isinstance(q.o, Iri)}
    removal += others + _subject_quads(store, activities)
    return list(dict.fromkeys(removal))
