"""Start-up of the ``provgraph`` command: ``--help`` and a ``sparql ASK`` on an existing collection.

Each runs N times as a fresh process (after one warm-up run); the median wall time and the median CPU
time (user + system, which survives a loaded machine better) are printed next to the target, with the
load average. Usage: ``python bench/startup.py [--runs 10]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import report  # noqa: E402
from scale import cli_seconds  # noqa: E402

COMMANDS = {"provgraph --help": (["--help"], "<= 0.3 s"),
            "provgraph sparql ASK": (["sparql", "ASK { ?s ?p ?o }"], "<= 0.6 s")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
        env["PROVGRAPH_HOME"] = home
        exe = Path(sys.executable).with_name("provgraph")
        subprocess.run([str(exe), "collections", "create", "default"], env=env, check=True, stdout=subprocess.DEVNULL)
        for name, (argv, target) in COMMANDS.items():
            report(name, target, runs=args.runs, **cli_seconds(argv, env, runs=args.runs),
                   load_average=[round(x, 2) for x in os.getloadavg()])


if __name__ == "__main__":
    main()
