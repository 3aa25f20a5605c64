"""What the last ``communities build`` read, so that a build on an unchanged graph does nothing.

The communities are found in the facts the extraction subgraphs contain (``fact_support``), and
every write of a subgraph writes its activity with a new ``prov:startedAtTime``; removing one
removes both. The fingerprint of ``urn:graph:source`` is therefore the digest of its subgraphs and
its activities' start times: it moves with every load, extraction and removal, and reading it takes
a few thousand quads instead of every fact (20,000 chunks: ~0.1 s against ~20 s). A build stores it
with its parameters once its reports are written; the next build with the same parameters, the
same fingerprint and every community reported stops there.
"""

from __future__ import annotations

import hashlib

from provgraph.communities.cluster import LeidenParams
from provgraph.provenance.communities import STATE, state_quads
from provgraph.rdf.terms import Literal, Quad
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, GRAPH_SOURCE, PROV, RDF, TG
from provgraph.store.base import QuadStore

__all__ = ["source_fingerprint", "StoredState", "stored_state", "state_update"]


def source_fingerprint(store: QuadStore) -> str:
    """A digest that changes whenever the extraction subgraphs (and so the facts' support) may have."""
    digest = hashlib.sha256()
    lines = sorted(f"{q.s} {q.o}" for q in store.match(None, PROV.startedAtTime, None, g=GRAPH_SOURCE))
    digest.update("\n".join(lines).encode())
    digest.update(f"\nsubgraphs {store.count(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)}".encode())
    return "sha256:" + digest.hexdigest()[:32]


class StoredState:
    """The fingerprint and parameters the last complete build recorded, with its entity and fact counts."""

    __slots__ = ("fingerprint", "parameters", "entities", "facts")

    def __init__(self, fingerprint: str, parameters: str, entities: int, facts: int) -> None:
        self.fingerprint, self.parameters, self.entities, self.facts = fingerprint, parameters, entities, facts

    def matches(self, fingerprint: str, params: LeidenParams) -> bool:
        """True when a build with ``params`` over a graph of ``fingerprint`` would find what is stored."""
        return self.fingerprint == fingerprint and self.parameters == params.text()


def _quads(store: QuadStore) -> list[Quad]:
    return list(store.match(STATE, None, None, g=GRAPH_COMMUNITIES))


def stored_state(store: QuadStore) -> StoredState | None:
    """What the last complete build recorded (None before the first)."""
    values = {q.p: q.o.value for q in _quads(store) if isinstance(q.o, Literal)}
    if TG.sourceState not in values:
        return None
    return StoredState(values[TG.sourceState], values.get(TG.arguments, ""), int(values.get(TG.memberCount, 0)),
                       int(values.get(TG.factCount, 0)))


def state_update(store: QuadStore, fingerprint: str, params: LeidenParams, entities: int,
                 facts: int) -> tuple[list[Quad], list[Quad]]:
    """(remove, add) replacing the recorded state."""
    return _quads(store), state_quads(fingerprint, params.text(), entities, facts)
