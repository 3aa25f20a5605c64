"""The scale benchmark's corpus, through the real pipeline, gives exactly the pinned quads and vectors.

Speed work (issue 16) must not change the provenance model: same quads, same IDs. The digests
were taken from the code before that work; a change here is a change of the data model.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from scale import ScriptedLlm, make_document, make_names  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.extract.pipeline import ExtractionPipeline  # noqa: E402
from provgraph.ingest.decoders import decode_bytes  # noqa: E402
from provgraph.ingest.pipeline import DocumentLoader  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402

T = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
PINNED_QUADS = 2736
PINNED_QUADS_SHA256 = "621220062a44c1ad96b69133c5d0a5dc3ae4a60683828724cd44725129318939"
PINNED_VECTORS_SHA256 = "0912d5f29c497ce0e877c04d85bcbe3665fdd084885db6c82b567bb3a478867e"


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def build(home: Path) -> tuple[list[str], list[str]]:
    """N-Quads lines of the store and ``id payload`` lines of both vector indexes, for 3 documents."""
    rng = random.Random(16)
    names = make_names(rng)
    settings = load_settings(home=str(home), collection="pin", llm="none")
    with Runtime(settings, llm=ScriptedLlm()) as rt:  # type: ignore[arg-type]
        loader = DocumentLoader(rt.store, rt.librarian, chunk_size=1500, chunk_overlap=0, clock=lambda: T)
        chunks = []
        for d in range(3):
            data = make_document(rng, names).encode()
            decoded = decode_bytes(data, mime_type="text/plain", name=f"doc{d}.txt")
            chunks += loader.load_decoded(decoded, data, doc_id=f"doc{d}.txt", title=f"Document {d}").chunks
        pipe = ExtractionPipeline(rt.store, rt.extractors("relationships"), embedder=rt.embedder,
                                  entity_index=rt.entity_index, chunk_index=rt.chunk_index, clock=lambda: T,
                                  batch_size=16)
        outcomes = asyncio.run(pipe.run(chunks))
        assert [o.error for o in outcomes] == [None] * 30
        quads = rt.store.export_bytes().decode().splitlines()
        vectors = []
        for index in (rt.entity_index, rt.chunk_index):
            records = index._records  # type: ignore[attr-defined]
            vectors += [f"{i} {json.dumps(p, sort_keys=True)}" for i, p in (records.record(r) for r in range(records.n))]
    return quads, vectors


@pytest.mark.embedded_only  # pins the embedded vector index's own records
def test_the_scale_corpus_gives_the_pinned_quads_and_vector_payloads(tmp_path: Path) -> None:
    quads, vectors = build(tmp_path)
    assert (len(quads), _digest(quads), _digest(vectors)) == (PINNED_QUADS, PINNED_QUADS_SHA256, PINNED_VECTORS_SHA256)
