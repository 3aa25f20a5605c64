"""Finding citation markers in an answer, each with the span of the answer it ends.

A marker is ``[n]`` or ``[n, m]``. Its span runs from the end of the previous sentence (or of the
previous marker that is not adjacent) up to the marker, trimmed; markers written side by side
(``[1][2]``) end the same span.

>>> [(m.text, m.numbers, m.span) for m in find_markers("Radium glows [2]. Found in 1898 [1][3].")]
[('[2]', (2,), 'Radium glows'), ('[1]', (1,), 'Found in 1898'), ('[3]', (3,), 'Found in 1898')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from provgraph.provenance.citations import CitationRecord
from provgraph.rdf.ids import citation_iri
from provgraph.rdf.terms import Iri, TripleTerm

__all__ = ["Marker", "find_markers", "graph_rag_citations", "doc_rag_citations"]

_MARKER = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s+")


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker as written, its numbers, and ``span`` = ``answer[offset:offset + length]``."""

    text: str
    numbers: tuple[int, ...]
    offset: int
    length: int
    span: str


def find_markers(answer: str) -> list[Marker]:
    """Every marker of ``answer`` in order."""
    out: list[Marker] = []
    floor = 0
    previous_end = -1
    span = (0, 0)
    for found in _MARKER.finditer(answer):
        numbers = tuple(int(n) for n in found.group(1).split(","))
        if previous_end < 0 or answer[previous_end:found.start()].strip(" ,;"):
            start = floor
            for end in _SENTENCE_END.finditer(answer, floor, found.start()):
                start = end.end()
            text = answer[start:found.start()]
            lead = len(text) - len(text.lstrip())
            span = (start + lead, len(text.strip()))
        out.append(Marker(found.group(0), numbers, span[0], span[1], answer[span[0]:span[0] + span[1]]))
        previous_end = floor = found.end()
    return out


def graph_rag_citations(
    synthesis: Iri, answer: str, by_chunk: Mapping[str, str], by_edge: Mapping[TripleTerm, Sequence[str]],
    selections: Sequence[tuple[Iri, TripleTerm]],
) -> list[CitationRecord]:
    """GraphRAG: each marker names the chunk numbered so, and cites the selected edges that chunk supports."""
    chunk_of = {marker: chunk for chunk, marker in by_chunk.items()}
    out: list[CitationRecord] = []
    for i, m in enumerate(find_markers(answer), start=1):
        names = [f"[{n}]" for n in m.numbers]
        chunks = tuple(Iri(chunk_of[n]) for n in names if n in chunk_of)
        edges = tuple(iri for iri, edge in selections if any(n in by_edge.get(edge, ()) for n in names))
        out.append(CitationRecord(citation_iri(synthesis, i), m.text, m.offset, m.length, chunks, edges))
    return out


def doc_rag_citations(synthesis: Iri, answer: str, ranked: Sequence[Iri]) -> list[CitationRecord]:
    """Document RAG: marker ``[n]`` names the chunk at rank n (``ranked[n - 1]``)."""
    out: list[CitationRecord] = []
    for i, m in enumerate(find_markers(answer), start=1):
        chunks = tuple(ranked[n - 1] for n in m.numbers if 1 <= n <= len(ranked))
        out.append(CitationRecord(citation_iri(synthesis, i), m.text, m.offset, m.length, chunks))
    return out
