"""A :class:`~provgraph.retrieval.graph_rank.Ranking` as the trace's ranking step (docs/trace-format.md).

The step records what placed the passages that count, not the whole ranking: the ``TRACED_PASSAGES`` best
passages with their scores and path (the bridge hop's passages are among them: they follow the first hop's
best two) and each hop's ``TRACED_SEEDS`` heaviest seeds. Ten passages and every seed made a GraphRAG trace
two and a half times the size of the rest of it (a backup of a few traced questions went over a 1 MB body).
"""

from __future__ import annotations

from provgraph.provenance.ranking import PassageRecord, SeedRecord, ranking_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Quad
from provgraph.retrieval.graph_rank import Ranking

__all__ = ["ranking_step", "relevant", "TRACED_PASSAGES", "TRACED_SEEDS"]

TRACED_PASSAGES = 5
TRACED_SEEDS = 5


def relevant(ranking: Ranking) -> bool:
    """Whether anything in the collection passed the relevance floor for the question."""
    return ranking.relevant and bool(ranking.passages)


def ranking_step(sid: str, question: Iri, ranking: Ranking) -> tuple[Iri, list[Quad]]:
    """The ranking step's IRI and quads: each hop's seeds and each passage with its scores and path."""
    iri = ids.ranking_iri(sid)
    seeds = [SeedRecord(Iri(s.id), s.weight, s.how, hop, chunk=s.kind == "chunk")
             for hop, group in enumerate(ranking.seeds, start=1)
             for s in sorted(group, key=lambda s: (-s.weight, s.id))[:TRACED_SEEDS]]
    passages = [PassageRecord(Iri(p.chunk), p.rank, p.score, p.graph_score, p.graph_rank, p.lexical_rank,
                              p.dense_rank, p.hop, Iri(p.bridge) if p.bridge else None, Iri(p.via) if p.via else None,
                              p.covers)
                for p in ranking.passages[:TRACED_PASSAGES]]
    closest = Iri(ranking.passages[0].chunk) if ranking.passages and not relevant(ranking) else None
    return iri, ranking_quads(iri, question=question, seeds=seeds, passages=passages, relevant=relevant(ranking),
                              closest=closest)
