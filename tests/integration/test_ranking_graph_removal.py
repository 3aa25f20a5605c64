"""Removing a real document takes its passages and mentions out of the ranking graph: in the process that
removed it (incrementally, the same graph as one read whole) and in the next process, which starts from the
passage graph's file on disk (retrieval/passage_cache.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from provgraph import Provgraph
from provgraph.retrieval.passage_cache import GRAPH_FILE, read_edges
from provgraph.retrieval.passage_graph import PassageGraph

DOCS = Path(__file__).resolve().parents[1] / "data" / "software_docs"
FILES = ["curl_manual.md", "curl_faq.md", "rust_book_hello_cargo.md", "rust_book_keywords.md"]
GONE = "rust_book_hello_cargo.md"
QUESTION = "What format is Cargo.toml in?"
_PROBE = """
import json, sys
from provgraph import Provgraph
ids = json.loads(sys.stdin.read())
with Provgraph(collection="docs", home=sys.argv[1], llm="none") as pg:
    found = [p.chunk for p in pg.retrieve(sys.argv[2], k=5, mode="graph").passages]
    graph = pg.runtime.retriever().graph
    print(json.dumps({"in_graph": [i for i in ids if i in graph], "found": found,
                      "counts": [graph.chunk_count, graph.entity_count]}))
"""


def test_removing_a_document_removes_its_passages_and_mentions_here_and_after_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Provgraph(collection="docs", home=home, llm="none") as pg:
        doc = pg.load([DOCS / name for name in FILES])[FILES.index(GONE)]
        gone = {c.iri.value for c in doc.chunks}
        before = pg.retrieve(QUESTION, k=5, mode="graph")
        assert before.passages[0].chunk in gone  # the question is about the document removed
        graph = pg.runtime.retriever().graph
        assert all(c in graph for c in gone)
        file = pg.runtime.ref.librarian_dir / GRAPH_FILE
        assert gone <= set(read_edges(file))  # the first sync wrote every chunk to the file
        mentioned = {e for c in gone for e in graph.entities_of(c)}
        own = {e for e in mentioned if graph.chunks_of(e) <= gone}
        shared = mentioned - own
        assert own and shared  # entities only it mentions, and entities other documents mention too
        chunks, entities = graph.chunk_count, graph.entity_count

        pg.runtime.remove_document(doc.document)
        after = pg.retrieve(QUESTION, k=5, mode="graph")
        assert after.passages and not {p.chunk for p in after.passages} & gone
        assert not any(set(f.chunks) & gone for f in after.facts)
        assert not [c for c in gone if c in graph] and not [e for e in own if e in graph]
        assert all(e in graph and not graph.chunks_of(e) & gone for e in shared)
        assert (graph.chunk_count, graph.entity_count) == (chunks - len(gone), entities - len(own))
        whole = PassageGraph(pg.runtime.store, pg.runtime.librarian)  # no file: read whole from the store
        whole.sync()
        assert (whole.chunk_count, whole.entity_count) == (graph.chunk_count, graph.entity_count)
        seeds = {e: 1.0 for e in sorted(shared)[:3]}
        assert [h.id for h in whole.rank(seeds, limit=10)] == [h.id for h in graph.rank(seeds, limit=10)]
        counts, found = [graph.chunk_count, graph.entity_count], [p.chunk for p in after.passages]

    probe = subprocess.run([sys.executable, "-c", _PROBE, str(home), QUESTION], input=json.dumps(sorted(gone | own)),
                           capture_output=True, text=True, check=True, timeout=300)  # the next process
    restarted = json.loads(probe.stdout)
    assert restarted == {"in_graph": [], "found": found, "counts": counts}
    assert not set(read_edges(file)) & gone  # and the file it wrote back holds none of them
