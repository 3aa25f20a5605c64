"""Multi-hop passage retrieval on public benchmark subsets: graph-rag, document-rag, BM25 and dense-only, one run.

The protocol of the multi-hop retrieval literature: every question's paragraphs (supporting and distractors) of a
set are pooled into one collection, one document per distinct paragraph (title, blank line, text); each question
is asked, and its score is the share of its supporting paragraphs among the first k DISTINCT paragraphs a system
returned (recall@2, recall@5), plus answer-contains (a gold answer or alias, normalised, as a whole phrase in the
first 800 characters of the answer text). Figures are by question type and overall, for a TUNE half and a REPORT
half of each set (split by a hash of the question id; tune on one, report the other untouched).

    make eval-multihop                                               # every set, both halves, side by side
    .venv/bin/python bench/multihop.py --set musique --half tune --only graph-rag --only bm25
    .venv/bin/python bench/multihop.py --set hotpotqa --limit 40 --details        # first 40 questions
    .venv/bin/python bench/multihop.py --format json > multihop.json

Systems, all on the same loaded collection: ``graph-rag`` (``Provgraph.graph_rag``: the passages its trace's
ranking step ranked, graph-ranked with the bridge hop),
``document-rag`` (``Provgraph.document_rag``: the passages its trace's exploration step ranked — its
``sources`` are only the up to three it cites), ``bm25`` (``quality_bm25``'s FTS5 baseline over the
same stored chunks; its answer is that baseline's best sentences) and ``dense`` (provgraph's embedder, exact cosine
between the question and every stored chunk; no answer text). No LLM. The data files are made by
``bench/multihop_data.py`` (sources and licences in ``bench/eval/multihop/SOURCES.md``). Benchmarks never assert.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles  # noqa: E402
from multihop_data import DATA_ROOT, SETS, data_file  # noqa: E402
from quality import _chunk_spans  # noqa: E402
from quality_bm25 import Bm25Baseline  # noqa: E402
from quality_score import is_correct  # noqa: E402

from provgraph import Provgraph  # noqa: E402
from provgraph.rdf.vocab import TG  # noqa: E402
from provgraph.session import Answer  # noqa: E402
from provgraph.errors import ProvgraphError  # noqa: E402
from provgraph.ingest.paths import expand_paths  # noqa: E402

SYSTEMS = ("graph-rag", "document-rag", "bm25", "dense")
HALVES = ("tune", "report")
KS = (2, 5)
DEPTH = 20  # chunks BM25 and dense return (enough for 5 distinct paragraphs)
TYPES = {"2wiki": ("comparison", "inference", "compositional", "bridge_comparison"),
         "musique": ("2hop", "3hop", "4hop"), "hotpotqa": ("bridge", "comparison")}


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    question: str
    answers: tuple[str, ...]
    supporting: frozenset[str]  # paragraph ids
    half: str


def paragraph_id(title: str, text: str) -> str:
    """A paragraph's id in the pooled corpus: the same title and text is the same paragraph."""
    return "p" + hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()[:12]


def halves(ids: Sequence[str]) -> dict[str, str]:
    """Each id's half: ids ordered by SHA-256, the first half (rounded up) ``tune``, the rest ``report``."""
    ordered = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    cut = (len(ordered) + 1) // 2
    return {i: HALVES[n >= cut] for n, i in enumerate(ordered)}


