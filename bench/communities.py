"""Communities benchmark (issue 31): communities and reports for N chunks without an LLM, and global question latency.

    .venv/bin/python bench/communities.py [--chunks 20000] [--keep HOME] [--questions 50] [--change-docs 20]

Builds (or reuses, with ``--keep`` pointing at a home bench/scale.py or this script built) the
bench/scale.py corpus: made-up names, 20 facts a chunk, through the real pipeline. Then times one
``communities build`` (detection: read facts and support, cluster, store; reports: extractive) from
an empty communities graph, a second build on the unchanged graph (writes nothing), and ``--questions``
global questions without an LLM on a warm runtime (as a server answers them). Then the change: the
first ``--change-docs`` documents replaced by new text (seeded by the clock, so a kept home changes on every
run), one build after it (what ``communities build`` does after a load), and for comparison the full
rebuild on the same graph: every community quad removed, then a build from nothing. Prints one JSON line
per figure with the issue's target and the machine's load; never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report  # noqa: E402
from scale import ScriptedLlm, ingest, load_now, make_names  # noqa: E402

from provgraph.communities.build import BuildResult, build  # noqa: E402
from provgraph.config import load_settings  # noqa: E402
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, TG  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402
from scale import time_to_final  # noqa: E402

QUESTIONS = ("What are the main themes?", "Which groups of people does this corpus cover?",
             "Summarise what the documents say about {name}.", "Who does {name} work with?")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--change-docs", type=int, default=20, help="documents the change replaces (0: no change)")
    ap.add_argument("--keep", type=Path, help="home to build the corpus in and keep (reused when it holds one)")
    args = ap.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="pg-communities-"))
    settings = load_settings(home=str(home), collection="scale", llm="none")
    rng = random.Random(args.seed)
    names = make_names(rng)
    with Runtime(settings, llm=ScriptedLlm()) as rt:
        if len(rt.store) == 0:
            folder = home / "docs"
            folder.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            ingest(rt, folder, args.chunks // 10, rng, names)
            report("communities.corpus", chunks=args.chunks, seconds=round(time.perf_counter() - t0, 1),
                   quads=len(rt.store), uptime=load_now())
    with Runtime(settings) as rt:
        drop(rt)  # from scratch
        stages: dict[str, float] = {}
        last = [time.perf_counter(), ""]

        def tell(stage: str, done: int, total: int) -> None:
            now = time.perf_counter()
            if stage != last[1]:
                if last[1]:
                    stages[str(last[1])] = stages.get(str(last[1]), 0.0) + now - float(last[0])
                last[0], last[1] = now, stage

        wall, cpu, result = timed_build(rt, tell)
        d = result.detection
        report("communities.build", target="<= 60 s for 20,000 chunks without an LLM", chunks=args.chunks,
               seconds=round(wall, 2), cpu_s=round(cpu, 2), entities=d.entities, facts=d.facts,
               communities=d.communities, levels=d.levels, reports=result.reports.written,
               stages_s={k: round(v, 2) for k, v in stages.items()},
               community_quads=rt.store.count(g=GRAPH_COMMUNITIES), uptime=load_now())
        t0, c0 = time.perf_counter(), time.process_time()
        again = asyncio.run(build(rt.store, rt.librarian))
        report("communities.rebuild_unchanged", seconds=round(time.perf_counter() - t0, 2),
               cpu_s=round(time.process_time() - c0, 2), unchanged=again.detection.unchanged,
               added=again.detection.added, reports=again.reports.written, uptime=load_now())
        engine = rt.global_rag()
        questions = [rng.choice(QUESTIONS).format(name=rng.choice(names)) for _ in range(args.questions + 5)]
        for q in questions[args.questions:]:  # warm-up: the report index, the model
            asyncio.run(time_to_final(engine.ask(q)))
        samples, used = [], []
        for q in questions[:args.questions]:
            c0 = time.process_time()
            samples.append(asyncio.run(time_to_final(engine.ask(q)))[0])
            used.append(time.process_time() - c0)
        w, c = percentiles(samples), percentiles(used)
        report("communities.global_question", target="p95 <= 200 ms (no LLM)", questions=args.questions,
               p50_ms=w["p50_ms"], p95_ms=w["p95_ms"], cpu_p50_ms=c["p50_ms"], cpu_p95_ms=c["p95_ms"],
               uptime=load_now())
    if args.change_docs:
        change(settings, home, args.change_docs, names)


def drop(rt: Runtime) -> tuple[float, float]:
    """Remove every community quad; (wall, CPU) seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    rt.store.apply(remove=list(rt.store.match(None, None, None, g=GRAPH_COMMUNITIES)))
    return time.perf_counter() - wall, time.process_time() - cpu


def timed_build(rt: Runtime, tell: Any = None) -> tuple[float, float, BuildResult]:
    """One build without an LLM; (wall, CPU) seconds and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = asyncio.run(build(rt.store, rt.librarian, progress=tell))
    return time.perf_counter() - wall, time.process_time() - cpu, result


def change(settings: Any, home: Path, docs: int, names: list[str]) -> None:
    """Replace the first ``docs`` documents, build after it, then rebuild everything on the same graph."""
    with Runtime(settings, llm=ScriptedLlm()) as rt:
        folder = home / "change"
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        ingest(rt, folder, docs, random.Random(time.time_ns()), names)
        loaded = time.perf_counter() - t0
    with Runtime(settings) as rt:
        stale = sum(1 for _ in rt.store.match(None, TG.stale, None, g=GRAPH_COMMUNITIES))
        wall, cpu, result = timed_build(rt)
        d = result.detection
        report("communities.rebuild_after_change", target="cheaper than the full rebuild below",
               documents_replaced=docs, load_s=round(loaded, 1), stale_reports_before=stale, seconds=round(wall, 2),
               cpu_s=round(cpu, 2), kept=d.kept, added=d.added, removed=d.removed, reports=result.reports.written,
               uptime=load_now())
        drop_wall, drop_cpu = drop(rt)
        wall, cpu, result = timed_build(rt)
        report("communities.full_rebuild_after_change", seconds=round(drop_wall + wall, 2),
               cpu_s=round(drop_cpu + cpu, 2), of_which_drop_s=round(drop_wall, 2), of_which_drop_cpu_s=round(drop_cpu, 2),
               communities=result.detection.communities, uptime=load_now())


if __name__ == "__main__":
    main()
