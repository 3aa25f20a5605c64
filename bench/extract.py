"""Extraction benchmark: 1,000 chunks through the relationships extractor with a zero-latency LLM.

    .venv/bin/python bench/extract.py [--chunks 1000] [--facts 20]

Reports chunks/s and quads/s end to end (LLM JSON parsing, fact building, store writes with
support-set replacement, entity and chunk embeddings) and provenance quads per fact.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import report  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.extract.base import ChunkInput  # noqa: E402
from provgraph.extract.llm_extractors import relationships_extractor  # noqa: E402
from provgraph.extract.pipeline import ExtractionPipeline  # noqa: E402
from provgraph.models.base import JsonCompletion, Usage  # noqa: E402
from provgraph.rdf.ids import chunk_iri, document_iri  # noqa: E402
from provgraph.rdf.vocab import GRAPH_SOURCE, RDFS  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402

WORDS = "radium polonium uranium thorium Curie Becquerel Rutherford Soddy Sorbonne Paris Warsaw Nobel".split()


class InstantLLM:
    """Answers every extraction at once with N relationships (a zero-latency model)."""

    name = "bench:instant"

    def __init__(self, facts: int, seed: int) -> None:
        self.facts = facts
        self.rng = random.Random(seed)

    async def complete_json(self, messages: Any, *, schema: Any, schema_name: str, **_: Any) -> JsonCompletion:
        rels = [{"subject": f"{self.rng.choice(WORDS)} {self.rng.randrange(5000)}", "predicate": f"rel {i % 40}",
                 "object": f"{self.rng.choice(WORDS)} {self.rng.randrange(5000)}", "object_is_literal": i % 5 == 0}
                for i in range(self.facts)]
        text = json.dumps({"relationships": rels})
        return JsonCompletion(json.loads(text), text, Usage(500, 400, self.name))

    async def aclose(self) -> None:
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=1000)
    ap.add_argument("--facts", type=int, default=20)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        llm = InstantLLM(args.facts, args.seed)
        rt = Runtime(load_settings(home=tmp, collection="bench"), llm=llm)  # type: ignore[arg-type]
        doc = document_iri("bench")
        chunks = [ChunkInput(chunk_iri(doc, i + 1, i * 1000, 1000), " ".join(random.Random(i).choices(WORDS, k=160)), doc)
                  for i in range(args.chunks)]
        rt.embedder.embed(["warm up"])
        pipe = ExtractionPipeline(rt.store, [relationships_extractor(llm, entity_base=rt.settings.entity_base)],  # type: ignore[arg-type]
                                  embedder=rt.embedder, entity_index=rt.entity_index, chunk_index=rt.chunk_index)
        t0 = time.perf_counter()
        outcomes = asyncio.run(pipe.run(chunks))
        dt = time.perf_counter() - t0
        facts = sum(o.facts for o in outcomes)
        prov = rt.store.count(g=GRAPH_SOURCE)
        knowledge = sum(1 for q in rt.store.match(g=None) if q.p != RDFS.label)
        report("extract.end_to_end", target=">= 100 chunks/s", chunks=len(chunks), seconds=round(dt, 2),
               chunks_per_s=round(len(chunks) / dt, 1), quads_per_s=round(len(rt.store) / dt),
               failed=sum(o.failed for o in outcomes))
        per_chunk = [o.provenance_quads for o in outcomes]
        report("extract.provenance_per_fact", target="<= 1.65 at 20 facts per chunk",
               facts=facts, provenance_quads_written=sum(per_chunk),
               per_fact_written=round(sum(per_chunk) / facts, 3),
               per_fact_stored=round(prov / facts, 3), knowledge_quads=knowledge)
        rt.close()


if __name__ == "__main__":
    main()
