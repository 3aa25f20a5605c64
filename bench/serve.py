"""``provgraph serve`` benchmark: HTTP overhead per graph-rag request, time to first SSE event, and
8 concurrent clients asking graph-rag while a load job runs.

    .venv/bin/python bench/serve.py [--requests 30] [--clients 8] [--per-client 10] [--copies 6] [--no-load]

Loads the sample corpus (no-LLM mode) into a fresh data directory, measures graph-rag in-process
(``Provgraph``), then starts a real server (uvicorn subprocess on a free loopback port) and asks the
same question over HTTP with a token (as a deployment would). Prints one JSON line per figure, next to
the issue's target, with the load average. Never asserts.

Overhead is measured three ways. Beside the query: each HTTP request's wall time minus the time the
server spent in the query's own steps (its ``Server-Timing`` header), so the query's variance drops
out. Paired: in-process and HTTP requests alternate and the figure is the median of the
differences (on a loaded machine the query's own noise swamps it). CPU: the server process's CPU
per request (read from /proc) minus the in-process CPU per request, and the client's CPU per HTTP
request. CPU figures survive a loaded machine; wall-clock ones do not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, run_clients  # noqa: E402

from provgraph import Provgraph  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus"
QUESTIONS = ["Who discovered polonium?", "What did Marie Curie discover?", "What are Becquerel rays?",
             "When was the Radium Institute founded?", "What did Rutherford call alpha rays?"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_now() -> str:
    """The 1/5/15-minute load averages."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare(home: Path) -> None:
    with Provgraph(collection="bench", home=home, llm="none") as pg:
        pg.load([CORPUS])


