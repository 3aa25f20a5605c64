"""The ranking step of a stored GraphRAG trace (``tg:Ranking``, docs/trace-format.md): its seeds and its ranked
passages with their scores and path, read from the trace graph, and their text and JSON forms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from provgraph.explain.graph import Node, TraceGraph
from provgraph.explain.model import ChunkRef
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import TG

__all__ = ["RankSeedView", "RankedPassageView", "RankingView", "ranking_of", "ranking_lines", "ranking_json"]


@dataclass(frozen=True, slots=True)
class RankSeedView:
    """A seed of the walk: its node and label, weight, how it was linked and at which hop."""

    node: Iri
    label: str
    weight: float | None
    linked_by: str | None
    hop: int | None


@dataclass(frozen=True, slots=True)
class RankedPassageView:
    """A ranked passage: the chunk (with its source), every score that placed it, and its path."""

    chunk: ChunkRef
    rank: int | None
    score: float | None
    graph_score: float | None
    graph_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    hop: int | None
    bridge: Iri | None
    bridge_label: str | None
    via: Iri | None
    covers: str | None = None  # the name of the question it was moved forward for (a comparison)


@dataclass(frozen=True, slots=True)
class RankingView:
    """The ranking step: whether anything passed the relevance floor, the closest chunk, seeds, passages."""

    iri: Iri
    relevant: bool
    closest: Iri | None
    seeds: tuple[RankSeedView, ...]
    passages: tuple[RankedPassageView, ...]


def ranking_of(node: Node, graph: TraceGraph, chunk: Callable[[Iri], ChunkRef],
               label: Callable[[Iri], str]) -> RankingView:
    """The ranking step ``node`` with its seeds (by hop, heaviest first) and passages (by rank)."""
    seeds = []
    for iri in node.iris(TG.seed):
        s = graph.node(iri)
        target = s.iri_of(TG.entity) or s.iri_of(TG.chunk)
        if target is not None:
            seeds.append(RankSeedView(target, label(target), s.number(TG.weight), s.text(TG.linkedBy),
                                      s.integer(TG.hop)))
    passages = []
    for iri in node.iris(TG.rankedPassage):
        p = graph.node(iri)
        c = p.iri_of(TG.chunk)
        if c is None:
            continue
        bridge = p.iri_of(TG.bridgeEntity)
        passages.append(RankedPassageView(
            chunk(c), p.integer(TG.rank), p.number(TG.score), p.number(TG.graphScore), p.integer(TG.graphRank),
            p.integer(TG.lexicalRank), p.integer(TG.denseRank), p.integer(TG.hop), bridge,
            label(bridge) if bridge is not None else None, p.iri_of(TG.bridgedFrom), p.text(TG.covers)))
    relevant = node.one(TG.relevant)
    return RankingView(
        node.iri, not (isinstance(relevant, Literal) and relevant.value == "false"), node.iri_of(TG.closest),
        tuple(sorted(seeds, key=lambda s: (s.hop or 0, -(s.weight or 0.0), s.node.value))),
        tuple(sorted(passages, key=lambda p: (p.rank is None, p.rank or 0))))


def _why(p: RankedPassageView) -> str:
    parts = [f"score {p.score:.4f}"] if p.score is not None else []
    if p.graph_rank is not None and p.graph_score is not None:
        parts.append(f"graph #{p.graph_rank} ({p.graph_score:.4f})")
    parts += [f"lexical #{p.lexical_rank}"] if p.lexical_rank is not None else []
    parts += [f"dense #{p.dense_rank}"] if p.dense_rank is not None else []
    if p.covers is not None:
        parts.append(f"first for {p.covers!r}")
    if p.bridge is not None:
        parts.append(f"hop {p.hop} via {p.bridge_label or p.bridge.value}")
    return ", ".join(parts)


def ranking_lines(r: RankingView, source: Callable[[ChunkRef], str]) -> list[str]:
    """The text form: the relevance, the seeds of each hop, then one line per passage with why it is there."""
    lines = [] if r.relevant else ["Nothing passed the relevance floor" + (f"; closest {r.closest.value}"
                                                                           if r.closest else "")]
    for hop in sorted({s.hop or 1 for s in r.seeds}):
        shown = [f"{s.label} ({s.linked_by}, {s.weight:.3f})" for s in r.seeds
                 if (s.hop or 1) == hop and s.weight is not None and not s.node.value.startswith("urn:chunk:")]
        chunks = sum(1 for s in r.seeds if (s.hop or 1) == hop and s.node.value.startswith("urn:chunk:"))
        lines.append(f"Seeds, hop {hop}: " + ", ".join(shown[:8]) + (f" and {chunks} passage(s)" if chunks else ""))
    lines.append(f"Passages ranked: {len(r.passages)}")
    lines += [f"  #{p.rank} {source(p.chunk)} [{_why(p)}]" for p in r.passages]
    return lines


def ranking_json(r: RankingView, chunk: Callable[[ChunkRef], dict[str, Any]]) -> dict[str, Any]:
    """The ``--format json`` form."""
    return {
        "iri": r.iri.value, "relevant": r.relevant, "closest": r.closest.value if r.closest else None,
        "seeds": [{"node": s.node.value, "label": s.label, "weight": s.weight, "linked_by": s.linked_by,
                   "hop": s.hop} for s in r.seeds],
        "passages": [{**chunk(p.chunk), "rank": p.rank, "score": p.score, "graph_score": p.graph_score,
                      "graph_rank": p.graph_rank, "lexical_rank": p.lexical_rank, "dense_rank": p.dense_rank,
                      "hop": p.hop, "bridge": p.bridge.value if p.bridge else None, "bridge_label": p.bridge_label,
                      "via": p.via.value if p.via else None, "covers": p.covers} for p in r.passages],
    }
