"""Display labels for terms: ``rdfs:label`` from the knowledge graph, in one batched read.

Literals label themselves; an IRI without a label falls back to its last segment, percent-decoded
(``urn:provgraph:entity:Marie%20Curie`` → ``Marie Curie``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from provgraph.rdf.terms import BlankNode, Iri, Literal, Term, TripleTerm
from provgraph.store.base import QuadStore

__all__ = ["Labeller", "fallback_label"]

_SEPARATORS = re.compile(r"[/#:]")


def fallback_label(iri: Iri) -> str:
    """The IRI's last non-empty segment, percent-decoded (the whole IRI when there is none)."""
    parts = [p for p in _SEPARATORS.split(iri.value) if p]
    return unquote(parts[-1]) if parts else iri.value


def _preference(label: Literal) -> tuple[int, str]:
    return (0 if label.language in (None, "en") else 1, label.value)


class Labeller:
    """Labels of a set of terms, looked up once; ``label(term)`` never queries."""

    def __init__(self, labels: dict[Iri, str]) -> None:
        self._labels = labels

    @classmethod
    def lookup(cls, store: QuadStore, terms: Iterable[Term]) -> Labeller:
        """Look up every IRI among ``terms`` (and inside triple terms) in one store read."""
        iris: dict[Iri, None] = {}

        def collect(term: Term) -> None:
            if isinstance(term, Iri):
                iris[term] = None
            elif isinstance(term, TripleTerm):
                for part in (term.s, term.p, term.o):
                    collect(part)

        for term in terms:
            collect(term)
        found = store.labels(list(iris)) if iris else {}
        return cls({iri: min(labels, key=_preference).value for iri, labels in found.items()})

    def label(self, term: Term) -> str:
        """The term's display label."""
        if isinstance(term, Iri):
            return self._labels.get(term) or fallback_label(term)
        if isinstance(term, Literal):
            return term.value
        if isinstance(term, TripleTerm):
            return f"<<( {self.label(term.s)} {self.label(term.p)} {self.label(term.o)} )>>"
        if isinstance(term, BlankNode):
            return str(term)
        return str(term)
