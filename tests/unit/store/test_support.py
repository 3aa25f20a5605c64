"""Removing subgraphs: orphaned facts go, and so do the labels of entities and predicates no remaining fact uses."""

from __future__ import annotations

from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, RDFS, TG
from provgraph.store import OxigraphStore
from provgraph.store.support import subgraph_removal

A, B, C, D, P = (Iri(f"urn:x:{n}") for n in "abcdp")
SG1, SG2 = Iri("urn:sg:1"), Iri("urn:sg:2")


def test_a_removal_takes_the_labels_only_removed_facts_used() -> None:
    store = OxigraphStore()
    first, second, third = TripleTerm(A, P, B), TripleTerm(B, P, C), TripleTerm(D, P, A)
    store.add([Quad(t.s, t.p, t.o) for t in (first, second, third)]
              + [Quad(n, RDFS.label, Literal(n.value[-1])) for n in (A, B, C, D, P)]
              + [Quad(SG1, TG.contains, first, GRAPH_SOURCE), Quad(SG1, TG.contains, third, GRAPH_SOURCE),
                 Quad(SG2, TG.contains, second, GRAPH_SOURCE)])
    removal = set(subgraph_removal(store, [SG1]))
    assert {q for q in removal if q.g is None} == {Quad(A, P, B), Quad(D, P, A), Quad(A, RDFS.label, Literal("a")),
                                                  Quad(D, RDFS.label, Literal("d"))}  # b, p: the second fact uses them
    kept = {q for q in subgraph_removal(store, [SG1], keep_facts=[first]) if q.g is None}
    assert kept == {Quad(D, P, A), Quad(D, RDFS.label, Literal("d"))}  # a: the kept fact still uses it
