"""Answer quality on evaluation sets of real text: no-LLM graph-rag and document-rag against a BM25 baseline.

For each set (``bench/eval/<set>/``, see ``quality_score`` for the format and the exact scoring rules) it
creates a fresh collection in a temporary home, loads the set's documents with provgraph's real pipeline
(embedded defaults, no LLM), asks every question with each system and prints accuracy by question type,
overall, and evidence recall@k.

    .venv/bin/python bench/quality.py                          # every set, all three systems
    .venv/bin/python bench/quality.py --set chemistry --only bm25 --limit 5 --details
    .venv/bin/python bench/quality.py --format json > quality.json

Systems: ``graph-rag`` and ``document-rag`` (provgraph's Python API, ``llm="none"``), and ``bm25`` (quality_bm25:
FTS5 over the same stored chunks, top 3 chunks, best 2 sentences). Benchmarks never assert.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality_bm25 import Bm25Baseline  # noqa: E402
from quality_score import (  # noqa: E402
    ANSWER_WINDOW,
    TYPES,
    EvalSet,
    EvalSetError,
    evidence_found,
    find_sets,
    is_correct,
    load_set,
    quote_spans,
)

from provgraph import Provgraph  # noqa: E402
from provgraph.errors import ProvgraphError  # noqa: E402
from provgraph.ingest.decoders import decode_file  # noqa: E402

EVAL_ROOT = Path(__file__).resolve().parent / "eval"
SYSTEMS = ("graph-rag", "document-rag", "bm25")
DEFAULT_K = 3


@dataclass
class Outcome:
    """One question answered by one system."""

    id: str
    type: str
    correct: bool
    chunks: list[str]
    found_at_k: bool
    all_at_k: bool
    found_any: bool
    answer: str
    seconds: float
    error: str | None = None


@dataclass
class SystemResult:
    system: str
    outcomes: list[Outcome] = field(default_factory=list)

    def summary(self, k: int) -> dict:
        out: dict = {"system": self.system, "questions": len(self.outcomes)}
        for t in TYPES:
            sel = [o for o in self.outcomes if o.type == t]
            out[t] = [sum(o.correct for o in sel), len(sel)]
        n = len(self.outcomes)
        out["overall"] = [sum(o.correct for o in self.outcomes), n]
        out[f"evidence@{k}"] = [sum(o.found_at_k for o in self.outcomes), n]
        out[f"all_evidence@{k}"] = [sum(o.found_at_k and o.all_at_k for o in self.outcomes), n]
        out["evidence@all"] = [sum(o.found_any for o in self.outcomes), n]
        out["mean_chunks"] = round(sum(len(o.chunks) for o in self.outcomes) / max(n, 1), 1)
        out["errors"] = sum(o.error is not None for o in self.outcomes)
        out["seconds"] = round(sum(o.seconds for o in self.outcomes), 1)
        return out


def _files(docs: Path) -> dict[str, Path]:
    return {p.relative_to(docs).as_posix(): p for p in sorted(docs.rglob("*")) if p.is_file()}


def _chunk_spans(pg: Provgraph) -> tuple[dict[str, tuple[str, int, int]], list[tuple[str, str]], list[str]]:
    """Every stored chunk as (document id, start, end) in its document's text; (id, text) pairs; warnings."""
    lib = pg.runtime.librarian
    records = {r.id: r for r in lib.list()}
    chunks = [r for r in records.values() if r.kind == "chunk"]
    texts = lib.texts([c.id for c in chunks])
    doc_texts: dict[str, str] = {}
    spans, warnings = {}, []
    for c in chunks:
        start, node = c.offset or 0, records[c.parent_id]
        while node.kind != "document":
            start += node.offset or 0
            node = records[node.parent_id]
        text = doc_texts.setdefault(node.id, lib.text(node.id))
        body = texts[c.id]
        if text[start:start + len(body)] != body:  # offsets not into the decoded text: find the chunk instead
            found = text.find(body)
            warnings.append(f"chunk {c.id}: offset {start} does not slice its text"
                            + ("" if found >= 0 else "; not found in the document"))
            start = found if found >= 0 else start
        spans[c.id] = (node.id, start, start + len(body))
    pairs = sorted((c.id, texts[c.id]) for c in chunks)
    return spans, pairs, warnings


def _locate_quotes(ev: EvalSet, stored: dict[str, str], decoded: dict[str, str], warnings: list[str]
                   ) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """Each quote's spans in its document's stored text (where chunk offsets point); the decoded text's spans,
    with a warning, if the store keeps a different text that lacks the quote."""
    out = {}
    for q in ev.questions:
        for e in q.evidence:
            spans = quote_spans(stored[e.document], e.quote)
            if not spans:
                warnings.append(f"{e.document}: quote not in the stored text, decoded offsets used: {e.quote[:60]!r}")
                spans = quote_spans(decoded[e.document], e.quote)
            out[e.document, e.quote] = spans
    return out


def _ask(system: str, pg: Provgraph, bm25: Bm25Baseline, question: str) -> tuple[str, list[str]]:
    if system == "bm25":
        ans = bm25.answer(question)
        return ans.text, list(ans.chunks)
    answer = pg.graph_rag(question) if system == "graph-rag" else pg.document_rag(question)
    chunks: list[str] = []
    for s in answer.sources:
        if s.chunk not in chunks:
            chunks.append(s.chunk)
    return answer.text, chunks


