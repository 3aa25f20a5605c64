"""Agent test helpers: a fresh runtime, the scripted step LLM, and stream collection."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from provgraph.agent.mcp import McpServerConfig
from provgraph.config import load_settings
from provgraph.events import Event, Explain
from provgraph.rdf.terms import XSD_DATETIME, Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL
from provgraph.runtime import Runtime
from provgraph.store.oxigraph import OxigraphStore
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema
from tests.unit.provenance.helpers import nq

T = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T_LIT = '"2026-01-02T03:04:05Z"^^dt'
R = "@urn:graph:retrieval"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def rt(tmp_path: Path) -> Iterator[Runtime]:
    """An empty collection (no LLM of its own: agents get scripted ones)."""
    with Runtime(load_settings(home=str(tmp_path / "home"), collection="agent", llm="none"), llm=None) as runtime:
        yield runtime


@pytest.fixture
def mcp_config(tmp_path: Path) -> McpServerConfig:
    """The test MCP server over stdio."""
    return McpServerConfig(name="facts", command=(sys.executable, "-m", "tests.fakes.mcp_server"), cwd=str(REPO))


def step(thought: str, action: str | None = None, arguments: dict[str, Any] | None = None,
         final_answer: str | None = None) -> str:
    """One scripted agent step as the LLM would write it."""
    return json.dumps({"thought": thought, "action": action, "arguments": arguments, "final_answer": final_answer})


def steps_llm(*answers: str) -> ScriptedChatModel:
    """An LLM answering the agent's steps in order (then empty, which is unparsable)."""
    return ScriptedChatModel(by_schema({"agent_step": list(answers)}))


def collect(stream: AsyncIterator[Event]) -> list[Event]:
    async def run() -> list[Event]:
        return [ev async for ev in stream]

    return asyncio.run(run())


def kinds(events: list[Event]) -> list[str]:
    """Event names, explain events as ``step:<iri tail>``."""
    return [f"{e.step}:{e.explain_id.rsplit(':', 1)[-1]}" if isinstance(e, Explain) else type(e).__name__
            for e in events]


def canon(quads: Iterable[Quad]) -> set[tuple[object, ...]]:
    """Quads compared by value: a timestamp's lexical form may differ once stored (``.000Z`` vs ``Z``)."""
    return {(q.s, q.p, q.o.to_python() if isinstance(q.o, Literal) and q.o.datatype == XSD_DATETIME else q.o, q.g)
            for q in quads}


def stored(store: OxigraphStore, iri: Iri) -> set[str]:
    return nq(store.match(iri, None, None, g=GRAPH_RETRIEVAL))
