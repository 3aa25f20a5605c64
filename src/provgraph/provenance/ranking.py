"""The ranking step of GraphRAG and retrieve traces (``tg:Ranking``), in ``urn:graph:retrieval``.

One ``tg:Ranking`` entity per question: each hop's seeds (``tg:RankSeed``: the entity or chunk, its
weight, how it was linked, its hop) and each ranked passage (``tg:RankedPassage``: chunk, rank, fused
score, graph score and rank, lexical and dense ranks, hop, and for a bridge hop the entity that brought
it in and the passage that entity came from; ``tg:covers``, the question's name a passage was moved forward
for). ``tg:relevant false`` with ``tg:closest`` records a
question nothing in the collection was relevant to (see docs/trace-format.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from provgraph.provenance.common import Quads
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG, XSD

__all__ = ["SeedRecord", "PassageRecord", "ranking_quads"]

G = GRAPH_RETRIEVAL


@dataclass(frozen=True, slots=True)
class SeedRecord:
    """One seed of the walk: its node (entity or chunk IRI), weight, link kind and hop."""

    node: Iri
    weight: float
    linked_by: str
    hop: int
    chunk: bool = False


@dataclass(frozen=True, slots=True)
class PassageRecord:
    """One ranked passage with every score that placed it."""

    chunk: Iri
    rank: int
    score: float
    graph_score: float | None
    graph_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    hop: int
    bridge: Iri | None = None
    via: Iri | None = None
    covers: str | None = None


def ranking_quads(ranking: Iri, *, question: Iri, seeds: Sequence[SeedRecord], passages: Sequence[PassageRecord],
                  relevant: bool = True, closest: Iri | None = None, derived_from: Iri | None = None) -> list[Quad]:
    """The ranking step, its seeds and its passages (IRIs ``<ranking>/seed/N`` and ``<ranking>/passage/N``)."""
    q = Quads(G).types(ranking, PROV.Entity, TG.Ranking).text(ranking, RDFS.label, "Ranking")
    q.add(ranking, PROV.wasGeneratedBy, question)
    if derived_from is not None:
        q.add(ranking, PROV.wasDerivedFrom, derived_from)
    q.add(ranking, TG.relevant, Literal("true" if relevant else "false", datatype=XSD.boolean))
    if closest is not None:
        q.add(ranking, TG.closest, closest)
    for n, s in enumerate(seeds, start=1):
        node = Iri(f"{ranking.value}/seed/{n}")
        q.add(ranking, TG.seed, node).types(node, TG.RankSeed)
        q.add(node, TG.chunk if s.chunk else TG.entity, s.node).add(node, TG.weight, Literal.double(s.weight))
        q.text(node, TG.linkedBy, s.linked_by).integer(node, TG.hop, s.hop)
    for p in passages:
        node = Iri(f"{ranking.value}/passage/{p.rank}")
        q.add(ranking, TG.rankedPassage, node).types(node, TG.RankedPassage)
        q.text(node, RDFS.label, f"Rank {p.rank}").add(node, TG.chunk, p.chunk).integer(node, TG.rank, p.rank)
        q.add(node, TG.score, Literal.double(p.score)).integer(node, TG.hop, p.hop)
        if p.graph_score is not None and p.graph_rank is not None:
            q.add(node, TG.graphScore, Literal.double(p.graph_score)).integer(node, TG.graphRank, p.graph_rank)
        if p.lexical_rank is not None:
            q.integer(node, TG.lexicalRank, p.lexical_rank)
        if p.dense_rank is not None:
            q.integer(node, TG.denseRank, p.dense_rank)
        if p.bridge is not None:
            q.add(node, TG.bridgeEntity, p.bridge)
        if p.via is not None:
            q.add(node, TG.bridgedFrom, p.via)
        if p.covers is not None:
            q.text(node, TG.covers, p.covers)
    return q.items
