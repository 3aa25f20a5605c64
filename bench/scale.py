"""Scale benchmark (issue 16): ingest speed, CPU and disk per chunk, query latency, start-up time.

    .venv/bin/python bench/scale.py [--chunks 1000] [--seed 16] [--questions 50] [--stages]

Generates a corpus deterministically from ``--seed``: 2,000 made-up two-word names; documents of
10 chunks; each ~1,000-character chunk holds 20 "A verb B." facts naming 40 distinct entities.
Documents go through the real pipeline (``DocumentLoader`` then ``ExtractionPipeline`` with the
``relationships`` extractor, the default embedder, the collection's store/librarian/vectors), in
loads of 100 documents (1,000 chunks) as ``provgraph load`` would take a folder. The LLM is a
zero-latency script (below) answering with the facts of the chunk, as text validated against the
schema like a real backend's answer, so the figures are provgraph's own. Prints one JSON line per
figure with the issue's target and the machine's load (``uptime``) next to it; never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, rocksdb_cpu_seconds  # noqa: E402
from graph_rag import ZeroLatencyLlm  # noqa: E402

from provgraph.retrieval.retrieve import Retriever  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.events import Explain, Final  # noqa: E402
from provgraph.models.base import JsonCompletion, Message, Usage  # noqa: E402
from provgraph.models.jsonrepair import json_completion  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402

VERBS = ("admires", "funds", "teaches", "visits", "follows", "hires", "trusts", "greets", "advises", "joins",
         "rivals", "mentors", "invites", "thanks", "answers", "outranks")
ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "pr", "r", "s", "st", "t", "tr",
          "v", "z")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
CODAS = ("", "n", "r", "l", "s", "th", "nd", "rk")
FACT = re.compile(r"([A-Z][a-z]+ [A-Z][a-z]+) (" + "|".join(VERBS) + r") ([A-Z][a-z]+ [A-Z][a-z]+)\.")
CHUNKS_PER_DOC, FACTS_PER_CHUNK, DOCS_PER_LOAD = 10, 20, 100


def make_names(rng: random.Random, n: int = 2000) -> list[str]:
    """``n`` distinct made-up two-word names (two and three syllables, capitalised)."""

    def word(syllables: int) -> str:
        return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables)).capitalize()

    names: dict[str, None] = {}
    while len(names) < n:
        names[f"{word(2)} {word(3)}"] = None
    return list(names)


def make_document(rng: random.Random, names: Sequence[str]) -> str:
    """Ten paragraphs (one chunk each) of 20 facts over 40 distinct names."""
    paragraphs = []
    for _ in range(CHUNKS_PER_DOC):
        people = rng.sample(names, 2 * FACTS_PER_CHUNK)
        paragraphs.append(" ".join(f"{people[2 * i]} {rng.choice(VERBS)} {people[2 * i + 1]}."
                                   for i in range(FACTS_PER_CHUNK)))
    return "\n\n".join(paragraphs) + "\n"


class ScriptedLlm(ZeroLatencyLlm):
    """bench/graph_rag.py's zero-latency model, whose extraction answers list the chunk's facts."""

    name = "bench:scripted"

    def _usage(self) -> Usage:
        return Usage(500, 400, self.name)

    async def complete_json(self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str,
                            **_: Any) -> JsonCompletion:
        self.calls += 1
        content = messages[-1].content
        if schema_name == "grounding":
            body: dict[str, Any] = {"concepts": re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", content)[:10]}
        else:
            body = {"relationships": [{"subject": s, "predicate": v, "object": o, "object_is_literal": False}
                                      for s, v, o in FACT.findall(content)]}
        return json_completion(json.dumps(body), self._usage(), schema, model=self.name, schema_name=schema_name)


def load_now() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


class CpuSplit:
    """CPU seconds since the last call: the store's background threads (RocksDB compaction and flushes,
    from /proc on Linux) apart from the rest, and the time the garbage collector took."""

    def __init__(self) -> None:
        self._gc = 0.0
        self._gc_started = 0.0
        gc.callbacks.append(self._on_gc)
        self._last = (rocksdb_cpu_seconds(), 0.0)

    def _on_gc(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.thread_time()
        else:
            self._gc += time.thread_time() - self._gc_started

    def close(self) -> None:
        """Stop timing the garbage collector."""
        gc.callbacks.remove(self._on_gc)

    def take(self) -> tuple[float, float]:
        """(store background CPU seconds, GC seconds) since the last call."""
        now = (rocksdb_cpu_seconds(), self._gc)
        (store, collected), self._last = self._last, now
        return now[0] - store, now[1] - collected


class StageCpu:
    """CPU seconds spent inside a few write-path calls (wrapped for the run): the process's CPU time during
    each call less what the store's background threads took meanwhile (reported apart by :class:`CpuSplit`).
    A nested call counts in each stage it is inside (``store_add`` includes ``store_bulk``)."""

    def __init__(self, targets: Sequence[tuple[str, Any, str]]) -> None:
        self.spent: dict[str, float] = {label: 0.0 for label, _, _ in targets}
        self._undo: list[tuple[Any, str, Any]] = []
        for label, owner, attr in targets:
            original = getattr(owner, attr)
            self._undo.append((owner, attr, original))
            setattr(owner, attr, self._timed(label, original))

    def _timed(self, label: str, fn: Any) -> Any:
        spent = self.spent

        def timed(*args: Any, **kwargs: Any) -> Any:
            c0, s0 = time.process_time(), rocksdb_cpu_seconds()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += max(0.0, time.process_time() - c0 - (rocksdb_cpu_seconds() - s0))

        return timed

    def take(self) -> dict[str, float]:
        """CPU seconds per stage since the last call."""
        out = dict(self.spent)
        for label in self.spent:
            self.spent[label] = 0.0
        return out

    def close(self) -> None:
        """Unwrap the calls."""
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)


def write_stages(rt: Runtime) -> StageCpu:
    """Wrap the ingest write path's stages: document loads, quad writes, vector upserts (records, HNSW), flushes."""
    from usearch.index import Index

    from provgraph.ingest.pipeline import DocumentLoader
    from provgraph.store.oxigraph import OxigraphStore
    from provgraph.vectors.records import RecordTable
    from provgraph.vectors.usearch_index import UsearchIndex

    return StageCpu([("load_file", DocumentLoader, "load_file"), ("store_bulk", OxigraphStore, "bulk_add"),
                     ("store_add", OxigraphStore, "add"), ("store_flush", OxigraphStore, "flush"),
                     ("embed", rt.embedder, "embed"), ("vector_upsert", UsearchIndex, "upsert"),
                     ("records_upsert", RecordTable, "upsert"), ("hnsw_add", Index, "add"),
                     ("vector_flush", UsearchIndex, "flush")])