def read_set(path: Path, limit: int | None) -> tuple[list[Question], dict[str, tuple[str, str]]]:
    """The set's first ``limit`` questions (all by default) with their halves (split over the whole set), and
    their pooled paragraphs."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    half = halves([r["id"] for r in rows])  # of the whole set: a question's half does not depend on --limit
    rows = rows[:limit] if limit else rows
    paragraphs: dict[str, tuple[str, str]] = {}
    questions = []
    for r in rows:
        support = set()
        for p in r["paragraphs"]:
            pid = paragraph_id(p["title"], p["text"])
            paragraphs.setdefault(pid, (p["title"], p["text"]))
            if p["supporting"]:
                support.add(pid)
        questions.append(Question(r["id"], r["type"], r["question"], tuple(r["answers"]), frozenset(support),
                                  half[r["id"]]))
    return questions, paragraphs


def ranked_chunks(answer: Answer, step_name: str = "exploration") -> list[str]:
    """The chunks a trace step ranked, in rank order: a Document RAG exploration's ``tg:ChunkSelection``s, a
    GraphRAG ranking's ``tg:RankedPassage``s (``step_name="ranking"``).

    Their ``sources`` are only the chunks the extractive answer cites, in citation order."""
    chunk: dict[str, str] = {}
    rank: dict[str, int] = {}
    for step in answer.steps:
        if step.step == step_name:
            for t in step.triples:
                if t.p == TG.chunk:
                    chunk[str(t.s)] = t.o.value  # type: ignore[union-attr]
                elif t.p == TG.rank:
                    rank[str(t.s)] = int(t.o.value)  # type: ignore[union-attr]
    return [chunk[s] for s in sorted((s for s in chunk if s in rank), key=lambda s: rank[s])]


def _distinct(items: Sequence[str | None]) -> list[str]:
    return [i for i in dict.fromkeys(items) if i is not None]


class Systems:
    """The four systems over one loaded collection; ``ask`` returns (answer text or None, paragraph ids)."""

    def __init__(self, pg: Provgraph, pid_of_doc: dict[str, str]) -> None:
        spans, pairs, _ = _chunk_spans(pg)
        self._pg, self._pid_of_doc = pg, pid_of_doc
        self._pid_of_chunk = {c: pid_of_doc.get(doc) for c, (doc, _, _) in spans.items()}
        self._bm25 = Bm25Baseline(pairs)
        self._chunk_ids = [c for c, _ in pairs]
        t0 = time.perf_counter()
        self._matrix = pg.runtime.embedder.embed([t for _, t in pairs])
        self.embed_seconds = time.perf_counter() - t0
        self.chunks = len(pairs)

    def ask(self, system: str, question: str) -> tuple[str | None, list[str]]:
        if system == "bm25":
            ids = self._bm25.search(question, DEPTH)
            return self._bm25.answer(question).text, _distinct([self._pid_of_chunk.get(c) for c in ids])
        if system == "dense":
            scores = self._matrix @ self._pg.runtime.embedder.embed([question])[0]
            top = np.argsort(-scores, kind="stable")[:DEPTH]
            return None, _distinct([self._pid_of_chunk.get(self._chunk_ids[i]) for i in top])
        if system == "document-rag":
            answer = self._pg.document_rag(question)
            return answer.text, _distinct([self._pid_of_chunk.get(c) for c in ranked_chunks(answer)])
        answer = self._pg.graph_rag(question)
        return answer.text, _distinct([self._pid_of_chunk.get(c) for c in ranked_chunks(answer, "ranking")])

    def close(self) -> None:
        self._bm25.close()


def _scratch() -> str | None:
    """A tmpfs for the throw-away collection when one has room (the stores' fsyncs otherwise dominate loading)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > 2 << 30:
            return str(shm)
    return None


def _load(pg: Provgraph, paragraphs: dict[str, tuple[str, str]], folder: Path) -> dict[str, str]:
    """Write one text file per paragraph, load the folder; document id → paragraph id."""
    for pid, (title, text) in paragraphs.items():
        (folder / f"{pid}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")
    files, _ = expand_paths([str(folder)])
    results = pg.load([folder])
    return {r.document.value: f.stem for f, r in zip(files, results, strict=True)}


def score(q: Question, answer: str | None, pids: Sequence[str]) -> dict:
    """One question's figures: recall@k over distinct paragraphs, answer-contains (None without answer text)."""
    out: dict = {f"r@{k}": len(q.supporting & set(pids[:k])) / max(len(q.supporting), 1) for k in KS}
    out["ans"] = None if answer is None else is_correct(answer, [list(q.answers)])
    return out


def run_set(name: str, path: Path, systems: Sequence[str], half: str, limit: int | None,
            progress: Callable[[str], None], **settings: Any) -> dict:
    """Load set ``name`` into a fresh collection and score every system on the chosen half(s)."""
    questions, paragraphs = read_set(path, limit)
    asked = [q for q in questions if half == "both" or q.half == half]
    with tempfile.TemporaryDirectory(prefix="provgraph-multihop-", dir=_scratch()) as tmp:
        home, docs = Path(tmp) / "home", Path(tmp) / "docs"
        docs.mkdir()
        with Provgraph(collection="multihop", home=home, llm="none", **settings) as pg:
            t0 = time.perf_counter()
            pid_of_doc = _load(pg, paragraphs, docs)
            load_s = time.perf_counter() - t0
            sysm = Systems(pg, pid_of_doc)
            progress(f"{name}: {len(questions)} questions, {len(paragraphs)} paragraphs, {sysm.chunks} chunks,"
                     f" loaded in {load_s:.1f} s (dense matrix {sysm.embed_seconds:.1f} s);"
                     f" embedder {pg.runtime.embedder.name}")
            out: dict[str, Any] = {"set": name, "questions": len(questions), "paragraphs": len(paragraphs), "chunks": sysm.chunks,
                   "load_seconds": round(load_s, 1), "embedder": pg.runtime.embedder.name, "systems": {}}
            for system in systems:
                details, times = [], []
                for q in asked:
                    t1, error = time.perf_counter(), None
                    try:
                        answer, pids = sysm.ask(system, q.question)
                    except ProvgraphError as exc:
                        answer, pids, error = "", [], str(exc)
                    times.append(time.perf_counter() - t1)
                    details.append({"id": q.id, "type": q.type, "half": q.half, **score(q, answer, pids),
                                    "ms": round(times[-1] * 1000, 2),
                                    "paragraphs": pids[:5], "supporting": sorted(q.supporting),
                                    "answer": (answer or "")[:300], "error": error})
                out["systems"][system] = {"details": details}
                progress(f"{name}: {system} done in {sum(times):.1f} s")
            sysm.close()
    return out


def summarise(result: dict, half: str) -> list[dict]:
    """Per system: mean recall@k and answer-contains, overall and by type, for one half (or ``both``)."""
    rows = []
    for system, res in result["systems"].items():
        sel = [d for d in res["details"] if half == "both" or d["half"] == half]
        timing = percentiles([d["ms"] / 1000 for d in sel]) if sel else {}
        row: dict = {"system": system, "n": len(sel), "p50_ms": timing.get("p50_ms"), "p95_ms": timing.get("p95_ms"),
                     "errors": sum(d["error"] is not None for d in sel)}
        for label, group in [("all", sel), *((t, [d for d in sel if d["type"] == t])
                                             for t in TYPES.get(result["set"], ()))]:
            row[label] = _means(group)
        rows.append(row)
    return rows


def _means(group: list[dict]) -> dict:
    n = len(group)
    out: dict = {"n": n, **{f"r@{k}": round(100 * sum(d[f"r@{k}"] for d in group) / n, 1) if n else None
                            for k in KS}}
    answered = [d["ans"] for d in group if d["ans"] is not None]
    out["ans"] = round(100 * sum(answered) / len(answered), 1) if answered else None
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def table(result: dict, half: str) -> str:
    """One set's half as a text table: overall R@2, R@5, answer-contains, then R@5 (R@2) by type."""
    types = TYPES.get(result["set"], ())
    rows = summarise(result, half)
    head = ["system", "R@2", "R@5", "ans"] + [f"{t} ({rows[0][t]['n'] if rows else 0})" for t in types]
    head += ["p50 ms", "p95 ms"]
    lines = [head]
    for r in rows:
        a = r["all"]
        lines.append([r["system"], _fmt(a["r@2"]), _fmt(a["r@5"]), _fmt(a["ans"])]
                     + [f"{_fmt(r[t]['r@5'])} ({_fmt(r[t]['r@2'])})" for t in types]
                     + [f"{r['p50_ms']:.0f}" if r["p50_ms"] is not None else "-",
                        f"{r['p95_ms']:.0f}" if r["p95_ms"] is not None else "-"])
    widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
    n = rows[0]["n"] if rows else 0
    text = [f"{result['set']} {half.upper()} ({n} questions; corpus {result['paragraphs']} paragraphs,"
            f" {result['chunks']} chunks, loaded in {result['load_seconds']} s; embedder {result['embedder']});"
            f" by type: R@5 (R@2)"]
    for i, x in enumerate(lines):
        text.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(x, widths))))
        if i == 0:
            text.append("  ".join("-" * w for w in widths))
    return "\n".join(text)