def run_set(ev: EvalSet, systems: tuple[str, ...], limit: int | None, k: int,
            progress: Callable[[str], None]) -> dict:
    """Load the set into a fresh collection and score every system on it."""
    files = _files(ev.docs)
    decoded = {name: decode_file(path).text for name, path in files.items()}
    ev = load_set(ev.root, decoded)  # every quote verbatim in its decoded document, or EvalSetError
    questions = ev.questions[:limit] if limit else ev.questions
    with tempfile.TemporaryDirectory(prefix="provgraph-quality-") as home:
        with Provgraph(collection="eval", home=home, llm="none") as pg:
            t0 = time.perf_counter()
            doc_of = {name: pg.load([path])[0].document.value for name, path in files.items()}
            load_s = time.perf_counter() - t0
            spans, pairs, warnings = _chunk_spans(pg)
            stored = {name: pg.runtime.librarian.text(doc) for name, doc in doc_of.items()}
            located = _locate_quotes(ev, stored, decoded, warnings)
            bm25 = Bm25Baseline(pairs)
            progress(f"{ev.name}: {len(files)} documents, {sum(len(t) for t in decoded.values())} chars,"
                     f" {len(pairs)} chunks, loaded in {load_s:.1f} s")
            out = {"set": ev.name, "documents": len(files), "chunks": len(pairs), "load_seconds": round(load_s, 1),
                   "k": k, "warnings": warnings, "systems": []}
            for system in systems:
                res = SystemResult(system)
                for q in questions:
                    quotes = [(doc_of[e.document], located[e.document, e.quote]) for e in q.evidence]
                    t1, error = time.perf_counter(), None
                    try:
                        text, chunks = _ask(system, pg, bm25, q.question)
                    except ProvgraphError as exc:
                        text, chunks, error = "", [], str(exc)
                    secs = time.perf_counter() - t1
                    cspans = [spans[c] for c in chunks if c in spans]
                    at_k, every = evidence_found(cspans[:k], quotes), evidence_found(cspans, quotes)
                    res.outcomes.append(Outcome(q.id, q.type, is_correct(text, q.gold), chunks, any(at_k),
                                                all(at_k), any(every), text[:ANSWER_WINDOW], round(secs, 2), error))
                progress(f"{ev.name}: {system} done in {sum(o.seconds for o in res.outcomes):.1f} s")
                out["systems"].append({**res.summary(k), "details": [o.__dict__ for o in res.outcomes]})
            bm25.close()
    return out


def _cell(pair: list[int]) -> str:
    return f"{pair[0]}/{pair[1]}"


def table(result: dict) -> str:
    """The set's results as a fixed-width text table."""
    k = result["k"]
    cols = ["system", *TYPES, "overall", f"evid@{k}", f"all-evid@{k}", "evid@all", "chunks", "s"]
    rows = [cols]
    for s in result["systems"]:
        rows.append([s["system"], *(_cell(s[t]) for t in TYPES), _cell(s["overall"]), _cell(s[f"evidence@{k}"]),
                     _cell(s[f"all_evidence@{k}"]), _cell(s["evidence@all"]), str(s["mean_chunks"]),
                     str(s["seconds"])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = [f"set {result['set']}: {result['documents']} documents, {result['chunks']} chunks,"
             f" loaded in {result['load_seconds']} s"
             + (f"; {len(result['warnings'])} warnings (see --format json)" if result["warnings"] else "")]
    for n, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                                                    strict=True))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _details(result: dict) -> str:
    lines = []
    for s in result["systems"]:
        for o in s["details"]:
            mark = "ok " if o["correct"] else "BAD"
            ev = "E" if o["found_any"] else "-"
            lines.append(f"  {s['system']:<12} {o['id']:<6} {mark} {ev} {' '.join(o['answer'][:160].split())}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", dest="sets", help="set name (repeatable); default: every set")
    ap.add_argument("--only", action="append", choices=SYSTEMS, help="system (repeatable); default: all three")
    ap.add_argument("--limit", type=int, help="first N questions of each set")
    ap.add_argument("-k", type=int, default=DEFAULT_K, help="recall@k cut-off (default 3)")
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.add_argument("--details", action="store_true", help="with the table: one line per question and system")
    ap.add_argument("--eval-root", type=Path, default=EVAL_ROOT)
    args = ap.parse_args(argv)
    available = find_sets(args.eval_root)
    names = args.sets or list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        print(f"error: no evaluation set {', '.join(unknown)} (have: {', '.join(available)})", file=sys.stderr)
        return 2
    systems = tuple(s for s in SYSTEMS if not args.only or s in args.only)
    quiet = args.format == "json"

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results = []
    for name in names:
        try:
            res = run_set(load_set(available[name]), systems, args.limit, args.k, progress)
        except EvalSetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        results.append(res)
        if not quiet:
            print(table(res))
            if args.details:
                print(_details(res))
            print(flush=True)
    if quiet:
        json.dump({"load": os.getloadavg(), "sets": results}, sys.stdout, ensure_ascii=False, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
