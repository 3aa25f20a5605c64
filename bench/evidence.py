"""Sentence evidence of selected edges, and provenance quads per chunk subgraph (issue 13).

    .venv/bin/python bench/evidence.py [--corpus examples/corpus] [--eval bench/eval]

Loads each corpus into a fresh collection (no-LLM mode: the co-occurrence extractor), asks its
questions with GraphRAG, and for every source of every selected edge checks the evidence span
recorded in the store: at most 400 characters, and containing both edge labels (subject and
object, case- and whitespace-insensitive). Target: >= 95 % of sources. Also counts the quads of
every chunk subgraph (subgraph + activity + agent) against N facts: target <= N + 14 (N + 15
with an ontology). Evaluation sets under ``--eval`` (each a folder with ``docs/`` and
``questions.jsonl``, bench/eval/README.md) are measured the same way when present.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import report  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.events import Final  # noqa: E402
from provgraph.explain.traces import load_trace  # noqa: E402
from provgraph.rdf.terms import Iri  # noqa: E402
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, TG  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".txt", ".md", ".html", ".htm", ".pdf")
MAX_SPAN = 400
CORPUS_QUESTIONS = [
    "Who discovered radioactivity?",
    "Who won the Nobel Prize in Chemistry in 1911?",
    "Who discovered polonium?",
    "What is radium?",
    "Who was Ernest Rutherford?",
    "What did Henri Becquerel discover?",
    "Who founded the Radium Institute?",
    "What are alpha rays?",
    "Where was Marie Curie born?",
    "Who worked with Pierre Curie?",
]


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _questions(folder: Path, rt: Runtime, fallback: list[str]) -> list[str]:
    for name in ("questions.jsonl", "questions.txt"):
        path = folder / name
        if path.is_file():
            lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            if name.endswith(".jsonl"):
                return [str(json.loads(line).get("question", "")) for line in lines if line.startswith("{")]
            return lines
    if fallback:
        return fallback
    rows = rt.store.select("SELECT ?l WHERE { ?e rdfs:label ?l } LIMIT 2000")
    labels = sorted({r["l"].value for r in rows if "l" in r})
    return [f"What do we know about {label}?" for label in random.Random(13).sample(labels, min(10, len(labels)))]


def _ask(rt: Runtime, question: str) -> str | None:
    async def go() -> Final | None:
        last = None
        async for event in rt.graph_rag().ask(question):
            last = event
        return last if isinstance(last, Final) else None

    final = asyncio.run(go())
    return final.session_id if final is not None else None


def _evidence(rt: Runtime, sessions: list[str]) -> dict[str, int]:
    tally: Counter[str] = Counter()
    for sid in sessions:
        trace = load_trace(rt.store, sid, librarian=rt.librarian, provenance=True)
        for edge in trace.focus.edges if trace.focus else ():
            s_label, o_label = _flat(edge.labels[0]), _flat(edge.labels[2])
            for ref in edge.sources or ():
                tally["sources"] += 1
                ev = ref.evidence
                if ev is None or ev.text is None:
                    continue
                tally["with_evidence"] += 1
                short = ev.length <= MAX_SPAN
                both = s_label in _flat(ev.text) and o_label in _flat(ev.text)
                tally["short"] += short
                tally["both_labels"] += both
                tally["ok"] += short and both
    return dict(tally)


def _quads_per_subgraph(rt: Runtime) -> tuple[int, int, int]:
    """(subgraphs, largest overhead beyond N, subgraphs over the budget)."""
    worst, over, count = 0, 0, 0
    for q in list(rt.store.match(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)):
        sg = q.s
        own = list(rt.store.match(sg, None, None, g=GRAPH_SOURCE))
        n = sum(1 for x in own if x.p == TG.contains)
        activity = next((x.o for x in own if x.p == PROV.wasGeneratedBy), None)
        act = list(rt.store.match(activity, None, None, g=GRAPH_SOURCE)) if isinstance(activity, Iri) else []
        agent = next((x.o for x in act if x.p == PROV.wasAssociatedWith), None)
        agent_quads = len(list(rt.store.match(agent, None, None, g=GRAPH_SOURCE))) if isinstance(agent, Iri) else 0
        extra = len(own) + len(act) + agent_quads - n
        budget = 15 if any(x.p == TG.ontology for x in act) else 14
        count += 1
        worst = max(worst, extra)
        over += extra > budget
    return count, worst, over


def measure(name: str, folder: Path, fallback: list[str]) -> None:
    docs = folder / "docs" if (folder / "docs").is_dir() else folder
    files = sorted(p for p in docs.rglob("*") if p.suffix.lower() in SUFFIXES and p.name.lower() != "readme.md")
    if not files:
        return
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as home:
        settings = load_settings(home=home, collection="bench", llm="none")
        with Runtime(settings) as rt:
            loader = rt.loader()
            chunks = [c for path in files for c in loader.load_file(path).chunks]
            asyncio.run(rt.extraction().run(chunks))
            sessions = [sid for q in _questions(folder, rt, fallback) if (sid := _ask(rt, q))]
            tally = _evidence(rt, sessions)
            subgraphs, worst, over = _quads_per_subgraph(rt)
    n = tally.get("sources", 0) or 1
    report(f"evidence/{name}", target=">= 95 % of selected edges' sources: span <= 400 chars with both labels",
           documents=len(files), questions=len(sessions), sources=tally.get("sources", 0),
           with_evidence_pct=round(100 * tally.get("with_evidence", 0) / n, 1),
           short_pct=round(100 * tally.get("short", 0) / n, 1),
           both_labels_pct=round(100 * tally.get("both_labels", 0) / n, 1),
           ok_pct=round(100 * tally.get("ok", 0) / n, 1))
    report(f"quads-per-subgraph/{name}", target="<= N + 14 (N + 15 with an ontology)",
           subgraphs=subgraphs, largest_overhead=worst, over_budget=over)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "examples" / "corpus")
    parser.add_argument("--eval", type=Path, default=ROOT / "bench" / "eval")
    args = parser.parse_args()
    measure("sample-corpus", args.corpus, CORPUS_QUESTIONS)
    if args.eval.is_dir():  # a set is a folder with questions.jsonl (bench/eval/README.md), held-out ones too
        for questions in sorted(args.eval.rglob("questions.jsonl")):
            folder = questions.parent
            measure(str(folder.relative_to(args.eval)), folder, [])


if __name__ == "__main__":
    main()
