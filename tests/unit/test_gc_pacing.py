"""Extraction and questions collect garbage less often while they run, community builds not at all; each gives
the collector's state back after (provgraph.gc_pacing)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.gc_pacing import YOUNG_THRESHOLD, collector_paused, rarer_collections


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*saved)


def test_the_young_threshold_is_raised_inside_and_restored_after(thresholds: tuple[int, int, int]) -> None:
    with rarer_collections():
        assert gc.get_threshold() == (10_000, 10, 10)
    assert gc.get_threshold() == thresholds


def test_overlapping_runs_restore_only_when_the_last_one_ends(thresholds: tuple[int, int, int]) -> None:
    outer = rarer_collections()
    outer.__enter__()
    with rarer_collections():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # the outer run still goes on
    outer.__exit__(None, None, None)
    assert gc.get_threshold() == thresholds


def test_a_failing_run_restores_too(thresholds: tuple[int, int, int]) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with rarer_collections():
            raise RuntimeError("boom")
    assert gc.get_threshold() == thresholds


def test_a_higher_threshold_set_by_the_user_is_kept() -> None:
    saved = gc.get_threshold()
    gc.set_threshold(50_000, 20, 30)
    try:
        with rarer_collections():
            assert gc.get_threshold() == (50_000, 20, 30)
        assert gc.get_threshold() == (50_000, 20, 30)
    finally:
        gc.set_threshold(*saved)


def test_the_extraction_pipeline_runs_with_rarer_collections(thresholds: tuple[int, int, int]) -> None:
    from provgraph.extract.base import ChunkInput
    from provgraph.extract.cooccurrence import CooccurrenceExtractor
    from provgraph.extract.pipeline import ExtractionPipeline
    from provgraph.rdf.terms import Iri
    from provgraph.store.oxigraph import OxigraphStore

    seen: list[int] = []

    class Watching(CooccurrenceExtractor):
        async def extract(self, chunk: ChunkInput) -> Any:
            seen.append(gc.get_threshold()[0])
            return await super().extract(chunk)

    store = OxigraphStore()
    pipe = ExtractionPipeline(store, [Watching(entity_base="urn:e:")])
    chunk = ChunkInput(Iri("urn:chunk:a0"), "Marie Curie discovered polonium.", Iri("urn:doc:a"))
    outcomes = asyncio.run(pipe.run([chunk]))
    assert seen == [YOUNG_THRESHOLD] and not outcomes[0].failed
    assert gc.get_threshold() == thresholds


@pytest.fixture
def enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_overlapping_pauses_enable_the_collector_only_when_the_last_one_ends(enabled: None) -> None:
    outer = collector_paused()
    outer.__enter__()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the outer build still goes on
    outer.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_pause_keeps_a_collector_the_user_disabled_disabled(enabled: None) -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_pause_and_rarer_collections_overlap_without_undoing_each_other(
        thresholds: tuple[int, int, int], enabled: None) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with collector_paused():
            with rarer_collections():  # a question answered while a build runs
                assert (gc.isenabled(), gc.get_threshold()[0]) == (False, YOUNG_THRESHOLD)
            assert (gc.isenabled(), gc.get_threshold()) == (False, thresholds)
            raise RuntimeError("boom")
    assert (gc.isenabled(), gc.get_threshold()) == (True, thresholds)


def test_a_community_build_runs_with_the_collector_paused(enabled: None, tmp_path: Path) -> None:
    from provgraph.communities.build import build
    from provgraph.librarian.sqlite import SqliteLibrarian
    from provgraph.store.oxigraph import OxigraphStore

    seen: list[bool] = []
    store = OxigraphStore()
    original = store.fact_support

    def watched() -> Any:
        seen.append(gc.isenabled())
        return original()

    store.fact_support = watched  # type: ignore[method-assign]
    asyncio.run(build(store, SqliteLibrarian(tmp_path / "lib")))
    assert seen == [False] and gc.isenabled()
