"""Scale-out benchmark (issue 26): workers, ingest CPU on PostgreSQL, GraphRAG on PostgreSQL against embedded.

    .venv/bin/python bench/scale_out.py [--workers 1,2,4] [--worker-docs 40] [--chunks 20000] [--questions 50]
        [--clients 8] [--requests 10] [--only workers,replicas,ingest,queries] [--embedded-home HOME]

Starts PostgreSQL (+ pgvector) and NATS JetStream with ``scripts/services.py`` in a scratch folder (stopped by pid
at the end), and uses bench/scale.py's corpus (seed 16: 2,000 names, 10 chunks a document, 20 facts a chunk).

- ``workers``: ``--worker-docs`` documents are loaded into a fresh PostgreSQL collection and enqueued, one job a
  document, for 1, 2 and 4 ``provgraph worker`` processes (started and waiting on the queue first). Their LLM is a
  scripted OpenAI-compatible HTTP server on loopback that answers each extraction with the chunk's facts after
  ``--llm-delay`` (200 ms). Figure: chunks/s from the enqueue to the last job done, and the speed-up over 1 worker.
- ``replicas``: two ``provgraph serve`` processes on the database, each with a home of its own; the sample corpus
  loaded through one; ``--clients`` threads ask ``--requests`` GraphRAG questions each, alternating between them.
- ``ingest``: ``--chunks`` chunks loaded in process on PostgreSQL in loads of 1,000 (bench/scale.py's zero-latency
  scripted LLM): CPU per chunk of the first and the last load, this process's and PostgreSQL's (the postmaster and
  its backends, from /proc) together.
- ``queries``: GraphRAG's non-LLM stages (bench/scale.py's queries) on that collection, and on the embedded one
  built from the same corpus (or the ``bench/scale.py --keep HOME`` collection given as ``--embedded-home``).
Prints one JSON line per figure with its target; never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, run_clients  # noqa: E402
from scale import (CHUNKS_PER_DOC, DOCS_PER_LOAD, FACT, ScriptedLlm, ingest, load_now,  # noqa: E402
                   make_document, make_names, queries)

from provgraph.cli.jobs import enqueue  # noqa: E402
from provgraph.config import load_settings  # noqa: E402
from provgraph.runtime import Runtime, job_queue, job_table  # noqa: E402
from provgraph.store.pg_jobs import DONE, FAILED  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ROOT / "scripts" / "services.py"
SEED = 16


class _Llm(BaseHTTPRequestHandler):
    """``/v1/chat/completions``: the facts of the prompt's chunk as the extraction answer, after ``delay`` seconds."""

    delay = 0.2
    calls = 0
    in_flight = most_in_flight = 0
    lock = threading.Lock()

    def log_message(self, *_: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        content = str(body.get("messages", [{}])[-1].get("content", ""))
        answer = {"relationships": [{"subject": s, "predicate": v, "object": o, "object_is_literal": False}
                                    for s, v, o in FACT.findall(content)]}
        with _Llm.lock:
            _Llm.calls += 1
            _Llm.in_flight += 1
            _Llm.most_in_flight = max(_Llm.most_in_flight, _Llm.in_flight)
        time.sleep(self.delay)
        with _Llm.lock:
            _Llm.in_flight -= 1
        reply = json.dumps({"id": "bench", "object": "chat.completion", "created": 0, "model": "bench-scripted",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": json.dumps(answer)}}],
                            "usage": {"prompt_tokens": 500, "completion_tokens": 400, "total_tokens": 900}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def start_services(folder: Path) -> dict[str, Any]:
    run = subprocess.run([sys.executable, str(SERVICES), "start", "--dir", str(folder), "--only", "postgres,nats"],
                         capture_output=True, text=True, timeout=180)
    if run.returncode != 0:
        raise SystemExit(f"services.py start failed: {run.stderr.strip()}")
    return dict(json.loads((folder / "services.json").read_text()))


def tree_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` (with its reaped children) and of its live children (Linux /proc)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid):
            total += sum(int(x) for x in fields[11:15])
        elif fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / tick


async def _waiting_pulls(url: str) -> int:
    import nats

    from provgraph.queue.nats_queue import STREAM

    nc = await nats.connect(url)
    try:
        try:
            info = await nc.jetstream().consumer_info(STREAM, "workers")
        except Exception:  # noqa: BLE001 - not made yet: no worker has asked
            return 0
        return int(info.num_waiting or 0)
    finally:
        await nc.close()


def workers_figures(counts: list[int], docs: int, env: dict[str, str], home: Path, urls: dict[str, str],
                    pg_pid: int) -> None:
    """Chunks/s with each number of worker processes (one collection each, the same documents), with PostgreSQL's
    CPU and how many of its backends waited on a lock (sampled at each poll of the jobs table)."""
    import psycopg

    exe = str(Path(sys.executable).with_name("provgraph"))
    base: float | None = None
    folder = home / "worker-docs"
    folder.mkdir(parents=True, exist_ok=True)
    for n in counts:
        rng = random.Random(SEED)
        names = make_names(rng)
        settings = load_settings(home=str(home), collection=f"workers-{n}", chunk_size=1500, chunk_overlap=0,
                                 store_url=urls["postgres"], queue_url=urls["nats"])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        procs = [subprocess.Popen([exe, "worker", "--idle-exit", "3"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for _ in range(n)]
        deadline = time.monotonic() + 120
        while asyncio.run(_waiting_pulls(urls["nats"])) < n:  # every worker started and asking for a job
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise SystemExit(f"{n} worker(s) did not start: {[p.poll() for p in procs]}")
            time.sleep(0.1)
        with Runtime(settings, llm=None) as rt:
            files = []
            for d in range(docs):
                path = folder / f"doc{d:05d}.txt"
                path.write_text(make_document(rng, names), encoding="utf-8")
                files.append(path)
            results = [rt.loader().load_file(f) for f in files]
            queue = job_queue(settings)
            assert queue is not None
            calls, t0, _Llm.most_in_flight = _Llm.calls, time.perf_counter(), 0
            pg0, waits = tree_cpu(pg_pid), []
            watch = psycopg.connect(urls["postgres"], autocommit=True)
            ids = [str(row["job"]) for row in enqueue(rt, queue, results, "relationships")]
            table = job_table(settings)
            try:
                while True:
                    states = [s for s, _, _ in table.states(ids).values()]
                    if sum(s in (DONE, FAILED) for s in states) == len(ids):
                        break
                    waits.append(int(watch.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                                                   "'Lock'").fetchone()[0]))  # type: ignore[index]
                    time.sleep(0.05)
            finally:
                table.close()
                watch.close()
            pg_cpu = tree_cpu(pg_pid) - pg0
            wall = time.perf_counter() - t0
            chunks = sum(len(r.chunks) for r in results)
        errs = [p.communicate(timeout=120)[1] for p in procs]
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        rate = chunks / wall
        base = base or rate / n
        report("scale_out.workers", target=">= 3.5x the 1-worker rate at 4 workers", workers=n, documents=docs,
               chunks=chunks, seconds=round(wall, 2), chunks_per_s=round(rate, 1),
               speedup=round(rate / base, 2), llm_calls=_Llm.calls - calls, llm_delay_s=_Llm.delay,
               llm_most_in_flight=_Llm.most_in_flight,
               failed=states.count(FAILED), worker_cpu_ms_per_chunk=round(cpu * 1000 / chunks, 1),
               postgres_cpu_ms_per_chunk=round(pg_cpu * 1000 / chunks, 1),
               backends_waiting_on_locks_mean=round(sum(waits) / max(1, len(waits)), 2),
               worker_errors=[e.strip().splitlines()[-1] for e in errs if "error" in e.lower()][:2], uptime=load_now())
        for f in files:
            f.unlink()


def replicas_figures(env: dict[str, str], scratch: Path, clients: int, requests: int) -> None:
    """Two ``provgraph serve`` processes on the database (a home each), the sample corpus loaded through the first;
    ``clients`` threads each ask ``requests`` GraphRAG questions, alternating between the two."""
    import httpx

    servers, urls = [], []
    corpus = ROOT / "examples" / "corpus"
    try:
        for name in ("a", "b"):
            port = _free_port()
            log = open(scratch / f"serve-{name}.log", "wb")  # noqa: SIM115 - the server's, kept open while it runs
            servers.append(subprocess.Popen([str(Path(sys.executable).with_name("provgraph")), "serve", "--host",
                                             "127.0.0.1", "--port", str(port)],
                                            env={**{k: v for k, v in env.items() if k != "PROVGRAPH_QUEUE_URL"},
                                                 "PROVGRAPH_HOME": str(scratch / f"home-{name}"),
                                                 "PROVGRAPH_LLM": "none"},  # the corpus extracted in the server
                                            stdout=log, stderr=subprocess.STDOUT))
            urls.append(f"http://127.0.0.1:{port}/api/v1")
        for url in urls:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(url + "/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit(f"{url} did not start")
                time.sleep(0.1)
        with httpx.Client(base_url=urls[0], timeout=120) as http:
            http.post("/collections", json={"name": "replicas"})
            job = http.post("/collections/replicas/documents",
                            files=[("files", (f.name, f.read_bytes())) for f in sorted(corpus.iterdir())]).json()
            deadline = time.monotonic() + 300
            while http.get(f"/jobs/{job['id']}").json()["status"] not in ("done", "failed"):
                if time.monotonic() > deadline:
                    raise SystemExit("the corpus did not load within 300 s")
                time.sleep(0.2)
        questions = ["Who discovered polonium?", "What did Becquerel find?", "Who founded the Radium Institute?",
                     "What is radium?", "Who won the Nobel Prize?"]
        samples: list[float] = []
        errors: list[str] = []

        def client(i: int) -> None:
            with httpx.Client(timeout=120) as http:
                for r in range(requests):
                    url = urls[(i + r) % 2]
                    t0 = time.perf_counter()
                    try:
                        got = http.post(url + "/graph-rag", json={"collection": "replicas",
                                                                  "question": questions[(i + r) % len(questions)]})
                        if got.status_code != 200:
                            errors.append(f"{got.status_code} {got.text[:80]}")
                    except httpx.HTTPError as exc:
                        errors.append(repr(exc))
                    samples.append(time.perf_counter() - t0)

        wall = run_clients(client, clients)
        figures = percentiles(samples)
        report("scale_out.replicas", target="two serve replicas under 8 clients: errors 0, p95 reported",
               replicas=2, clients=clients, requests=len(samples), errors=len(errors), first_errors=errors[:2],
               p50_ms=round(figures["p50_ms"], 1), p95_ms=round(figures["p95_ms"], 1),
               requests_per_s=round(len(samples) / wall, 1), uptime=load_now())
    finally:
        for proc in servers:
            proc.terminate()
        for proc in servers:
            proc.wait(timeout=60)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pg_ingest(settings: Any, chunks: int, pg_pid: int, folder: Path) -> tuple[Runtime, list[dict[str, float]]]:
    """Load ``chunks`` chunks into PostgreSQL in loads of 1,000 (bench/scale.py's corpus and documents, in order);
    each load's figures with PostgreSQL's CPU beside this process's. Returns the open runtime, for the queries."""
    rng = random.Random(SEED)
    names = make_names(rng)
    rt = Runtime(settings, llm=ScriptedLlm())  # type: ignore[arg-type]
    rt.embedder.embed(["warm up"])
    loader, pipe = rt.loader(), rt.extraction(rt.extractors("relationships"))
    rows: list[dict[str, float]] = []
    for start in range(0, chunks // CHUNKS_PER_DOC, DOCS_PER_LOAD):
        files = []
        for d in range(start, min(chunks // CHUNKS_PER_DOC, start + DOCS_PER_LOAD)):
            path = folder / f"doc{d:05d}.txt"
            path.write_text(make_document(rng, names), encoding="utf-8")
            files.append(path)
        pg0, cpu0, wall0 = tree_cpu(pg_pid), time.process_time(), time.perf_counter()
        loaded = [c for f in files for c in loader.load_file(f).chunks]
        outcomes = asyncio.run(pipe.run(loaded, only_missing=True, on_commit=rt.commit_documents))
        wall, cpu, pg = time.perf_counter() - wall0, time.process_time() - cpu0, tree_cpu(pg_pid) - pg0
        n = len(loaded)
        rows.append({"chunks_total": start * CHUNKS_PER_DOC + n, "chunks_per_s": round(n / wall, 1),
                     "cpu_ms_per_chunk": round((cpu + pg) * 1000 / n, 2),
                     "of_which_postgres_ms": round(pg * 1000 / n, 2), "failed": sum(o.failed for o in outcomes)})
        report("scale_out.ingest.load", **rows[-1], uptime=load_now())
        for f in files:
            f.unlink()
    return rt, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--worker-docs", type=int, default=40, help="documents (10 chunks each) per worker run")
    ap.add_argument("--llm-delay", type=float, default=0.2, help="seconds the scripted LLM takes per call")
    ap.add_argument("--chunks", type=int, default=20000, help="chunks of the PostgreSQL ingest (a multiple of 1,000)")
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--clients", type=int, default=8, help="clients of the two serve replicas")
    ap.add_argument("--requests", type=int, default=10, help="GraphRAG requests per client")
    ap.add_argument("--only", default="workers,replicas,ingest,queries")
    ap.add_argument("--embedded-home", type=Path, help="a bench/scale.py --keep HOME of the same --chunks")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    scratch = Path(tempfile.mkdtemp(prefix="provgraph-scale-out-"))
    scratch.chmod(0o755)  # PostgreSQL runs as an unprivileged account when we are root
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Llm)
    httpd.daemon_threads = True
    _Llm.delay = args.llm_delay
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        state = start_services(scratch / "services")
        urls = {k: str(v["url"]) for k, v in state.items()}
        home = scratch / "home"
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")},
               "PROVGRAPH_HOME": str(home), "PROVGRAPH_STORE_URL": urls["postgres"],
               "PROVGRAPH_QUEUE_URL": urls["nats"], "PROVGRAPH_LLM_BASE_URL": f"http://127.0.0.1:{httpd.server_port}/v1",
               "PROVGRAPH_LLM_MODEL": "bench-scripted", "PROVGRAPH_LLM_API_KEY": "bench", "PROVGRAPH_LLM_MAX_RETRIES": "0"}
        if "workers" in parts:
            workers_figures([int(n) for n in args.workers.split(",")], args.worker_docs, env, home, urls,
                            int(state["postgres"]["pid"]))
        if "replicas" in parts:
            replicas_figures(env, scratch, args.clients, args.requests)
        if parts & {"ingest", "queries"}:
            docs = scratch / "docs"
            docs.mkdir()
            settings = load_settings(home=str(home), collection="scale", chunk_size=1500, chunk_overlap=0,
                                     store_url=urls["postgres"])
            rt, rows = pg_ingest(settings, args.chunks, int(state["postgres"]["pid"]), docs)
            first, last = rows[0], rows[-1]
            report("scale_out.ingest", target="CPU per chunk flat within ±20 % from 1,000 to 20,000 chunks",
                   chunks=last["chunks_total"], cpu_ms_per_chunk_first=first["cpu_ms_per_chunk"],
                   cpu_ms_per_chunk_last=last["cpu_ms_per_chunk"],
                   postgres_ms_first=first["of_which_postgres_ms"], postgres_ms_last=last["of_which_postgres_ms"],
                   cpu_growth=round(last["cpu_ms_per_chunk"] / first["cpu_ms_per_chunk"] - 1, 3),
                   chunks_per_s_first=first["chunks_per_s"], chunks_per_s_last=last["chunks_per_s"], uptime=load_now())
            if "queries" in parts:
                rng = random.Random(SEED)
                names = make_names(rng)
                for _ in range(args.chunks // CHUNKS_PER_DOC):  # the corpus's draws: the questions bench/scale.py asks
                    make_document(rng, names)
                print('{"store": "postgresql"}', flush=True)
                queries(rt, names, args.questions, rng)
                rt.close()
                embedded_queries(args, scratch, names)
            else:
                rt.close()
    finally:
        httpd.shutdown()
        subprocess.run([sys.executable, str(SERVICES), "stop", "--dir", str(scratch / "services")],
                       capture_output=True, timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


def embedded_queries(args: argparse.Namespace, scratch: Path, names: list[str]) -> None:
    """The same questions on the embedded collection of the same corpus (built here unless given)."""
    rng = random.Random(SEED)
    make_names(rng)
    home = args.embedded_home or scratch / "embedded"
    settings = load_settings(home=str(home), collection="scale", chunk_size=1500, chunk_overlap=0)
    if args.embedded_home is None:
        folder = scratch / "embedded-docs"
        folder.mkdir()
        with Runtime(settings, llm=ScriptedLlm()) as rt:  # type: ignore[arg-type]
            ingest(rt, folder, args.chunks // CHUNKS_PER_DOC, rng, names)
    else:
        for _ in range(args.chunks // CHUNKS_PER_DOC):
            make_document(rng, names)
    print('{"store": "embedded"}', flush=True)
    with Runtime(settings, create=False, llm=ScriptedLlm()) as rt:  # type: ignore[arg-type]
        queries(rt, names, args.questions, rng)


if __name__ == "__main__":
    main()