def details(result: dict) -> str:
    """One line per question and system: half, type, R@2, R@5, answer-contains, the question id, the answer."""
    lines = []
    for system, res in result["systems"].items():
        for d in res["details"]:
            ans = {None: "  ", True: "ok", False: "--"}[d["ans"]]
            lines.append(f"  {system:<12} {d['half']:<6} {d['type']:<17} {d['r@2']:.2f} {d['r@5']:.2f} {ans}"
                         f" {d['id']:<30} {' '.join(d['answer'][:100].split())}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", dest="sets", choices=list(SETS), help="set (repeatable); default all")
    ap.add_argument("--only", action="append", choices=SYSTEMS, help="system (repeatable); default all four")
    ap.add_argument("--half", choices=("tune", "report", "both"), default="both",
                    help="questions asked; 'both' (default) prints each half's table, labelled")
    ap.add_argument("--limit", type=int, help="only the set's first N questions (and their paragraphs)")
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.add_argument("--details", action="store_true", help="with the table: one line per question and system")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("PROVGRAPH_MULTIHOP_DATA", DATA_ROOT)),
                    help="folder of <set>/data.jsonl (default bench/eval/multihop, or $PROVGRAPH_MULTIHOP_DATA)")
    ap.add_argument("--embedder", help="embedder setting for the collection (e.g. sentence-transformers)")
    ap.add_argument("--embedder-model", help="embedder_model setting")
    args = ap.parse_args(argv)
    names = args.sets or list(SETS)
    missing = [str(data_file(n, args.data)) for n in names if not data_file(n, args.data).is_file()]
    if missing:
        print(f"error: no data file {', '.join(missing)}; make them with bench/multihop_data.py --source GITDIR"
              " (see bench/eval/multihop/SOURCES.md)", file=sys.stderr)
        return 2
    systems = [s for s in SYSTEMS if not args.only or s in args.only]
    settings = {k: v for k, v in (("embedder", args.embedder), ("embedder_model", args.embedder_model)) if v}
    quiet = args.format == "json"

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results = []
    for name in names:
        res = run_set(name, data_file(name, args.data), systems, args.half, args.limit, progress, **settings)
        results.append(res)
        if not quiet:
            for half in (HALVES if args.half == "both" else (args.half,)):
                print(table(res, half), end="\n\n")
            if args.details:
                print(details(res), end="\n\n")
            sys.stdout.flush()
    if quiet:
        for res in results:
            res["summary"] = {h: summarise(res, h) for h in (*HALVES, "both")}
        json.dump({"load": os.getloadavg(), "sets": results}, sys.stdout, ensure_ascii=False, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
