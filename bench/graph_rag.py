"""GraphRAG benchmark: non-LLM stage latency, time to first explain event, store round trips.

    .venv/bin/python bench/graph_rag.py [--facts 1000000] [--questions 100] [--seed 7]

Builds a synthetic collection on disk (store, librarian, entity index): facts over word-label
entities in the default graph, one subgraph per 20 facts (10% of facts in a second subgraph
too) with chunk → page → document chains. Then asks questions with a zero-latency scripted
LLM, so every measured millisecond is provgraph's own. Prints one JSON line per figure.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.events import Explain  # noqa: E402
from provgraph.librarian.sqlite import SqliteLibrarian  # noqa: E402
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage  # noqa: E402
from provgraph.models.factory import build_embedder  # noqa: E402
from provgraph.provenance.source import chunk_quads, document_quads, page_quads  # noqa: E402
from provgraph.provenance.subgraph import subgraph_quads  # noqa: E402
from provgraph.rdf import ids  # noqa: E402
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm  # noqa: E402
from provgraph.rdf.vocab import RDFS  # noqa: E402
from provgraph.retrieval.graph_rag import GraphRag, GraphRagParams  # noqa: E402
from provgraph.retrieval.graph_walk import WalkLimits, walk  # noqa: E402
from provgraph.retrieval.sources import edge_sources  # noqa: E402
from provgraph.store.oxigraph import OxigraphStore  # noqa: E402
from provgraph.vectors.usearch_index import UsearchIndex  # noqa: E402

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
WORDS = ("radium polonium uranium thorium helium neon argon crystal quartz magnet laser photon electron proton "
         "neutron isotope decay spectrum prism lens mirror orbit comet planet nebula galaxy pulsar quasar glacier "
         "volcano canyon delta estuary harbour bridge tunnel tower castle abbey library museum theatre garden "
         "meadow forest river lake island cape summit valley plateau desert oasis lagoon reef atoll").split()
PHRASES = ("discovered", "studied", "located in", "named after", "part of", "built by", "measured", "emits",
           "orbits", "borders", "founded", "visited", "described", "contains", "follows", "precedes")


class ZeroLatencyLlm:
    """A scripted ChatModel answering at once: selects the first edges listed, answers with markers."""

    name = "bench:zero-latency"

    def __init__(self) -> None:
        self.calls = 0

    def _usage(self) -> Usage:
        return Usage(100, 20, self.name)

    async def complete(self, messages: Sequence[Message], **_: Any) -> Completion:
        self.calls += 1
        edge_ids = re.findall(r"^([0-9a-f]{8}): ", messages[-1].content, flags=re.MULTILINE)
        body = "\n".join(f'{{"id": "{i}", "reasoning": "listed edge"}}' for i in edge_ids[:25])
        return Completion(body, self._usage())

    async def complete_json(self, messages: Sequence[Message], **_: Any) -> JsonCompletion:
        self.calls += 1
        words = [w for w in re.findall(r"[a-z]+", messages[-1].content.lower()) if w in WORDS][:5]
        return JsonCompletion({"concepts": words}, "", self._usage())

    def stream(self, messages: Sequence[Message], **_: Any) -> StreamResult:
        self.calls += 1

        async def pieces() -> AsyncIterator[str | Usage]:
            for word in ("The", " graph", " says", " so", " [1]."):
                yield word
            yield self._usage()

        return StreamResult(pieces(), self.name)

    async def aclose(self) -> None:
        return None


class CountingStore:
    """Wraps the store and counts round trips (match and SPARQL calls)."""

    def __init__(self, store: OxigraphStore) -> None:
        self._store = store
        self.matches = 0
        self.selects = 0

    def match(self, *a: Any, **kw: Any) -> Any:
        self.matches += 1
        return self._store.match(*a, **kw)

    def select(self, *a: Any, **kw: Any) -> Any:
        self.selects += 1
        return self._store.select(*a, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def label(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]} {WORDS[(i // len(WORDS)) % len(WORDS)]} {i}"


def build(folder: Path, n_facts: int, rng: random.Random) -> tuple[OxigraphStore, list[Iri]]:
    """The store (bulk-loaded) and the entity IRIs."""
    store = OxigraphStore(folder / "store")
    n_entities = max(100, n_facts // 10)
    ents = [Iri(f"urn:provgraph:entity:e{i}") for i in range(n_entities)]
    preds = [Iri(f"urn:provgraph:entity:rel/{p.replace(' ', '%20')}") for p in PHRASES]
    hubs = ents[: max(10, n_entities // 100)]
    batch: list[Quad] = [Quad(e, RDFS.label, Literal(label(i))) for i, e in enumerate(ents)]
    batch += [Quad(p, RDFS.label, Literal(text)) for p, text in zip(preds, PHRASES)]
    per_chunk, chunks_per_page, pages_per_doc = 20, 4, 10
    page = doc = None
    previous: list[TripleTerm] = []
    for c in range(n_facts // per_chunk):
        if c % (chunks_per_page * pages_per_doc) == 0:
            doc = ids.document_iri(f"doc{c}")
            batch += document_quads(doc, title=f"Document {c}", mime_type="application/pdf", page_count=pages_per_doc)
        if c % chunks_per_page == 0:
            page = ids.page_iri(doc, c // chunks_per_page)  # type: ignore[arg-type]
            batch += page_quads(page, document=doc, number=(c // chunks_per_page) % pages_per_doc + 1,  # type: ignore[arg-type]
                                offset=0, length=8000, activity=ids.activity_iri("decode", doc.value))  # type: ignore[union-attr]
        index = c % chunks_per_page + 1
        chunk = ids.chunk_iri(page, index, (index - 1) * 2000, 2000)  # type: ignore[arg-type]
        batch += chunk_quads(chunk, parent=page, index=index, offset=(index - 1) * 2000, length=2000,  # type: ignore[arg-type]
                             activity=ids.activity_iri("chunk", page.value))  # type: ignore[union-attr]
        facts = []
        for _ in range(per_chunk):
            s = rng.choice(hubs) if rng.random() < 0.2 else rng.choice(ents)
            facts.append(TripleTerm(s, rng.choice(preds), rng.choice(ents)))
        batch += [Quad(f.s, f.p, f.o) for f in facts]
        shared = [f for f in previous if rng.random() < 0.1]  # support sets of two
        previous = facts
        sg = ids.subgraph_iri(chunk, "bench", "1", None)
        batch += subgraph_quads(sg, facts=facts + shared, chunk=chunk, activity=ids.activity_iri(sg.value),
                                component="bench", version="1", started=T)
        if len(batch) > 200_000:
            store.bulk_add(batch)
            batch = []
    store.bulk_add(batch)
    return store, ents


def index_entities(folder: Path, ents: list[Iri], embedder: Any) -> UsearchIndex:
    index = UsearchIndex(folder / "entities", model=embedder.name, dimension=embedder.dimension)
    for start in range(0, len(ents), 20_000):
        part = ents[start : start + 20_000]
        labels = [label(start + i) for i in range(len(part))]
        index.upsert([e.value for e in part], embedder.embed(labels),
                     [{"entity": e.value, "label": text, "chunks": []} for e, text in zip(part, labels)])
    index.flush()
    return index


async def one(rag: GraphRag, question: str) -> dict[str, float]:
    """Seconds from the request to each event kind (first occurrence)."""
    t0 = time.perf_counter()
    marks: dict[str, float] = {}
    async for ev in rag.ask(question):
        key = ev.step if isinstance(ev, Explain) else type(ev).__name__
        marks.setdefault(key, time.perf_counter() - t0)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = build_embedder(load_settings(llm="none"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        store, ents = build(folder, args.facts, rng)
        t_store = time.perf_counter() - t0
        index = index_entities(folder, ents, embedder)
        report("graph_rag.build", facts=args.facts, quads=len(store), entities=len(ents),
               store_load_s=round(t_store, 1), total_s=round(time.perf_counter() - t0, 1))
        librarian = SqliteLibrarian(folder / "librarian")
        counting = CountingStore(store)
        llm = ZeroLatencyLlm()
        questions = [f"What is known about the {label(rng.randrange(len(ents)))}?" for _ in range(args.questions)]
        for grounding in (False, True):
            rag = GraphRag(counting, librarian, embedder, index, llm, GraphRagParams(grounding=grounding))  # type: ignore[arg-type]
            for q in questions[:5]:
                asyncio.run(one(rag, q))  # warm-up
            llm.calls = counting.matches = counting.selects = 0
            runs = [asyncio.run(one(rag, q)) for q in questions]
            first = [r["question"] for r in runs]
            non_llm = [r["Final"] for r in runs]  # the LLM answers in zero time
            stages = {
                "explore": [r["exploration"] - r.get("grounding", r["question"]) for r in runs],
                "label_select": [r["focus"] - r["exploration"] for r in runs],
                "sources_synthesis_final": [r["Final"] - r["focus"] for r in runs],
            }
            name = "graph_rag.grounded" if grounding else "graph_rag"
            report(f"{name}.non_llm_total", target="p95 < 100 ms", questions=len(runs), **percentiles(non_llm))
            report(f"{name}.first_explain_event", target="< 50 ms", **percentiles(first))
            for stage, samples in stages.items():
                report(f"{name}.stage.{stage}", **percentiles(samples))
            report(f"{name}.llm_calls_per_question", target="<= 3", value=llm.calls / len(runs))
            report(f"{name}.store_round_trips_per_question", matches=counting.matches / len(runs),
                   sparql=counting.selects / len(runs))
        seeds = ents[:50]
        edges = walk(store, seeds, WalkLimits(2, 30, 150))[:50]
        counting.selects = 0
        t1 = time.perf_counter()
        found = edge_sources(counting, edges)  # type: ignore[arg-type]
        report("graph_rag.sources_of_50_edges", target="<= 4 round trips", edges=len(edges),
               round_trips=counting.selects, ms=round((time.perf_counter() - t1) * 1000, 2),
               sources=sum(len(v) for v in found.values()),
               edges_with_several_sources=sum(1 for v in found.values() if len(v) > 1))
        index.close()
        librarian.close()
        store.close()


if __name__ == "__main__":
    main()
