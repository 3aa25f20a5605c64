"""Lexical index choice: SQLite FTS5 (what provgraph uses) against bm25s, on the dev evaluation sets' chunks.

For each set: build time, mean query time, and evidence recall@3 / @5 (a gold quote covered by one of the
first k chunks, the rules of quality_score) for FTS5, bm25s, and provgraph's hybrid retrieval (FTS5 + dense,
reciprocal rank fusion, duplicates collapsed, boilerplate demoted). Held-out sets are never read.

    .venv/bin/python bench/lexical.py            # bm25s is optional: `pip install bm25s` to compare it

Benchmarks never assert; figures are printed next to the choice they justify.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality import EVAL_ROOT, _chunk_spans, _files  # noqa: E402
from quality_score import evidence_found, load_set, quote_spans  # noqa: E402

from provgraph import Provgraph  # noqa: E402
from provgraph.ingest.decoders import decode_file  # noqa: E402
from provgraph.librarian.lexical import Fts5Index, query_terms  # noqa: E402

DEV_SETS = ("computing", "space")


def recall(ranked: list[list[str]], spans: dict, quotes: list, k: int) -> int:
    return sum(any(evidence_found([spans[c] for c in r[:k] if c in spans], q)) for r, q in zip(ranked, quotes))


def main() -> None:
    try:
        import bm25s  # type: ignore[import-not-found]
    except ImportError:
        bm25s = None
    print(f"{'set':10} {'index':8} {'build ms':>9} {'query ms':>9} {'recall@3':>9} {'recall@5':>9}")
    for name in DEV_SETS:
        root = EVAL_ROOT / name
        files = _files(root / "docs")
        decoded = {n: decode_file(p).text for n, p in files.items()}
        ev = load_set(root, decoded)
        with tempfile.TemporaryDirectory() as home, Provgraph(collection="lex", home=home, llm="none") as pg:
            doc_of = {n: pg.load([p])[0].document.value for n, p in files.items()}
            spans, pairs, _ = _chunk_spans(pg)
            quotes = [[(doc_of[e.document], quote_spans(decoded[e.document], e.quote)) for e in q.evidence]
                      for q in ev.questions]
            rows = []
            t0 = time.perf_counter()
            fts = Fts5Index(Path(home) / "fts")
            fts.put("chunk", [(i, "", t) for i, t in pairs])
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            ranked = [[h.id for h in fts.search("chunk", q.question, 5)] for q in ev.questions]
            rows.append(("fts5", build, time.perf_counter() - t0, ranked))
            fts.close()
            if bm25s is not None:
                t0 = time.perf_counter()
                retriever = bm25s.BM25()
                retriever.index(bm25s.tokenize([t for _, t in pairs], stopwords="en", show_progress=False),
                                show_progress=False)
                build = time.perf_counter() - t0
                t0 = time.perf_counter()
                ranked = []
                for q in ev.questions:
                    tokens = bm25s.tokenize([" ".join(query_terms(q.question))], stopwords="en", show_progress=False)
                    docs, _ = retriever.retrieve(tokens, k=5, show_progress=False)
                    ranked.append([pairs[int(i)][0] for i in docs[0]])
                rows.append(("bm25s", build, time.perf_counter() - t0, ranked))
            rt = pg.runtime
            retriever_h = rt.retriever()
            t0 = time.perf_counter()
            ranked = [[r.id for r in retriever_h.chunks(q.question, rt.embedder.embed([q.question])[0], 5)]
                      for q in ev.questions]
            rows.append(("hybrid", 0.0, time.perf_counter() - t0, ranked))
            n = len(ev.questions)
            for label, build, query, ranked in rows:
                print(f"{name:10} {label:8} {build * 1000:9.1f} {query * 1000 / n:9.2f} "
                      f"{recall(ranked, spans, quotes, 3):>6}/{n} {recall(ranked, spans, quotes, 5):>6}/{n}")
    if bm25s is None:
        print("(bm25s not installed: pip install bm25s to compare)")


if __name__ == "__main__":
    main()
