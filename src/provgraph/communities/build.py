"""``communities build``: find the communities, then write the reports that are missing or stale.

A build that finds the subgraphs, the parameters and every report as the last complete build left
them does nothing (communities/state.py); otherwise it reads every fact again and writes only the
communities and reports that changed.

Example::

    result = await build(rt.store, rt.librarian, llm=None)
    print(result.detection.added, result.reports.written)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from provgraph.communities.cluster import LeidenParams
from provgraph.communities.detect import Detection, detect
from provgraph.communities.reports import ReportRun, build_reports
from provgraph.communities.state import state_update
from provgraph.gc_pacing import collector_paused
from provgraph.librarian.base import Librarian
from provgraph.models.base import ChatModel
from provgraph.store.base import QuadStore

__all__ = ["BuildResult", "build"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class BuildResult:
    """The detection and the report run of one build."""

    detection: Detection
    reports: ReportRun


async def build(store: QuadStore, librarian: Librarian, *, llm: ChatModel | None = None,
                params: LeidenParams | None = None, max_llm: int = 50, deadline: float = 300.0,
                progress: Progress | None = None) -> BuildResult:
    """Detect communities (storing what changed), drop the reports of those gone, write the missing reports."""
    if llm is not None:  # minutes of model calls: the process's collector runs (the detection pauses it)
        return await _build(store, librarian, llm, params, max_llm, deadline, progress)
    with collector_paused():  # extractive reports are CPU work over the detection's facts: no pause by a collection
        return await _build(store, librarian, llm, params, max_llm, deadline, progress)


async def _build(store: QuadStore, librarian: Librarian, llm: ChatModel | None, params: LeidenParams | None,
                 max_llm: int, deadline: float, progress: Progress | None) -> BuildResult:
    detection = detect(store, params, progress=progress)
    for report in detection.reports_removed:
        if librarian.exists(f"{report.value}/text"):
            librarian.remove(f"{report.value}/text")
    tell = (lambda done, total: progress("reports", done, total)) if progress is not None else None
    if detection.unchanged:
        return BuildResult(detection, ReportRun())
    reports = await build_reports(store, librarian, detection.found, detection.support, llm=llm, max_llm=max_llm,
                                  deadline=deadline, progress=tell)
    remove, add = state_update(store, detection.fingerprint, params or LeidenParams(), detection.entities,
                               detection.facts)
    store.apply(remove=remove, add=add)  # every community reported: the next build on this graph stops early
    return BuildResult(detection, reports)
