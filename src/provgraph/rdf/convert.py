"""Conversion between provgraph terms and pyoxigraph terms."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import pyoxigraph as ox

from provgraph.errors import InputError
from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, Term, TripleTerm

__all__ = ["to_ox", "from_ox", "triples_from_ox", "quad_to_ox", "quads_to_ox", "quad_from_ox", "graph_to_ox",
           "graph_from_ox"]

_OX_XSD_STRING = ox.NamedNode("http://www.w3.org/2001/XMLSchema#string")
_DEFAULT_GRAPH = ox.DefaultGraph()


@lru_cache(maxsize=65_536)
def _named(value: str) -> ox.NamedNode:
    """Predicates, classes and graph names recur in every quad: convert each once."""
    return ox.NamedNode(value)


@lru_cache(maxsize=65_536)
def _iri(value: str) -> Iri:
    """Store results repeat the same IRIs: validate each once (an Iri is immutable, so it is shared)."""
    return Iri(value)


def to_ox(term: Term) -> ox.NamedNode | ox.Literal | ox.BlankNode | ox.Triple:
    """The pyoxigraph equivalent of a term; raises :class:`InputError` for what the engine rejects."""
    try:
        return _to_ox(term)
    except ValueError as exc:
        raise InputError(f"not a valid RDF term {term}: {exc}") from exc


def _to_ox(term: Term) -> ox.NamedNode | ox.Literal | ox.BlankNode | ox.Triple:
    if isinstance(term, Iri):
        return _named(term.value)
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(term.value, language=term.language)
        if term.datatype is not None:
            return ox.Literal(term.value, datatype=_named(term.datatype.value))
        return ox.Literal(term.value)
    if isinstance(term, BlankNode):
        return ox.BlankNode(term.id)
    if isinstance(term, TripleTerm):
        return ox.Triple(_to_ox(term.s), _to_ox(term.p), _to_ox(term.o))  # type: ignore[arg-type]
    raise InputError(f"not an RDF term: {term!r}")


def from_ox(term: object) -> Term:
    """The provgraph equivalent of a pyoxigraph term."""
    if isinstance(term, ox.NamedNode):
        return _iri(term.value)
    if isinstance(term, ox.Literal):
        return _literal(term)
    if isinstance(term, ox.BlankNode):
        return BlankNode(term.value)
    if isinstance(term, ox.Triple):
        return _triple(term)
    raise InputError(f"not an RDF term: {term!r}")


@lru_cache(maxsize=65_536)
def _literal(term: ox.Literal) -> Literal:
    """Literals read back repeat too (offsets, labels): each is converted once (a Literal is immutable)."""
    if term.language:
        return Literal(term.value, language=term.language)
    dt = term.datatype
    return Literal(term.value, datatype=None if dt == _OX_XSD_STRING else _iri(dt.value))


@lru_cache(maxsize=65_536)
def _triple(term: ox.Triple) -> TripleTerm:
    """Triple terms (facts) are read back by many queries: each is converted once."""
    return TripleTerm(from_ox(term.subject), from_ox(term.predicate), from_ox(term.object))  # type: ignore[arg-type]


def triples_from_ox(terms: Iterable[ox.Triple]) -> list[TripleTerm]:
    """Many distinct triple terms at once (every fact of a collection): their IRIs converted once each, without
    the per-term caches (which hundreds of thousands of distinct triples would only churn)."""
    iris: dict[str, Iri] = {}
    out: list[TripleTerm] = []

    def one(term: object) -> Term:
        if isinstance(term, ox.NamedNode):
            found = iris.get(term.value)
            if found is None:
                found = iris[term.value] = _iri(term.value)
            return found
        return from_ox(term)

    for t in terms:
        out.append(TripleTerm(one(t.subject), one(t.predicate), one(t.object)))  # type: ignore[arg-type]
    return out


def graph_to_ox(g: Iri | None) -> ox.NamedNode | ox.DefaultGraph:
    """The pyoxigraph graph name (``None`` is the default graph)."""
    return _DEFAULT_GRAPH if g is None else _named(g.value)


def graph_from_ox(g: object) -> Iri | None:
    """The provgraph graph name of a pyoxigraph graph name."""
    if isinstance(g, ox.DefaultGraph):
        return None
    if isinstance(g, ox.NamedNode):
        return _iri(g.value)
    raise InputError(f"unsupported graph name: {g!r}")


def quad_to_ox(q: Quad) -> ox.Quad:
    """The pyoxigraph quad."""
    return ox.Quad(to_ox(q.s), to_ox(q.p), to_ox(q.o), graph_to_ox(q.g))  # type: ignore[arg-type]


def quads_to_ox(quads: Iterable[Quad]) -> list[ox.Quad]:
    """The pyoxigraph quads of many quads (the write path: IRIs and triple terms converted once each)."""
    named, default, make = _named, _DEFAULT_GRAPH, ox.Quad
    triples: dict[TripleTerm, ox.Triple] = {}
    out: list[ox.Quad] = []
    append = out.append
    try:
        for q in quads:
            s, o, g = q.s, q.o, q.g
            obj: ox.NamedNode | ox.Literal | ox.BlankNode | ox.Triple
            if isinstance(o, Iri):
                obj = named(o.value)
            elif isinstance(o, TripleTerm):
                if o not in triples:
                    triples[o] = _to_ox(o)  # type: ignore[assignment]
                obj = triples[o]
            else:
                obj = _to_ox(o)
            append(make(named(s.value) if isinstance(s, Iri) else _to_ox(s), named(q.p.value), obj,  # type: ignore[arg-type]
                        default if g is None else named(g.value)))
    except ValueError:
        return [quad_to_ox(q) for q in quads]  # raises the InputError naming the term
    return out


def quad_from_ox(q: ox.Quad) -> Quad:
    """The provgraph quad."""
    return Quad(from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), graph_from_ox(q.graph_name))  # type: ignore[arg-type]
