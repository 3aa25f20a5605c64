"""GraphRAG edge selection: labelled edges, ids, the similarity pre-filter, and the choice itself.

Edges are shown to the LLM as ``id: s_label | p_label | o_label`` where ``id`` is the first 8
hex digits of SHA-256 over ``"{s}|{p}|{o}"`` (labels). The LLM answers JSON Lines, one
``{"id", "reasoning"}`` per relevant edge; the id map restores the ORIGINAL terms, and when two
edges share their labels (hence their id) both are kept. Malformed lines and ids the LLM
invented are dropped and counted, never fatal. Without an LLM, edges are chosen by the cosine
similarity of their labelled text to the question, and the reasoning says so; with one,
:func:`select_or_fallback` does the same when the LLM fails, runs out of time or answers nothing
usable, and each edge's reasoning says why.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from provgraph.errors import ModelError
from provgraph.models.base import ChatModel, Embedder, Message, Usage, system, user
from provgraph.models.jsonrepair import parse_jsonl
from provgraph.rdf.terms import TripleTerm
from provgraph.retrieval.labels import LabelCache
from provgraph.retrieval.read_cache import Bounded

__all__ = [
    "LabelledEdge",
    "Selected",
    "Selection",
    "edge_id",
    "label_edges",
    "similarities",
    "prefilter",
    "selection_messages",
    "select_with_llm",
    "select_by_similarity",
    "select_or_fallback",
    "SELECTION_TOKENS_PER_EDGE",
]

SELECTION_TOKENS_PER_EDGE = 40
"""Output tokens allowed per selected edge (an id and a one-line reason)."""


def edge_id(s: str, p: str, o: str) -> str:
    """The edge's id for the LLM: 8 hex digits of SHA-256 over its labels.

    >>> edge_id("Marie Curie", "discovered", "polonium")
    'b3e535fe'
    """
    return hashlib.sha256(f"{s}|{p}|{o}".encode("utf-8")).hexdigest()[:8]


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class LabelledEdge:
    """An edge with its original terms and the labels shown to people and models."""

    edge: TripleTerm
    s: str
    p: str
    o: str

    @property
    def id(self) -> str:
        """The 8-hex-digit id over the labels."""
        return edge_id(self.s, self.p, self.o)

    @property
    def text(self) -> str:
        """``"s p o"`` on one line, e.g. ``Marie Curie discovered polonium``."""
        return _flat(f"{self.s} {self.p} {self.o}")

    @property
    def line(self) -> str:
        """``id: s | p | o`` as listed in the selection prompt."""
        return f"{self.id}: {_flat(self.s)} | {_flat(self.p)} | {_flat(self.o)}"


@dataclass(frozen=True, slots=True)
class Selected:
    """One chosen edge, why, and its similarity to the question."""

    edge: LabelledEdge
    reasoning: str
    score: float | None


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of edge selection; ``malformed`` and ``unknown`` count what was dropped."""

    chosen: list[Selected]
    malformed: int = 0
    unknown: int = 0
    usage: Usage | None = None
    warnings: list[str] = field(default_factory=list)


def label_edges(edges: Sequence[TripleTerm], labels: LabelCache) -> list[LabelledEdge]:
    """Label every edge, resolving all their terms in one batch first."""
    labels.resolve(t for e in edges for t in (e.s, e.p, e.o))
    return [LabelledEdge(e, labels.label(e.s), labels.label(e.p), labels.label(e.o)) for e in edges]


def similarities(embedder: Embedder, question: np.ndarray, edges: Sequence[LabelledEdge], *,
                 cache: Bounded | None = None) -> np.ndarray:
    """Cosine similarity of each edge's ``"s p o"`` text to the question vector (one embed call).

    ``cache`` (text → vector, for this embedder) answers the texts it holds and keeps those embedded:
    a text's vector does not depend on the other texts embedded with it.
    """
    if not edges:
        return np.zeros(0, dtype=np.float32)
    texts = [e.text for e in edges]
    if cache is None:
        return embedder.embed(texts) @ question
    vectors = cache.through(texts, lambda missing: dict(zip(missing, embedder.embed(missing))))
    return np.stack([vectors[t] for t in texts]) @ question


def prefilter(edges: Sequence[LabelledEdge], scores: np.ndarray, limit: int) -> tuple[list[LabelledEdge], np.ndarray]:
    """The ``limit`` edges most similar to the question (all of them, in order, when there are fewer)."""
    if len(edges) <= limit:
        return list(edges), scores
    keep = sorted(np.argsort(-scores, kind="stable")[:limit].tolist())
    return [edges[i] for i in keep], scores[keep]


def selection_messages(question: str, edges: Sequence[LabelledEdge], limit: int) -> list[Message]:
    """The selection prompt: each distinct id once, then the question."""
    lines = list(dict.fromkeys(e.line for e in edges))
    return [
        system(
            "You pick the knowledge-graph edges that help answer a question. Each edge is listed as "
            "`id: subject | predicate | object`. Reply in JSON Lines only: one line "
            '{"id": "<id>", "reasoning": "<why this edge helps answer the question>"} per relevant edge, '
            f"most relevant first, at most {limit} lines. Use only ids from the list. "
            "If no edge is relevant, reply with nothing."
        ),
        user("Edges:\n" + "\n".join(lines) + f"\n\nQuestion: {question}"),
    ]


