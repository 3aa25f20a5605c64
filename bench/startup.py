"""Start-up of the ``provgraph`` command: ``--help`` and a ``sparql ASK`` on an existing collection.

Each is run N times as a fresh process; the median wall time and the median CPU time (user + system,
which survives a loaded machine better) are printed next to the target, with the load average.
Usage: ``python bench/startup.py [--runs 10]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import report  # noqa: E402

PROVGRAPH = str(Path(sys.executable).with_name("provgraph"))


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One process: (wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([PROVGRAPH, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _measure(name: str, argv: list[str], env: dict[str, str], runs: int, target: str) -> None:
    _run(argv, env)  # warm the page cache and the .pyc files
    samples = [_run(argv, env) for _ in range(runs)]
    report(name, target, runs=runs, wall_median_s=round(statistics.median(w for w, _ in samples), 3),
           cpu_median_s=round(statistics.median(c for _, c in samples), 3),
           load_average=[round(x, 2) for x in os.getloadavg()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PROVGRAPH_HOME": home}
        env.pop("PROVGRAPH_URL", None)
        subprocess.run([PROVGRAPH, "collections", "create", "default"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        _measure("provgraph --help", ["--help"], env, args.runs, "≤ 0.3 s")
        _measure("provgraph sparql ASK", ["sparql", "ASK { ?s ?p ?o }"], env, args.runs, "≤ 0.6 s")


if __name__ == "__main__":
    main()
