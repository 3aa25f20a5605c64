"""Quad store benchmark: load rate, containment lookups and provenance walks at ~1,000,000 quads.

    .venv/bin/python bench/store.py [--facts 600000] [--seed 7]

Generates data shaped like the spec's: facts with labels in the default graph; one subgraph per
20 facts with ``tg:contains <<( s p o )>>`` and its activity/agent block; page/chunk chains.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, time_each  # noqa: E402

from provgraph.provenance import chunk_quads, document_quads, page_quads, subgraph_quads  # noqa: E402
from provgraph.rdf import ids  # noqa: E402
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm  # noqa: E402
from provgraph.rdf.vocab import PROV, RDFS, TG  # noqa: E402
from provgraph.store import OxigraphStore  # noqa: E402

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def generate(n_facts: int, rng: random.Random) -> tuple[list[Quad], list[TripleTerm], list[Iri]]:
    """Quads like the spec's; returns the quads, every fact, and every subgraph IRI."""
    quads: list[Quad] = []
    facts: list[TripleTerm] = []
    subgraphs: list[Iri] = []
    n_entities = max(10, n_facts // 4)
    ents = [Iri(f"urn:provgraph:entity:e{i}") for i in range(n_entities)]
    preds = [Iri(f"urn:provgraph:entity:rel{i}") for i in range(200)]
    quads += [Quad(e, RDFS.label, Literal(f"Entity {i}")) for i, e in enumerate(ents)]
    quads += [Quad(p, RDFS.label, Literal(f"relation {i}")) for i, p in enumerate(preds)]
    chunks_per_page, facts_per_chunk = 4, 20
    n_chunks = n_facts // facts_per_chunk
    doc = None
    page = None
    for c in range(n_chunks):
        if c % (chunks_per_page * 50) == 0:
            doc = ids.document_iri(f"doc{c}")
            quads += document_quads(doc, title=f"Document {c}", mime_type="application/pdf", page_count=50)
        if c % chunks_per_page == 0:
            assert doc is not None
            page = ids.page_iri(doc, c // chunks_per_page)
            quads += page_quads(page, document=doc, number=c // chunks_per_page + 1, offset=0, length=8000,
                                activity=ids.activity_iri("decode", doc.value))
        assert page is not None
        chunk = ids.chunk_iri(page, c % chunks_per_page + 1, 0, 2000)
        quads += chunk_quads(chunk, parent=page, index=c % chunks_per_page + 1, offset=0, length=2000,
                             activity=ids.activity_iri("chunk", page.value))
        chunk_facts = []
        for _ in range(facts_per_chunk):
            o = rng.choice(ents) if rng.random() < 0.7 else Literal(f"value {rng.randrange(10**6)}")
            fact = TripleTerm(rng.choice(ents), rng.choice(preds), o)
            chunk_facts.append(fact)
            quads.append(Quad(fact.s, fact.p, fact.o))
        sg = ids.subgraph_iri(chunk, "kg-extract-relationships", "0.1.0", "bench")
        quads += subgraph_quads(sg, facts=chunk_facts, chunk=chunk, activity=ids.activity_iri(sg.value),
                                component="kg-extract-relationships", version="0.1.0", started=T, llm_model="bench")
        facts += chunk_facts
        subgraphs.append(sg)
    return quads, facts, subgraphs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=300_000, help="facts (about 3.4 quads each with labels, provenance and chains: ~1M quads)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lookups", type=int, default=2000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    quads, facts, subgraphs = generate(args.facts, rng)
    report("store.generate", quads=len(quads), seconds=round(time.perf_counter() - t0, 1))

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        store = OxigraphStore(path, name="bench")
        t0 = time.perf_counter()
        batch = 50_000
        for i in range(0, len(quads), batch):
            store.add(quads[i : i + batch])
        dt = time.perf_counter() - t0
        report("store.load_transactional", target=">= 50,000 quads/s", quads=len(quads),
               quads_per_s=round(len(quads) / dt))
        store.close()
        path2 = Path(tmp) / "store2"
        store = OxigraphStore(path2, name="bench")
        t0 = time.perf_counter()
        store.bulk_add(quads)
        dt = time.perf_counter() - t0
        report("store.load_bulk", target=">= 50,000 quads/s", quads=len(quads), quads_per_s=round(len(quads) / dt))
        store.flush()

        sample = rng.sample(facts, args.lookups)
        samples = time_each(lambda f: list(store.match(None, TG.contains, f)), sample)
        report("store.which_subgraphs_contain_fact.match", target="p99 < 1 ms", **percentiles(samples))
        q = "SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains ?t } }"
        samples = time_each(lambda f: store.select(q, bind={"t": f}), sample)
        report("store.which_subgraphs_contain_fact.sparql", **percentiles(samples))

        def walk(sg: Iri) -> Iri:
            node = sg
            for _ in range(3):  # subgraph -> chunk -> page -> document
                node = next(store.match(node, PROV.wasDerivedFrom)).o  # type: ignore[assignment]
            return node

        sgs = rng.sample(subgraphs, min(args.lookups, len(subgraphs)))
        samples = time_each(walk, sgs)
        report("store.walk_3_hops.match", target="p99 < 2 ms", **percentiles(samples))
        walk_q = ("SELECT ?doc WHERE { GRAPH <urn:graph:source> { ?sg prov:wasDerivedFrom ?c . "
                  "?c prov:wasDerivedFrom ?p . ?p prov:wasDerivedFrom ?doc } }")
        samples = time_each(lambda sg: store.select(walk_q, bind={"sg": sg}), sgs)
        report("store.walk_3_hops.sparql", **percentiles(samples))
        store.close()
        size = sum(f.stat().st_size for f in path2.rglob("*") if f.is_file())
        report("store.disk_size", quads=len(quads), megabytes=round(size / 2**20, 1))


if __name__ == "__main__":
    main()
