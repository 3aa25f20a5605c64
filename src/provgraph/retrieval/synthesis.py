"""GraphRAG synthesis: citation markers for sources, the LLM prompt, and the extractive answer.

A citation marker ``[n]`` names one supporting passage: a chunk with its page or section and
document, and exact offsets. Every source of every selected edge gets the marker of its chunk,
numbered in the order the selected edges come (for an extractive answer, the chunks it quotes
come first, in the order quoted). The LLM sees each selected edge followed by its
markers and is asked to cite them. Without an LLM the answer is extractive: sentences of the
supporting chunks that name both ends of a selected edge, ranked by similarity to the question,
each with its chunk's marker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from provgraph.events import Source
from provgraph.extract.clean_text import strip_markers
from provgraph.extract.nlp import split_sentences
from provgraph.extract.nlp_sentences import is_terminated
from provgraph.models.base import Embedder, Message, system, user
from provgraph.rdf.terms import TripleTerm
from provgraph.retrieval.edge_select import LabelledEdge

__all__ = [
    "NOTHING_RELEVANT",
    "EMPTY_ANSWER",
    "NOTHING_CITABLE",
    "Citations",
    "cite",
    "cited_only",
    "synthesis_messages",
    "Quote",
    "extractive_answer",
    "render",
    "with_marker",
]

NOTHING_RELEVANT = "Nothing relevant found: the knowledge graph holds nothing relevant to this question."
NOTHING_CITABLE = "The selected facts have no recorded source text to quote."
EMPTY_ANSWER = "No answer: the model returned an empty response for the selected edges."

_END = re.compile(r"[.!?…]+[\"'”’»)\]]*$")


@dataclass(frozen=True, slots=True)
class Citations:
    """Sources with markers, in order, and the markers of each edge and each chunk."""

    sources: tuple[Source, ...]
    by_edge: dict[TripleTerm, list[str]]
    by_chunk: dict[str, str]


def cite(
    edges: Sequence[TripleTerm], found: Mapping[TripleTerm, Sequence[Source]], *, first: Sequence[str] = ()
) -> Citations:
    """Number the supporting chunks ``[1]``, ``[2]``… and mark every source with its chunk's marker.

    Chunks in ``first`` (e.g. in the order an extractive answer cites them) are numbered first.
    """
    by_chunk: dict[str, str] = {chunk: f"[{i}]" for i, chunk in enumerate(dict.fromkeys(first), 1)}
    by_edge: dict[TripleTerm, list[str]] = {}
    out: list[Source] = []
    for edge in dict.fromkeys(edges):
        markers: list[str] = []
        for src in found.get(edge, ()):
            marker = by_chunk.setdefault(src.chunk, f"[{len(by_chunk) + 1}]")
            out.append(replace(src, marker=marker))
            if marker not in markers:
                markers.append(marker)
        by_edge[edge] = markers
    return Citations(tuple(out), by_edge, by_chunk)


def cited_only(citations: Citations, chunks: Sequence[str]) -> Citations:
    """The citations restricted to the sources of ``chunks`` (what the answer cites); markers unchanged."""
    keep = set(chunks)
    sources = tuple(s for s in citations.sources if s.chunk in keep)
    return Citations(sources, citations.by_edge, citations.by_chunk)


def synthesis_messages(question: str, edges: Sequence[LabelledEdge], citations: Citations) -> list[Message]:
    """The synthesis prompt: the selected edges only, each followed by its citation markers."""
    facts = []
    for e in edges:
        markers = "".join(citations.by_edge.get(e.edge, []))
        facts.append(f"- {e.s} | {e.p} | {e.o}" + (f" {markers}" if markers else ""))
    return [
        system(
            "Answer the question using only the knowledge-graph facts given, written as "
            "`subject | predicate | object` and followed by citation markers such as [1]. "
            "After each statement, cite the markers of the facts it relies on, e.g. "
            "'Marie Curie discovered polonium [1].' If the facts do not answer the question, say so plainly."
        ),
        user("Facts:\n" + "\n".join(dict.fromkeys(facts)) + f"\n\nQuestion: {question}"),
    ]


def with_marker(sentence: str, marker: str) -> str:
    """The quote on one line, free of markup and footnote markers, each of its sentences with ``marker``
    before its final punctuation (a quote may hold a sentence and the one before it)."""
    flat = strip_markers(sentence)
    parts = [" ".join(s.text.split()) for s in split_sentences(flat)] or [flat]
    return " ".join(_mark_one(part, marker) for part in parts if part)


def _mark_one(flat: str, marker: str) -> str:
    end = _END.search(flat)
    if end is None:
        return f"{flat} {marker}."
    return f"{flat[: end.start()]} {marker}{end.group(0)}"


@dataclass(frozen=True, slots=True)
class Quote:
    """A sentence of an extractive answer and the chunks it cites."""

    text: str
    chunks: tuple[str, ...]


def _candidates(
    edges: Sequence[LabelledEdge], found: Mapping[TripleTerm, Sequence[Source]], texts: Mapping[str, str]
) -> list[Quote]:
    out: dict[str, Quote] = {}
    split_cache: dict[str, tuple[str, ...]] = {}
    for e in edges:
        ends = (e.s.casefold(), e.o.casefold())
        for src in found.get(e.edge, ()):
            text = texts.get(src.chunk)
            if text is None:
                continue
            if src.chunk not in split_cache:
                split_cache[src.chunk] = tuple(s.text for s in split_sentences(text) if is_terminated(s.text))
            for sentence in split_cache[src.chunk]:
                folded = sentence.casefold()
                if all(end in folded for end in ends):
                    out.setdefault(" ".join(folded.split()), Quote(sentence, (src.chunk,)))
    return list(out.values())


def extractive_answer(
    question: np.ndarray,
    embedder: Embedder,
    edges: Sequence[LabelledEdge],
    found: Mapping[TripleTerm, Sequence[Source]],
    texts: Mapping[str, str],
    *,
    limit: int = 5,
) -> list[Quote]:
    """Up to ``limit`` quotes, most similar to the question first (one embed call).

    A sentence qualifies when it comes from a chunk supporting a selected edge, is prose (ends
    with final punctuation, so headings never qualify) and contains that edge's subject and
    object labels (case-insensitive). When no sentence qualifies, each
    sourced edge is stated as a fact instead (``"s p o"``, citing up to three of its chunks);
    an edge without a source is never stated, since it could not be cited.
    """
    quotes = _candidates(edges, found, texts)
    if quotes:
        scores = embedder.embed([q.text for q in quotes]) @ question
        return [quotes[i] for i in np.argsort(-scores, kind="stable")[:limit].tolist()]
    facts: dict[str, Quote] = {}
    for e in edges:
        chunks = tuple(dict.fromkeys(src.chunk for src in found.get(e.edge, ())))[:3]
        if chunks and e.text not in facts:
            facts[e.text] = Quote(e.text, chunks)
    return list(facts.values())[:limit]


def render(quotes: Sequence[Quote], citations: Citations) -> list[str]:
    """Each quote on one line with its chunks' markers before its final punctuation."""
    return [with_marker(q.text, "".join(citations.by_chunk[c] for c in q.chunks)) for q in quotes]
