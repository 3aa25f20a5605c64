"""Human-readable labels of graph terms: one cache per request, looked up in batches.

Labels come from ``rdfs:label`` in the default graph (the knowledge graph). Many terms are
resolved with ONE store operation (``labels``, any backend), never one query per term; or, when every label of the graph was read at once (:func:`all_labels`), with
none. Literals label themselves; an IRI without a label shows its last path segment,
percent-decoded (``skos:definition`` → ``definition``).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote

from provgraph.rdf.terms import BlankNode, Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import RDFS
from provgraph.store.base import QuadStore

__all__ = ["LabelCache", "fallback_label", "all_labels"]

_BATCH = 500


def fallback_label(term: Term) -> str:
    """A readable name for a term without ``rdfs:label``."""
    if isinstance(term, Literal):
        return term.value
    if isinstance(term, BlankNode):
        return f"_:{term.id}"
    if isinstance(term, TripleTerm):
        return f"({fallback_label(term.s)} {fallback_label(term.p)} {fallback_label(term.o)})"
    value = term.value.rstrip("/#")
    cut = max(value.rfind("/"), value.rfind("#"), value.rfind(":"))
    tail = unquote(value[cut + 1:]) if cut >= 0 else value
    return tail or term.value


def _best(names: list[str]) -> str:
    """Of several labels, the shortest (then alphabetical): the most name-like and stable."""
    return min(names, key=lambda n: (len(n), n))


def all_labels(store: QuadStore, limit: int) -> dict[Term, str] | None:
    """Every labelled IRI of the default graph with its label (one read), or None past ``limit`` IRIs."""
    found: dict[Term, list[str]] = {}
    for q in store.match(p=RDFS.label, g=None):
        if isinstance(q.s, Iri) and isinstance(q.o, Literal) and q.o.value.strip():
            names = found.get(q.s)
            if names is None:
                if len(found) >= limit:
                    return None
                found[q.s] = [q.o.value]
            else:
                names.append(q.o.value)
    return {term: _best(names) for term, names in found.items()}


class LabelCache:
    """Labels of one request's terms; ``queries`` counts the store round trips made.

    ``known`` shares labels between requests (the caller clears it when the knowledge graph changes).
    ``complete`` says ``known`` holds every labelled IRI (from :func:`all_labels`): an IRI missing
    from it has no label, and nothing is queried.
    """

    def __init__(self, store: QuadStore, known: dict[Term, str] | None = None, *, complete: bool = False) -> None:
        self._store = store
        self._labels: dict[Term, str] = {} if known is None else known
        self._complete = complete
        self.queries = 0

    def resolve(self, terms: Iterable[Term]) -> None:
        """Look up every not-yet-known IRI among ``terms`` (one query per 500 IRIs)."""
        missing: list[Iri] = []
        for term in dict.fromkeys(terms):
            if term in self._labels:
                continue
            if isinstance(term, Iri):
                if self._complete:
                    self._labels[term] = fallback_label(term)
                else:
                    missing.append(term)
            else:
                self._labels[term] = self._compose(term)
        for i in range(0, len(missing), _BATCH):
            part = missing[i : i + _BATCH]
            self.queries += 1
            found = self._store.labels(part)
            for term in part:
                names = [label.value for label in found.get(term, ()) if label.value.strip()]
                self._labels[term] = _best(names) if names else fallback_label(term)

    def _compose(self, term: Term) -> str:
        if isinstance(term, TripleTerm):
            self.resolve([term.s, term.p, term.o])
            return f"({self.label(term.s)} {self.label(term.p)} {self.label(term.o)})"
        return fallback_label(term)

    def label(self, term: Term) -> str:
        """The term's label (resolving it alone if it was not resolved yet)."""
        if term not in self._labels:
            self.resolve([term])
        return self._labels[term]
