"""Graph-ranked passages: the question's entities and best passages seed a walk of the passage graph,
fused with the lexical and dense rankings, then a bridge hop from the entities the first passages name.

Hop 1 seeds :class:`~provgraph.retrieval.passage_graph.PassageGraph` with the entities linked to
the question (exact, alias and fuzzy lexical matches of their names, dense matches of their
labels; each weighted by its link and its specificity) and with the top lexical/dense passages
(down-weighted), and fuses the walk's ranking with the lexical and dense ones by weighted
reciprocal rank. Hop 2 (the *bridge*): the entities that the best first-hop passages mention and
the question does not name seed a second walk and a lexical search of the question with the
entity's name; its new passages follow the first hop's best. Every passage keeps what brought it
in (:class:`PassageScore`: graph score, lexical/dense ranks, seeds, bridge entity and hop), which the
trace records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from provgraph.librarian.lexical import query_terms
from provgraph.retrieval.coverage import cover, question_names
from provgraph.retrieval.hybrid import DENSE, LEXICAL, RRF_K, HybridRetriever, Ranked, fuse
from provgraph.retrieval.passage_graph import PassageGraph

__all__ = ["GraphRanker", "PassageScore", "Seed", "Ranking", "RankParams", "GRAPH", "RELEVANCE_FLOOR"]

GRAPH = "graph"
RELEVANCE_FLOOR = 0.35
"""A question is about the collection when an entity's name is in it, or a passage's dense similarity to it is
at least this (bench/multihop.py questions all pass; off-topic ones fall below)."""


@dataclass(frozen=True, slots=True)
class RankParams:
    """Weights of the ranking (tuned on the multi-hop TUNE halves, bench/multihop.py)."""

    restart: float = 0.5
    passage_seeds: int = 5
    passage_seed_weight: float = 0.3
    entity_limit: int = 10
    weights: tuple[tuple[str, float], ...] = ((GRAPH, 0.5), (LEXICAL, 1.0), (DENSE, 0.3))
    first_hop_keep: int = 2  # first-hop passages that stay ahead of the bridge hop's
    bridge_from: int = 2  # best first-hop passages whose entities seed the bridge hop
    bridge_entities: int = 3
    pool: int = 30
    common_noun_weight: float = 0.3  # a seed's link weight when its label is a common noun phrase, not a name
    common_word_share: float = 0.02  # a one-word bridge label in more of the chunks than this share and
    common_word_chunks: int = 25  # than this many, and than common_word_ratio times the chunks that name it
    common_word_ratio: float = 2.0  # as an entity, is a common word ("Men", "College"), not a bridge
    cover: bool = True  # a passage for each name the question says first (comparisons)
    exact_weight: float = 0.0  # the lexical searches' weight of exact word forms: stems only (multi-hop TUNE halves)


@dataclass(frozen=True, slots=True)
class Seed:
    """A node the walk started from: entity or chunk, its weight, and how it was linked."""

    id: str
    weight: float
    kind: str  # "entity" or "chunk"
    how: str  # "exact", "lexical", "dense", "lexical+dense", "bridge"


@dataclass(frozen=True, slots=True)
class PassageScore:
    """Why a passage is where it is: fused score, graph score and rank, lexical/dense ranks, hop, bridge."""

    chunk: str
    rank: int
    score: float
    graph_score: float | None
    graph_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    hop: int
    bridge: str | None = None  # the entity that brought it in (hop 2)
    via: str | None = None  # the first-hop passage that entity came from
    covers: str | None = None  # the question's name it was moved forward for (:mod:`~provgraph.retrieval.coverage`)
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Ranking:
    """The ranked passages, the seeds of each hop, and the chunk count of the graph."""

    passages: tuple[PassageScore, ...]
    seeds: tuple[tuple[Seed, ...], ...]  # per hop
    graph_chunks: int
    entities: tuple[Ranked, ...] = ()  # the entities linked to the question, best first
    relevant: bool = True  # False: nothing passed the relevance floor (``passages`` are then the closest)
    similarity: float | None = None  # the best passage's dense similarity to the question

    def chain(self) -> list[PassageScore]:
        """The best passage of each hop, in hop order (a bridge question's chain of evidence)."""
        out: dict[int, PassageScore] = {}
        for p in self.passages:
            out.setdefault(p.hop, p)
        return [out[h] for h in sorted(out)]


def _rank_of(ranked: Ranked, retriever: str) -> int | None:
    found = ranked.by(retriever)
    return found.rank if found is not None else None


class GraphRanker:
    """Ranks a collection's passages for a question, see the module docstring."""

    def __init__(self, retriever: HybridRetriever, graph: PassageGraph | None = None,
                 params: RankParams | None = None) -> None:
        self.retriever = retriever
        self.graph = graph if graph is not None else retriever.graph  # the retriever's: kept between questions
        self.params = params or RankParams()

    def rank(self, question: str, vector: np.ndarray | None, k: int, *, bridge: bool = True) -> Ranking:
        """The ``k`` best passages for ``question`` (``vector``: its embedding, or None for lexical only)."""
        with self.retriever.one_question():  # the hops' dense searches of the same vector are one search
            return self._rank(question, vector, k, bridge=bridge)

    def _rank(self, question: str, vector: np.ndarray | None, k: int, *, bridge: bool) -> Ranking:
        p = self.params
        self.graph.sync()
        hits = self.retriever.chunks(question, vector, p.pool, exact=p.exact_weight)
        entities = self.retriever.entities(question, vector, p.entity_limit)
        seeds = self._entity_seeds(entities) + self._passage_seeds(hits)
        first = self._fused(hits, seeds, 1)
        if p.cover:
            first = cover(question, first, question_names(question, entities, self.retriever.names), self.graph.chunks_of)
        passages = first[:k]
        hops: list[tuple[Seed, ...]] = [tuple(seeds)]
        if bridge and first:
            named = {s.id for s in seeds if s.kind == "entity"}
            second, bridge_seeds = self._bridge(question, vector, first[: p.bridge_from], named)
            if bridge_seeds:
                hops.append(tuple(bridge_seeds))
                passages = self._merge(first, second, k)
        similarity = max((f.score for h in hits if (f := h.by(DENSE)) is not None), default=None)
        linked = any(s.how == "exact" for s in seeds)
        is_relevant = linked or (similarity is not None and similarity >= RELEVANCE_FLOOR)
        ranked = tuple(PassageScore(s.chunk, i, s.score, s.graph_score, s.graph_rank, s.lexical_rank, s.dense_rank,
                                    s.hop, s.bridge, s.via, s.covers, s.text) for i, s in enumerate(passages, start=1))
        return Ranking(ranked, tuple(hops), self.graph.chunk_count, tuple(entities), is_relevant, similarity)

    def _named(self, entity: str) -> bool:
        """Whether the entity is a name (a capital in its label) rather than a common noun phrase."""
        names = self.retriever.names(entity)
        return bool(names) and any(c.isupper() for c in names[0])

    def _common_word(self, entity: str) -> bool:
        """Whether the entity's label is one word that many chunks have ("Men", "College"): no bridge."""
        names = self.retriever.names(entity)
        if not names or len(query_terms(names[0])) != 1:
            return False
        share = self.retriever.lexical.share(names[0])
        p = self.params
        have = share * self.graph.chunk_count
        return (share > p.common_word_share and have > p.common_word_chunks
                and have > p.common_word_ratio * len(self.graph.chunks_of(entity)))

    def _entity_seeds(self, entities: Sequence[Ranked]) -> list[Seed]:
        p = self.params
        out = []
        for r in entities:
            specificity = self.graph.specificity(r.id)
            if specificity <= 0:
                continue
            how = "exact" if r.exact else "+".join(f.retriever for f in r.found)
            link = 1.0 if r.exact else min(1.0, r.score * RRF_K)
            if not self._named(r.id):
                link *= p.common_noun_weight
            out.append(Seed(r.id, link * specificity, "entity", how))
        return out

    def _passage_seeds(self, hits: Sequence[Ranked]) -> list[Seed]:
        p = self.params
        content = [h for h in hits if not h.demoted][: p.passage_seeds]
        if not content:
            return []
        top = content[0].score
        return [Seed(h.id, p.passage_seed_weight * h.score / top, "chunk", "+".join(f.retriever for f in h.found))
                for h in content]

    def _fused(self, hits: Sequence[Ranked], seeds: Sequence[Seed], hop: int, *,
               bridge: str | None = None, via: str | None = None) -> list[PassageScore]:
        """The walk from ``seeds`` fused with the lexical and dense rankings of ``hits``."""
        p = self.params
        walked = self.graph.rank({s.id: s.weight for s in seeds}, limit=p.pool, restart=p.restart)
        by_id = {h.id: h for h in hits}
        demoted = {h.id for h in hits if h.demoted}
        lists = {GRAPH: [(g.id, g.score) for g in walked if g.id not in demoted]}
        lexical = sorted((h for h in hits if h.by(LEXICAL)), key=lambda h: h.by(LEXICAL).rank)  # type: ignore[union-attr]
        dense = sorted((h for h in hits if h.by(DENSE)), key=lambda h: h.by(DENSE).rank)  # type: ignore[union-attr]
        lists[LEXICAL] = [(h.id, h.by(LEXICAL).score) for h in lexical]  # type: ignore[union-attr]
        lists[DENSE] = [(h.id, h.by(DENSE).score) for h in dense]  # type: ignore[union-attr]
        graph_rank = {g.id: (i, g.score) for i, g in enumerate(walked, start=1)}
        out = []
        for r in fuse(lists, weights=dict(p.weights)):
            hit = by_id.get(r.id)
            g = graph_rank.get(r.id)
            out.append(PassageScore(r.id, 0, r.score, g[1] if g else None, g[0] if g else None,
                                    _rank_of(hit, LEXICAL) if hit else None, _rank_of(hit, DENSE) if hit else None,
                                    hop, bridge, via, text=hit.text if hit else None))
        out.sort(key=lambda s: (s.chunk in demoted, -s.score, s.chunk))
        return out

    def _bridge(self, question: str, vector: np.ndarray | None, best: Sequence[PassageScore],
                named: set[str]) -> tuple[list[PassageScore], list[Seed]]:
        """Hop 2: the best passages' entities the question does not name, each a seed and a search."""
        p = self.params
        picked: list[tuple[str, str]] = []  # (entity, the passage it came from)
        asked = set(query_terms(question))
        for passage in best:
            for entity in self.graph.entities_of(passage.chunk):
                if (entity not in named and all(entity != e for e, _ in picked) and self.graph.specificity(entity) < 1
                        and self._named(entity) and not self._common_word(entity) and not set(query_terms(self.retriever.names(entity)[0])) <= asked):
                    picked.append((entity, passage.chunk))
        picked = picked[: p.bridge_entities]
        if not picked:
            return [], []
        seeds = [Seed(e, self.graph.specificity(e), "entity", "bridge") for e, _ in picked]
        seen = {s.chunk for s in best}
        merged: dict[str, PassageScore] = {}
        for entity, via in picked:
            names = self.retriever.names(entity)
            if not names:
                continue
            hits = self.retriever.chunks(f"{names[0]} {question}", vector, p.pool, exact=p.exact_weight)
            one = [Seed(entity, 1.0, "entity", "bridge")]
            for s in self._fused(hits, one, 2, bridge=entity, via=via):
                if s.chunk not in seen and (s.chunk not in merged or merged[s.chunk].score < s.score):
                    merged[s.chunk] = s
        return sorted(merged.values(), key=lambda s: (not self.about(s), -s.score, s.chunk)), seeds

    def about(self, passage: PassageScore) -> bool:
        """Whether a bridge passage is about its bridge entity: the entity's name is in its first line (title)."""
        if passage.bridge is None or passage.text is None:
            return False
        head = passage.text.lstrip().split("\n", 1)[0].casefold()
        return any(name.casefold() in head for name in self.retriever.names(passage.bridge))

    def _merge(self, first: Sequence[PassageScore], second: Sequence[PassageScore], k: int) -> list[PassageScore]:
        """The first hop's best, then the bridge hop's and the first hop's others interleaved, each once."""
        keep = list(first[: max(self.params.first_hop_keep, sum(s.covers is not None for s in first))])
        taken = {s.chunk for s in keep}
        rest_first = [s for s in first[len(keep):] if s.chunk not in taken]
        rest_second = [s for s in second if s.chunk not in taken]
        out = keep
        i = j = 0
        while len(out) < k and (i < len(rest_second) or j < len(rest_first)):
            if i < len(rest_second):
                s = rest_second[i]
                i += 1
                if s.chunk not in taken:
                    out.append(s)
                    taken.add(s.chunk)
            if len(out) < k and j < len(rest_first):
                s = rest_first[j]
                j += 1
                if s.chunk not in taken:
                    out.append(s)
                    taken.add(s.chunk)
        return out