def _uri_map(edges: Sequence[LabelledEdge], scores: np.ndarray) -> dict[str, list[tuple[LabelledEdge, float]]]:
    out: dict[str, list[tuple[LabelledEdge, float]]] = {}
    for edge, score in zip(edges, scores.tolist()):
        out.setdefault(edge.id, []).append((edge, float(score)))
    return out


async def select_with_llm(
    llm: ChatModel, question: str, edges: Sequence[LabelledEdge], scores: np.ndarray, limit: int
) -> Selection:
    """Ask the LLM which edges matter (one call); at most ``limit`` ids, each with ALL its terms."""
    if not edges:
        return Selection([])
    completion = await llm.complete(selection_messages(question, edges, limit),
                                    max_tokens=limit * SELECTION_TOKENS_PER_EDGE + 16)
    lines = parse_jsonl(completion.text)
    by_id = _uri_map(edges, scores)
    malformed, unknown = lines.dropped, 0
    taken: list[str] = []
    reasons: dict[str, str] = {}
    for item in lines.items:
        ident = item.get("id")
        if not isinstance(ident, str) or not ident.strip():
            malformed += 1
            continue
        ident = ident.strip().lower()
        if ident not in by_id:
            unknown += 1
            continue
        if ident in reasons or len(taken) >= limit:
            continue
        reason = item.get("reasoning")
        reasons[ident] = _flat(reason) if isinstance(reason, str) and reason.strip() else "(no reasoning given)"
        taken.append(ident)
    chosen = [Selected(edge, reasons[i], score) for i in taken for edge, score in by_id[i]]
    warnings = []
    if malformed:
        warnings.append(f"{malformed} malformed selection line(s) dropped")
    if unknown:
        warnings.append(f"{unknown} unknown edge id(s) from the model dropped")
    return Selection(chosen, malformed, unknown, completion.usage, warnings)


def select_by_similarity(
    edges: Sequence[LabelledEdge], scores: np.ndarray, limit: int, min_similarity: float,
    *, why: str = "no LLM configured", similarity: Mapping[TripleTerm, float] | None = None,
) -> Selection:
    """No-LLM selection: the ``limit`` edges most similar to the question, above ``min_similarity``.

    ``why`` ends each edge's reasoning (why similarity rather than the LLM chose it). ``similarity`` gives
    each edge's plain embedding similarity when ``scores`` add hybrid-retrieval boosts to it, so the
    reasoning can say what the score is made of.
    """
    order = np.argsort(-scores, kind="stable").tolist()
    chosen = []
    for i in order[:limit]:
        score = float(scores[i])
        if score < min_similarity:
            break
        edge = edges[i]
        sim = score if similarity is None else similarity.get(edge.edge, score)
        if abs(score - sim) < 1e-6:
            reasoning = f"Selected by embedding similarity {score:.2f} between the question and '{edge.text}' ({why})"
        else:
            reasoning = (f"Selected by score {score:.2f}: embedding similarity {sim:.2f} between the question and "
                         f"'{edge.text}' plus {score - sim:.2f} from hybrid retrieval (the question's named "
                         f"entities / paths between them / top-ranked passages) ({why})")
        chosen.append(Selected(edge, reasoning, score))
    return Selection(chosen)


async def select_or_fallback(
    llm: ChatModel, question: str, edges: Sequence[LabelledEdge], scores: np.ndarray, limit: int,
    min_similarity: float, *, timeout: float, similarity: Mapping[TripleTerm, float] | None = None,
) -> Selection:
    """LLM selection within ``timeout`` seconds; similarity selection when the LLM fails, runs out of
    time, or its reply holds lines but no usable edge. The fallback's reasoning and warning say why."""
    if not edges:
        return Selection([])
    usage: Usage | None = None
    warnings: list[str] = []
    try:
        if timeout <= 0:
            raise TimeoutError
        selection = await asyncio.wait_for(select_with_llm(llm, question, edges, scores, limit), timeout)
    except TimeoutError:
        reason = "the LLM's edge selection ran past the question deadline"
    except ModelError as exc:
        reason = f"the LLM's edge selection failed: {_flat(str(exc))[:400]}"
    else:
        if selection.chosen or not (selection.malformed or selection.unknown):
            return selection
        usage, warnings = selection.usage, selection.warnings
        reason = (f"the LLM's edge selection was unusable ({selection.malformed} malformed line(s), "
                  f"{selection.unknown} unknown id(s))")
    fallback = select_by_similarity(edges, scores, limit, min_similarity, why=f"fallback: {reason}",
                                    similarity=similarity)
    return Selection(fallback.chosen, usage=usage,
                     warnings=[*warnings, f"edge selection fell back to similarity: {reason}"])
