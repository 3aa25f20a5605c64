"""A question is answered with rarer garbage collections (provgraph.gc_pacing), given back when its stream ends."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Iterator

import pytest

from provgraph.config import Settings
from provgraph.events import Event, Final
from provgraph.gc_pacing import YOUNG_THRESHOLD
from provgraph.retrieval.document_rag import DocumentRag
from provgraph.retrieval.graph_rag import GraphRag
from provgraph.runtime import Runtime
from tests.unit.retrieval.graph_world import World, world  # noqa: F401

DEFAULT = (700, 10, 10)


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(*DEFAULT)
    yield
    gc.set_threshold(*saved)


def young_at_each_event(stream: AsyncIterator[Event], *, stop_after: int | None = None) -> list[tuple[str, int]]:
    async def run() -> list[tuple[str, int]]:
        seen = []
        async for event in stream:
            seen.append((type(event).__name__, gc.get_threshold()[0]))
            if stop_after is not None and len(seen) == stop_after:
                await stream.aclose()  # type: ignore[attr-defined]
                break
        return seen

    return asyncio.run(run())


def test_a_graph_rag_question_runs_with_rarer_collections_and_gives_them_back(world: World) -> None:  # noqa: F811
    rag = GraphRag(world.store, world.librarian, world.embedder, world.index, None)
    seen = young_at_each_event(rag.ask("Who discovered polonium?"))
    assert seen[-1][0] == Final.__name__ and {young for _, young in seen} == {YOUNG_THRESHOLD}
    assert gc.get_threshold() == DEFAULT


def test_a_stream_closed_early_gives_them_back(world: World) -> None:  # noqa: F811
    rag = GraphRag(world.store, world.librarian, world.embedder, world.index, None)
    assert young_at_each_event(rag.ask("Who discovered polonium?"), stop_after=1) == [("Explain", YOUNG_THRESHOLD)]
    assert gc.get_threshold() == DEFAULT


def test_a_document_rag_question_runs_with_rarer_collections_and_gives_them_back(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        rag = DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, None)
        seen = young_at_each_event(rag.ask("Who discovered polonium?"))
    assert seen[-1][0] == Final.__name__ and {young for _, young in seen} == {YOUNG_THRESHOLD}
    assert gc.get_threshold() == DEFAULT
