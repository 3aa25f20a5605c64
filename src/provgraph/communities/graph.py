"""The weighted entity graph communities are found in, read from the facts and their support sets.

Nodes are the entities (IRIs) that facts connect; an edge joins two entities that one or more facts
connect, weighted by the facts' support (how many extraction subgraphs contain each; SPEC §4.2).
A fact whose object is a literal (a definition, a date) connects nothing: it belongs to its
subject's communities. Schema facts (labels, types) are left out, as GraphRAG leaves them out.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.rdf.vocab import SCHEMA_PREDICATES

__all__ = ["EntityGraph", "entity_graph"]


@dataclass
class EntityGraph:
    """Entities (sorted), weighted entity pairs, and the facts each entity takes part in."""

    entities: list[Iri]
    index: dict[Iri, int]
    weights: dict[tuple[int, int], int]  # (i, j) with i < j → summed support
    facts_of: dict[int, list[TripleTerm]] = field(default_factory=dict)  # entity → facts naming it (as s or o)
    support: dict[TripleTerm, int] = field(default_factory=dict)
    digest: str = ""  # of the facts and their support: the state of the knowledge graph this was read from
    text: dict[TripleTerm, str] = field(default_factory=dict)  # each fact's N-Triples form (its sort key)

    def strength(self) -> list[int]:
        """Each entity's weighted degree (summed support of its edges)."""
        out = [0] * len(self.entities)
        for (i, j), w in self.weights.items():
            out[i] += w
            out[j] += w
        return out


def entity_graph(support: Iterable[tuple[TripleTerm, int]]) -> EntityGraph:
    """The graph of ``support`` (fact, number of subgraphs containing it), deterministic for the same facts."""
    keyed = sorted(((str(f), f, n) for f, n in support if f.p not in SCHEMA_PREDICATES and isinstance(f.s, Iri)),
                   key=lambda kfn: kfn[0])  # already in this order from fact_support: one pass
    text = {f: k for k, f, _ in keyed}
    facts = [(f, n) for _, f, n in keyed]
    names = sorted({t for f, _ in facts for t in (f.s, f.o) if isinstance(t, Iri)}, key=lambda t: t.value)
    index = {e: i for i, e in enumerate(names)}
    weights: dict[tuple[int, int], int] = defaultdict(int)
    facts_of: dict[int, list[TripleTerm]] = defaultdict(list)
    digest = hashlib.sha256()
    for fact, n in facts:
        digest.update(f"{text[fact]} {n}\n".encode())
        i = index[fact.s]  # type: ignore[index]
        facts_of[i].append(fact)
        if isinstance(fact.o, Iri) and fact.o != fact.s:
            j = index[fact.o]
            facts_of[j].append(fact)
            weights[(min(i, j), max(i, j))] += n
    return EntityGraph(names, index, dict(weights), dict(facts_of), dict(facts), "sha256:" + digest.hexdigest()[:32],
                       text)