def foreground(first: dict[str, float], last: dict[str, float]) -> dict[str, float]:
    """CPU ms per chunk of the first and last load less the store's background threads, and its growth."""
    a, b = (r["cpu_ms_per_chunk"] - r["of_which_store_background_ms"] for r in (first, last))
    return {"cpu_less_store_background_first": round(a, 2), "cpu_less_store_background_last": round(b, 2),
            "cpu_less_store_background_growth": round(b / a - 1, 3)}


def full_rewrite(rt: Runtime, last: dict[str, float]) -> None:
    """CPU of compacting the whole store once (every stored key read and written again), beside what the
    store's background threads took during the last load: the two are about equal when each load's
    compaction rewrites every key, as pyoxigraph's fixed RocksDB options make it (bench/store_compaction.py).
    Run last: it leaves the kept store fully compacted."""
    bg, cpu = rocksdb_cpu_seconds(), time.process_time()
    rt.store._store.optimize()  # noqa: SLF001 - pyoxigraph's own full compaction, for this figure only
    report("scale.store.full_rewrite", cpu_s=round(time.process_time() - cpu, 2),
           of_which_store_background_s=round(rocksdb_cpu_seconds() - bg, 2),
           last_load_store_background_s=round(last["of_which_store_background_ms"] * last["chunks"] / 1000, 2),
           uptime=load_now())


