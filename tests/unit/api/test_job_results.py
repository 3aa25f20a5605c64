"""Finished load jobs keep their typed results (chunk texts included) only for the most recent ones."""

from __future__ import annotations

from pathlib import Path

from provgraph.api.routes_jobs import KEEP_TYPED, Job, Jobs
from provgraph.api.state import ServerState
from provgraph.config import load_settings
from provgraph.ingest.pipeline import LoadResult
from provgraph.rdf.terms import Iri


def test_only_the_most_recent_jobs_keep_typed_results(tmp_path: Path) -> None:
    jobs = Jobs(ServerState(load_settings(home=str(tmp_path / "home"), llm="none")))
    made = [Job(str(i), "u", "c", [], tmp_path) for i in range(KEEP_TYPED + 2)]
    for i, job in enumerate(made):
        jobs.keep_typed(job, [LoadResult(Iri(f"urn:doc:{i}"), "t", "loaded", 1, 0, ())])
    assert [j.loaded for j in made[:2]] == [None, None]
    assert all(j.loaded is not None and j.loaded[0].document == Iri(f"urn:doc:{j.id}") for j in made[2:])
