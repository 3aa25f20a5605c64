"""Agent and Document RAG benchmark: provgraph's own cost around zero-latency LLM calls.

    .venv/bin/python bench/agent.py [--chunks 100000] [--queries 200] [--runs 40] [--iterations 10] [--seed 3]

Builds a collection with ``--chunks`` chunks (random unit vectors in the chunk index, chunk
texts in the librarian, document + chunk provenance in the store), then times:

- ``docrag_query``: one Document RAG question end to end (embed, search, texts, trace steps,
  streamed answer, answer record, sources) with a zero-latency LLM; also without an LLM.
- ``agent_iteration``: the agent's cost per think → act → observe round (JSON step parsing,
  tool dispatch, trace writes, events) with a zero-latency LLM and an instant ``echo`` tool;
  and with the ``document-query`` tool, whose Document RAG sub-trace runs on the big collection.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report  # noqa: E402

from provgraph.agent import Agent, ToolContext, ToolOutput, ToolSpec, document_query  # noqa: E402
from provgraph.config import load_settings  # noqa: E402
from provgraph.events import Explain, Final  # noqa: E402
from provgraph.librarian.base import NewRecord  # noqa: E402
from provgraph.models.base import Completion, JsonCompletion, Message, StreamResult, Usage  # noqa: E402
from provgraph.models.jsonrepair import parse_validated  # noqa: E402
from provgraph.provenance import chunk_quads, document_quads  # noqa: E402
from provgraph.rdf import ids  # noqa: E402
from provgraph.retrieval.document_rag import DocumentRag  # noqa: E402
from provgraph.runtime import Runtime  # noqa: E402

WORDS = ("radium polonium uranium thorium curie becquerel rutherford institute radiation decay element "
         "laboratory physics chemistry prize nobel paris war ambulance isotope discovery research").split()


class ZeroLatencyLlm:
    """A chat model that answers at once: agent steps from a list (parsed like a real provider's),
    a fixed streamed answer citing passages [1] and [2], and ``complete`` echoing the prompt."""

    name = "bench:zero-latency"

    def __init__(self, steps: Sequence[str] = (), answer: str = "It was radium [1], then polonium [2].") -> None:
        self.steps = list(steps)
        self.answer = answer
        self.cursor = 0

    def _usage(self) -> Usage:
        return Usage(0, 0, self.name)

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0,
                       max_tokens: int | None = None) -> Completion:
        return Completion(messages[-1].content, self._usage())

    async def complete_json(self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str,
                            temperature: float = 0.0, max_tokens: int | None = None) -> JsonCompletion:
        text = self.steps[self.cursor % len(self.steps)]
        self.cursor += 1
        return JsonCompletion(parse_validated(text, schema, what=schema_name), text, self._usage())

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.0,
               max_tokens: int | None = None) -> StreamResult:
        async def pieces() -> AsyncIterator[str | Usage]:
            for i, word in enumerate(self.answer.split(" ")):
                yield word if i == 0 else " " + word
            yield self._usage()

        return StreamResult(pieces(), self.name)

    async def aclose(self) -> None:
        return None


class EchoTool:
    """An instant tool: returns its text."""

    spec = ToolSpec("echo", "Returns its text.", {"type": "object", "properties": {"text": {"type": "string"}},
                                                 "required": ["text"]})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        yield ToolOutput(text=arguments["text"])


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."


def build(rt: Runtime, n_chunks: int, rng: random.Random, per_doc: int = 100) -> float:
    """Fill the collection; returns seconds spent."""
    t0 = time.perf_counter()
    np_rng = np.random.default_rng(rng.randrange(2**32))
    dim = rt.embedder.dimension
    for start in range(0, n_chunks, 10_000):
        count = min(10_000, n_chunks - start)
        records: list[NewRecord] = []
        quads = []
        ids_, payloads = [], []
        for d in range(start // per_doc, (start + count + per_doc - 1) // per_doc):
            doc = ids.document_iri(f"bench-{d}")
            texts = [" ".join(_sentence(rng) for _ in range(3)) for _ in range(per_doc)]
            body = "\n\n".join(texts)
            records.append(NewRecord(id=doc.value, kind="document", content=body, title=f"Document {d}"))
            quads += document_quads(doc, title=f"Document {d}", mime_type="text/plain")
            offset = 0
            activity = ids.activity_iri("bench", doc.value)
            for i, text in enumerate(texts, start=1):
                chunk = ids.chunk_iri(doc, i, offset, len(text))
                records.append(NewRecord(id=chunk.value, kind="chunk", content=text, parent_id=doc.value, number=i,
                                         offset=offset, length=len(text)))
                quads += chunk_quads(chunk, parent=doc, index=i, offset=offset, length=len(text), activity=activity)
                ids_.append(chunk.value)
                payloads.append({"chunk": chunk.value, "document": doc.value})
                offset += len(text) + 2
        rt.librarian.add(records)
        rt.store.add(quads)
        vectors = np_rng.standard_normal((len(ids_), dim), dtype=np.float32)
        rt.chunk_index.upsert(ids_, vectors, payloads)
    rt.chunk_index.flush()
    return time.perf_counter() - t0


def _question(rng: random.Random) -> str:
    return f"What did {rng.choice(WORDS)} have to do with {rng.choice(WORDS)} and {rng.choice(WORDS)}?"


async def bench_docrag(rt: Runtime, questions: list[str], llm: ZeroLatencyLlm | None) -> list[float]:
    rag = DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, llm, doc_limit=5)
    samples = []
    for i, q in enumerate(questions):
        t0 = time.perf_counter()
        events = [ev async for ev in rag.ask(q)]
        elapsed = time.perf_counter() - t0
        assert isinstance(events[-1], Final), events[-1]
        if i >= 10:  # warm-up
            samples.append(elapsed)
    return samples


def _steps(tool: str, arguments: dict[str, str], iterations: int) -> list[str]:
    act = json.dumps({"thought": "I need more facts before answering.", "action": tool, "arguments": arguments,
                      "final_answer": None})
    done = json.dumps({"thought": "I can answer now.", "action": None, "arguments": None,
                       "final_answer": "Radium and polonium."})
    return [act] * (iterations - 1) + [done]


async def bench_agent(rt: Runtime, tools: list[Any], steps: list[str], runs: int) -> list[float]:
    """Seconds per iteration of each run (run time / iterations)."""
    samples = []
    for i in range(runs + 3):
        llm = ZeroLatencyLlm(steps)
        agent = Agent(rt.store, rt.librarian, llm, tools, max_iterations=len(steps))
        t0 = time.perf_counter()
        events = [ev async for ev in agent.ask("What links radium and polonium?")]
        elapsed = time.perf_counter() - t0
        assert isinstance(events[-1], Final) and events[-1].answer == "Radium and polonium.", events[-1]
        if i >= 3:
            samples.append(elapsed / len(steps))
    return samples


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="provgraph-bench-agent-") as home:
        settings = load_settings(home=home, collection="bench", llm="none")
        with Runtime(settings, llm=None) as rt:
            built = build(rt, args.chunks, rng)
            report("agent_bench_setup", chunks=rt.chunk_index.count(), quads=rt.store.count(),
                   build_s=round(built, 1), embedder=rt.embedder.name)
            questions = [_question(rng) for _ in range(args.queries + 10)]
            llm = ZeroLatencyLlm()
            samples = asyncio.run(bench_docrag(rt, questions, llm))
            report("docrag_query", target="p95 < 50 ms at 100,000 chunks", chunks=args.chunks, llm=llm.name,
                   queries=len(samples), **percentiles(samples))
            samples = asyncio.run(bench_docrag(rt, questions, None))
            report("docrag_query", chunks=args.chunks, llm="none (extractive)", queries=len(samples),
                   **percentiles(samples))
            steps = _steps("echo", {"text": "radium is radioactive"}, args.iterations)
            samples = asyncio.run(bench_agent(rt, [EchoTool()], steps, args.runs))
            report("agent_iteration", target="< 20 ms non-LLM overhead per iteration", tool="echo",
                   iterations_per_run=args.iterations, runs=len(samples), **percentiles(samples))
            doc_tool = document_query(DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index,
                                                  ZeroLatencyLlm(), doc_limit=5))
            steps = _steps("document-query", {"question": "What did radium have to do with paris?"},
                           args.iterations)
            samples = asyncio.run(bench_agent(rt, [doc_tool], steps, args.runs))
            report("agent_iteration", tool="document-query (Document RAG sub-trace)", chunks=args.chunks,
                   iterations_per_run=args.iterations, runs=len(samples), **percentiles(samples))


if __name__ == "__main__":
    main()