def compare(pg: Provgraph, http: httpx.Client, n: int, server_pid: int) -> dict[str, list[float]]:
    """Alternate in-process and HTTP requests (same question, same data), so machine noise hits both alike."""
    for q in QUESTIONS:  # warm-up: embedder, caches, connections
        pg.graph_rag(q)
        http.post("/graph-rag", json={"collection": "bench", "question": q}).raise_for_status()
    out: dict[str, list[float]] = {k: [] for k in ("local", "remote", "first", "local_cpu", "server_cpu",
                                                   "client_cpu", "paired", "beside_query")}
    for i in range(n):
        question = QUESTIONS[i % len(QUESTIONS)]
        body = {"collection": "bench", "question": question}
        c0, t0 = time.process_time(), time.perf_counter()
        pg.graph_rag(question)
        out["local"].append(time.perf_counter() - t0)
        out["local_cpu"].append(time.process_time() - c0)
        s0, c0, t0 = cpu_of(server_pid), time.process_time(), time.perf_counter()
        response = http.post("/graph-rag", json=body)
        out["remote"].append(time.perf_counter() - t0)
        response.raise_for_status()
        engine = float(response.headers["server-timing"].split("dur=")[1].split(";")[0]) / 1000
        out["beside_query"].append(out["remote"][-1] - engine)
        out["client_cpu"].append(time.process_time() - c0)
        out["server_cpu"].append(cpu_of(server_pid) - s0)
        out["paired"].append(out["remote"][-1] - out["local"][-1])
        t0 = time.perf_counter()
        with http.stream("POST", "/graph-rag", json=body, headers={"Accept": "text/event-stream"}) as r:
            seen = False
            for line in r.iter_lines():
                if line.startswith("data: ") and not seen:
                    out["first"].append(time.perf_counter() - t0)
                    seen = True
    return out


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def under_load(url: str, headers: dict[str, str], folder: Path, clients: int, per_client: int) -> None:
    """``clients`` threads ask graph-rag ``per_client`` times each while a load job of ``folder`` runs."""
    files = [("files", (p.name, p.read_bytes())) for p in sorted(folder.iterdir())]
    with httpx.Client(base_url=url + "/api/v1", timeout=300, headers=headers) as http:
        job = http.post("/collections/loading/documents", files=files).json()
        samples: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()

        def ask(k: int) -> None:
            with httpx.Client(base_url=url + "/api/v1", timeout=300, headers=headers) as mine:
                for i in range(per_client):
                    t0 = time.perf_counter()
                    try:
                        r = mine.post("/graph-rag", json={"collection": "bench",
                                                          "question": QUESTIONS[(k + i) % len(QUESTIONS)]})
                        ok = r.status_code == 200 and r.json()["final"]["message_type"] == "final"
                    except httpx.HTTPError as exc:
                        ok, r = False, exc  # type: ignore[assignment]
                    with lock:
                        samples.append(time.perf_counter() - t0)
                        if not ok:
                            errors.append(str(getattr(r, "text", r))[:200])

        running = http.get(f"/jobs/{job['id']}").json()["status"]
        elapsed = run_clients(ask, clients)
        state = http.get(f"/jobs/{job['id']}").json()
        while state["status"] not in ("done", "failed"):
            time.sleep(0.2)
            state = http.get(f"/jobs/{job['id']}").json()
    report("serve.graph_rag_under_load", target="0 errors; p50/p95 reported", clients=clients,
           requests=len(samples), errors=len(errors), seconds=round(elapsed, 2),
           load_files=len(files), load_status_at_start=running, load_status=state["status"],
           load_chunks=state["chunks"], load_average=load_now(), **percentiles(samples))
    for e in errors[:3]:
        print("  error:", e)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--per-client", type=int, default=10)
    parser.add_argument("--copies", type=int, default=6, help="copies of the corpus the background load reads")
    parser.add_argument("--no-load", action="store_true", help="skip the 8-clients-during-a-load part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        prepare(home)
        twin = Path(tmp) / "twin"
        shutil.copytree(home, twin)  # the in-process side: the server owns `home`
        folder = Path(tmp) / "to-load"
        folder.mkdir()
        for k in range(args.copies):
            for p in CORPUS.iterdir():
                if p.suffix in (".txt", ".md", ".html", ".pdf") and p.name != "README.md":
                    shutil.copy(p, folder / f"{p.stem}-{k}{p.suffix}")
        from provgraph.api.tokens import TokenStore

        _, token = TokenStore(home).create("default")
        headers = {"Authorization": f"Bearer {token}"}
        port = _port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen([sys.executable, "-c", "from provgraph.cli.app import main; main()", "--home",
                                   str(home), "serve", "--port", str(port)], stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            print(f"# load average {load_now()}; {os.cpu_count()} CPUs", flush=True)
            with httpx.Client(base_url=url + "/api/v1", timeout=300, headers=headers) as http, \
                    Provgraph(collection="bench", home=twin, llm="none") as pg:
                got = compare(pg, http, args.requests, server.pid)
            n = args.requests
            report("serve.graph_rag_in_process", cpu_ms_per_request=_ms(sum(got["local_cpu"]) / n),
                   **percentiles(got["local"]))
            report("serve.graph_rag_over_http", server_cpu_ms_per_request=_ms(sum(got["server_cpu"]) / n),
                   client_cpu_ms_per_request=_ms(sum(got["client_cpu"]) / n), **percentiles(got["remote"]))
            beside = percentiles(got["beside_query"])
            report("serve.overhead_per_request", target="<= 5 ms over in-process",
                   p50_ms=beside["p50_ms"], p95_ms=beside["p95_ms"],
                   p10_ms=_ms(sorted(got["beside_query"])[n // 10]), min_ms=_ms(min(got["beside_query"])),
                   paired_p50_ms=_ms(sorted(got["paired"])[n // 2]),
                   p50_of_each_ms=round(percentiles(got["remote"])["p50_ms"] - percentiles(got["local"])["p50_ms"], 3),
                   server_cpu_ms=_ms((sum(got["server_cpu"]) - sum(got["local_cpu"])) / n),
                   load_average=load_now())
            report("serve.time_to_first_sse_event", target="<= 50 ms after the request", load_average=load_now(),
                   **percentiles(got["first"]))
            if not args.no_load:
                under_load(url, headers, folder, args.clients, args.per_client)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
