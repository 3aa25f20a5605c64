"""A trace's triples, read at once (``QuadStore.trace_triples``): the question, every question informed
by it (sub-traces, transitively), every step they generated, the steps' parts (edge and chunk
selections, citations) and the retraction records that name any of these questions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timezone

from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri, Literal, Term
from provgraph.rdf.vocab import PROV, RDF, TG
from provgraph.store.base import QuadStore

__all__ = ["Node", "TraceGraph", "EPOCH"]

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Node:
    """The statements about one subject, with typed accessors."""

    def __init__(self, iri: Iri) -> None:
        self.iri = iri
        self.props: dict[Iri, list[Term]] = defaultdict(list)

    def all(self, p: Iri) -> list[Term]:
        """Every object of ``p``."""
        return self.props.get(p, [])

    def one(self, p: Iri) -> Term | None:
        """One object of ``p`` (the smallest in N-Triples order, so the choice is stable)."""
        values = self.all(p)
        return min(values, key=str) if values else None

    def iri_of(self, p: Iri) -> Iri | None:
        """The IRI object of ``p``, if any."""
        value = self.one(p)
        return value if isinstance(value, Iri) else None

    def iris(self, p: Iri) -> list[Iri]:
        """Every IRI object of ``p``."""
        return [v for v in self.all(p) if isinstance(v, Iri)]

    def text(self, p: Iri) -> str | None:
        """The literal object of ``p`` as text."""
        value = self.one(p)
        return value.value if isinstance(value, Literal) else None

    def texts(self, p: Iri) -> tuple[str, ...]:
        """Every literal object of ``p`` as text, sorted (the store keeps no order)."""
        return tuple(sorted(v.value for v in self.all(p) if isinstance(v, Literal)))

    def integer(self, p: Iri) -> int | None:
        """The literal object of ``p`` as an integer (None when absent or not a number)."""
        text = self.text(p)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def number(self, p: Iri) -> float | None:
        """The literal object of ``p`` as a float."""
        text = self.text(p)
        try:
            return float(text) if text is not None else None
        except ValueError:
            return None

    def time(self, p: Iri) -> datetime | None:
        """The ``xsd:dateTime`` object of ``p`` (UTC)."""
        value = self.one(p)
        if not isinstance(value, Literal):
            return None
        try:
            moment = datetime.fromisoformat(value.value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)

    def has_type(self, cls: Iri) -> bool:
        """Whether the node is typed ``cls``."""
        return cls in self.all(RDF.type)

    def llm(self) -> LlmCall | None:
        """The step's recorded LLM usage, if it called one."""
        tokens_in, tokens_out = self.integer(TG.inToken), self.integer(TG.outToken)
        model = self.text(TG.llmModel)
        if tokens_in is None and tokens_out is None and model is None:
            return None
        return LlmCall(model or "", tokens_in or 0, tokens_out or 0)


class TraceGraph:
    """Every node of one trace tree, and who generated what (trace nodes are IRIs, never blank)."""

    def __init__(self, rows: Iterable[tuple[Term, Term, Term]]) -> None:
        self.nodes: dict[Iri, Node] = {}
        for s, p, o in rows:
            if isinstance(s, Iri) and isinstance(p, Iri):
                self.node(s).props[p].append(o)
        for node in self.nodes.values():
            for p, values in node.props.items():
                node.props[p] = list(dict.fromkeys(values))

    @classmethod
    def read(cls, store: QuadStore, question: Iri) -> TraceGraph:
        """The trace tree rooted at ``question`` (one store read)."""
        return cls(store.trace_triples(question))

    def node(self, iri: Iri) -> Node:
        """The node of ``iri`` (empty when nothing is stored about it)."""
        if iri not in self.nodes:
            self.nodes[iri] = Node(iri)
        return self.nodes[iri]

    def questions(self) -> list[Node]:
        """Every question in the tree."""
        return [n for n in self.nodes.values() if n.has_type(TG.Question)]

    def steps(self, question: Iri, cls: Iri) -> list[Node]:
        """The steps of ``question`` typed ``cls``, sorted by IRI."""
        found = [n for n in self.nodes.values() if question in n.all(PROV.wasGeneratedBy) and n.has_type(cls)]
        return sorted(found, key=lambda n: str(n.iri))

    def step(self, question: Iri, cls: Iri) -> Node | None:
        """The (first) step of ``question`` typed ``cls``."""
        found = self.steps(question, cls)
        return found[0] if found else None