def du(path: Path) -> int:
    """Bytes of the files under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def ingest(rt: Runtime, folder: Path, docs: int, rng: random.Random, names: Sequence[str],
           stages: bool = False) -> list[dict[str, float]]:
    """Load ``docs`` documents in loads of 100; one figure dict per load (with ``stages``, CPU ms per chunk of
    each write-path stage too)."""
    loader = rt.loader()
    pipe = rt.extraction(rt.extractors("relationships"))
    rows = []
    done = 0
    split = CpuSplit()
    timer = write_stages(rt) if stages else None
    for start in range(0, docs, DOCS_PER_LOAD):
        files = []
        for d in range(start, min(docs, start + DOCS_PER_LOAD)):
            path = folder / f"doc{d:05d}.txt"
            path.write_text(make_document(rng, names), encoding="utf-8")
            files.append(path)
        split.take()
        wall, cpu = time.perf_counter(), time.process_time()
        results = [loader.load_file(f) for f in files]
        chunks = [c for r in results for c in r.chunks]
        outcomes = asyncio.run(pipe.run(chunks, only_missing=True, on_commit=rt.commit_documents))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        store_cpu, gc_cpu = split.take()
        spent = timer.take() if timer else {}
        failed = sum(o.failed for o in outcomes)
        done += len(chunks)
        rows.append({"chunks_total": done, "chunks": len(chunks), "seconds": round(wall, 2),
                     "chunks_per_s": round(len(chunks) / wall, 1), "cpu_ms_per_chunk": round(cpu * 1000 / len(chunks), 2),
                     "of_which_store_background_ms": round(store_cpu * 1000 / len(chunks), 2),
                     "of_which_gc_ms": round(gc_cpu * 1000 / len(chunks), 2),
                     **{f"{k}_ms": round(v * 1000 / len(chunks), 2) for k, v in spent.items()},
                     "facts": sum(o.facts for o in outcomes), "failed": failed})
        report("scale.ingest.load", **rows[-1], uptime=load_now())
        for f in files:
            f.unlink()
    split.close()
    if timer:
        timer.close()
    return rows


async def time_to_final(events: AsyncIterator[Any]) -> tuple[float, Any]:
    """Seconds from the request to the final message (the LLM answers in zero time)."""
    t0 = time.perf_counter()
    last = None
    async for ev in events:
        if isinstance(ev, Final):
            return time.perf_counter() - t0, ev
        if not isinstance(ev, Explain):
            last = ev
    raise RuntimeError(f"no final message (last event {last!r})")


def queries(rt: Runtime, names: Sequence[str], n: int, rng: random.Random) -> None:
    """GraphRAG (non-LLM stages) and Document RAG latency over ``n`` questions each."""
    questions = [f"Whom does {rng.choice(names)} {rng.choice(VERBS).removesuffix('s')}?" for _ in range(n + 5)]
    warm_up, questions = questions[n:], questions[:n]
    graph, docs = rt.graph_rag(), rt.document_rag()
    for label, engine, target in (("graph_rag", graph, "p95 <= 30 ms (issue 16); <= 50 ms (issue 25)"),
                                  ("document_rag", docs, "p95 <= 10 ms")):
        for q in warm_up:  # model, store pages; other questions than those measured, so no answer is read back
            asyncio.run(time_to_final(engine.ask(q)))
        samples, cpu = [], []
        for q in questions:
            c0 = time.process_time()
            samples.append(asyncio.run(time_to_final(engine.ask(q)))[0])
            cpu.append(time.process_time() - c0)
        wall, used = percentiles(samples), percentiles(cpu)
        report(f"scale.query.{label}", target=target, questions=n, p50_ms=wall["p50_ms"], p95_ms=wall["p95_ms"],
               cpu_p50_ms=used["p50_ms"], cpu_p95_ms=used["p95_ms"], uptime=load_now())
    retriever = Retriever.of(rt)  # graph-ranked passages with the bridge hop, provenance and facts; no trace
    for q in warm_up:
        retriever.retrieve(q, k=5)
    samples, cpu = [], []
    for q in questions:
        c0, t0 = time.process_time(), time.perf_counter()
        retriever.retrieve(q, k=5)
        samples.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    wall, used = percentiles(samples), percentiles(cpu)
    report("scale.query.retrieve", target="p95 <= 30 ms (issue 25)", questions=n, p50_ms=wall["p50_ms"], p95_ms=wall["p95_ms"],
           cpu_p50_ms=used["p50_ms"], cpu_p95_ms=used["p95_ms"], graph_chunks=retriever.ranker.graph.chunk_count,
           uptime=load_now())


def cli_seconds(args: list[str], env: dict[str, str], runs: int = 5) -> dict[str, float]:
    """Median and best wall time, and median CPU time (user + system), of ``provgraph ARGS`` (after one run not counted)."""
    exe = Path(sys.executable).with_name("provgraph")
    # as on a user's machine, from the second run on: modules compiled once and read from their bytecode cache
    # (with PYTHONDONTWRITEBYTECODE set every run compiles every module again: --help 0.21 s instead of 0.11)
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([str(exe), *args], env=env, check=True, stdout=subprocess.DEVNULL)
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([str(exe), *args], env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"median_s": round(statistics.median(times), 3), "best_s": round(min(times), 3),
            "cpu_median_s": round(statistics.median(cpu), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=1000, help="chunks to ingest (a multiple of 10; default 1000)")
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--keep", type=Path, help="build the collection under this home and keep it")
    ap.add_argument("--stages", action="store_true",
                    help="also split each load's CPU by write-path stage (adds a little CPU of its own)")
    ap.add_argument("--queries-only", action="store_true", help="only the query figures, on the --keep collection")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    names = make_names(rng)
    home = args.keep or Path(tempfile.mkdtemp(prefix="provgraph-scale-"))
    try:
        settings = load_settings(home=str(home), collection="scale", chunk_size=1500, chunk_overlap=0)
        llm = ScriptedLlm()
        if args.queries_only:
            with Runtime(settings, create=False, llm=llm) as rt:  # type: ignore[arg-type]
                queries(rt, names, args.questions, rng)
            return
        with Runtime(settings, llm=llm) as rt:  # type: ignore[arg-type]
            rt.embedder.embed(["warm up"])
            docs_dir = home / "docs"
            docs_dir.mkdir(parents=True, exist_ok=True)
            rows = ingest(rt, docs_dir, args.chunks // CHUNKS_PER_DOC, rng, names, args.stages)
            quads = len(rt.store)
        first, last = rows[0], rows[-1]
        total_chunks = last["chunks_total"]
        total_s = sum(r["seconds"] for r in rows)
        report("scale.ingest", target=">= 150 chunks/s at 1,000; >= 100 at 20,000; CPU/chunk flat ±20 %",
               chunks=total_chunks, quads=quads, chunks_per_s=round(total_chunks / total_s, 1),
               first_1000_chunks_per_s=first["chunks_per_s"], last_1000_chunks_per_s=last["chunks_per_s"],
               cpu_ms_per_chunk_first=first["cpu_ms_per_chunk"], cpu_ms_per_chunk_last=last["cpu_ms_per_chunk"],
               cpu_growth=round(last["cpu_ms_per_chunk"] / first["cpu_ms_per_chunk"] - 1, 3),
               **foreground(first, last), uptime=load_now())
        ref = rt.ref
        at_close = {"quads": du(ref.store_dir), "librarian": du(ref.librarian_dir), "vectors": du(ref.vectors_dir)}
        env = {**os.environ, "PROVGRAPH_HOME": str(home), "PROVGRAPH_LLM": "none"}
        report("scale.cli.help", target="<= 0.3 s", **cli_seconds(["--help"], env), uptime=load_now())
        report("scale.cli.sparql_ask", target="<= 0.6 s", **cli_seconds(["sparql", "ASK { ?s ?p ?o }", "-C", "scale"], env),
               uptime=load_now())
        # RocksDB deletes its obsolete write-ahead log when the store is next opened (the CLI runs above)
        parts = {"quads": du(ref.store_dir), "librarian": du(ref.librarian_dir), "vectors": du(ref.vectors_dir)}
        report("scale.disk", target="<= 60 KB per chunk at 20,000", chunks=total_chunks,
               total_mb=round(sum(parts.values()) / 2**20, 1),
               kb_per_chunk=round(sum(parts.values()) / 1024 / total_chunks, 1),
               **{f"{k}_kb_per_chunk": round(v / 1024 / total_chunks, 1) for k, v in parts.items()},
               kb_per_chunk_before_reopen=round(sum(at_close.values()) / 1024 / total_chunks, 1))
        with Runtime(settings, create=False, llm=llm) as rt:  # type: ignore[arg-type]
            queries(rt, names, args.questions, rng)
            full_rewrite(rt, last)
    finally:
        if args.keep is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
