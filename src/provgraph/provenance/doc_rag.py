"""Document RAG trace steps of SPEC §5.2, in ``urn:graph:retrieval``.

The synthesis reuses :func:`provgraph.provenance.graph_rag.synthesis_quads` (same shape);
the chunks its answer cites are recorded there as ``tg:selectedChunk``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from provgraph.provenance.common import Quads
from provgraph.provenance.graph_rag import question_quads
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG

__all__ = ["docrag_question_quads", "docrag_exploration_quads"]


def docrag_question_quads(
    question: Iri, *, query: str, started: datetime, informed_by: Iri | None = None
) -> list[Quad]:
    """The Document RAG question activity."""
    return question_quads(
        question,
        query=query,
        started=started,
        kind=TG.DocRagQuestion,
        label="Document RAG Question",
        informed_by=informed_by,
    )


def docrag_exploration_quads(
    exploration: Iri, *, question: Iri, chunks: Sequence[Iri], embedding_model: str | None = None
) -> list[Quad]:
    """The exploration: the chunks retrieved for the question (their ranks are on the
    ``tg:ChunkSelection``s of :func:`provgraph.provenance.citations.chunk_selection_quads`)."""
    q = Quads(GRAPH_RETRIEVAL).types(exploration, PROV.Entity, TG.Exploration)
    q.text(exploration, RDFS.label, "Exploration").add(exploration, PROV.wasGeneratedBy, question)
    q.integer(exploration, TG.chunkCount, len(chunks)).each(exploration, TG.selectedChunk, chunks)
    return q.text(exploration, TG.embeddingModel, embedding_model).items
