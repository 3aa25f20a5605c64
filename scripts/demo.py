"""`make demo`: the whole product on embedded defaults, offline, on the sample corpus.

Loads examples/corpus into a fresh collection `demo`, asks three GraphRAG questions and one
Document RAG question with their explain steps shown, lists the traces, shows the first one with
its provenance, and prints one document's provenance tree. Re-running starts from a fresh
collection again. Uses whatever LLM is configured (PROVGRAPH_LLM_*); with none, the no-LLM mode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [str(Path(sys.executable).parent / "provgraph")]
COLLECTION = os.environ.get("PROVGRAPH_DEMO_COLLECTION", "demo")
QUESTIONS = [
    "Who discovered radioactivity?",
    "Who won the Nobel Prize in Chemistry in 1911?",
    "What did Rutherford name the two kinds of radiation he found?",
]
DOC_QUESTION = "Who founded the Radium Institute and what was it for?"


def step(title: str, *args: str, capture: bool = False) -> str:
    """Run one provgraph command, showing it like a person would type it (``capture``: quietly)."""
    if not capture:
        shown = " ".join(f"'{a}'" if " " in a else a for a in args)
        print(f"\n\033[1m== {title}\033[0m\n$ provgraph {shown}", flush=True)
    result = subprocess.run([*CLI, *args], cwd=ROOT, text=True, capture_output=capture)
    if result.returncode != 0:
        if capture:
            sys.stderr.write(result.stderr)
        sys.exit(f"demo step failed ({result.returncode}): provgraph {' '.join(args)}")
    return result.stdout if capture else ""


def main() -> None:
    t0 = time.perf_counter()
    subprocess.run([*CLI, "collections", "drop", COLLECTION, "--yes"], cwd=ROOT, capture_output=True)
    step("Load the sample corpus (decode → chunk → extract → embed)", "load", "examples/corpus", "-C", COLLECTION)
    for q in QUESTIONS:
        step("GraphRAG, explainable: each step on stderr as it happens", "graph-rag", "-q", q, "-x", "-C", COLLECTION)
    step("Document RAG, explainable", "document-rag", "-q", DOC_QUESTION, "-x", "-C", COLLECTION)
    step("The traces written to urn:graph:retrieval", "traces", "list", "-C", COLLECTION)
    traces = json.loads(step("", "traces", "list", "-C", COLLECTION, "--format", "json", capture=True))
    first = traces[-1]["session_id"]  # newest first: the last row is the demo's first question
    step("The first trace, each selected edge traced to its sources", "traces", "show", first,
         "--show-provenance", "-C", COLLECTION)
    step("Where the facts of one document came from", "provenance", "rutherford_radiation.pdf", "-C", COLLECTION)
    print(f"\nDemo finished in {time.perf_counter() - t0:.1f} s. Put provgraph on PATH with `source .venv/bin/activate`"
          f" (or type .venv/bin/provgraph), then try: provgraph graph-rag -q 'What did Marie Curie discover?' -x -C "
          f"{COLLECTION}")


if __name__ == "__main__":
    main()
