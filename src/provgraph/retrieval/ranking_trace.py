"""A :class:`~provgraph.retrieval.graph_rank.Ranking` as the trace's ranking step (docs/trace-format.md)."""

from __future__ import annotations

from provgraph.provenance.ranking import PassageRecord, SeedRecord, ranking_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Quad
from provgraph.retrieval.graph_rank import Ranking

__all__ = ["ranking_step", "relevant"]


def relevant(ranking: Ranking) -> bool:
    """Whether anything in the collection passed the relevance floor for the question."""
    return ranking.relevant and bool(ranking.passages)


def ranking_step(sid: str, question: Iri, ranking: Ranking) -> tuple[Iri, list[Quad]]:
    """The ranking step's IRI and quads: each hop's seeds and each passage with its scores and path."""
    iri = ids.ranking_iri(sid)
    seeds = [SeedRecord(Iri(s.id), s.weight, s.how, hop, chunk=s.kind == "chunk")
             for hop, group in enumerate(ranking.seeds, start=1) for s in group]
    passages = [PassageRecord(Iri(p.chunk), p.rank, p.score, p.graph_score, p.graph_rank, p.lexical_rank,
                              p.dense_rank, p.hop, Iri(p.bridge) if p.bridge else None, Iri(p.via) if p.via else None)
                for p in ranking.passages]
    closest = Iri(ranking.passages[0].chunk) if ranking.passages and not relevant(ranking) else None
    return iri, ranking_quads(iri, question=question, seeds=seeds, passages=passages, relevant=relevant(ranking),
                              closest=closest)
