"""The current community reports, ready to search: read once per state of the communities graph.

Reports (with their community's level and size) and the embeddings of each report and each finding
are kept until the store's ``source_generation`` moves (any write but a trace's), so questions in
a row read and embed nothing again.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from provgraph.communities.stored import CommunityHead, StoredReport, community_heads, report_of
from provgraph.models.base import Embedder
from provgraph.store.base import QuadStore

__all__ = ["IndexedReport", "ReportIndex"]


@dataclass(frozen=True, slots=True)
class IndexedReport:
    """A current report with its community's head, its vector and its findings' vectors (unit length)."""

    report: StoredReport
    head: CommunityHead
    vector: np.ndarray
    findings: np.ndarray  # one row per finding, in rank order


_SHARED_LOCK = threading.Lock()


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


class ReportIndex:
    """The reports of one store (thread-safe; rebuilt when the store's communities may have changed)."""

    _shared: ClassVar[weakref.WeakKeyDictionary[object, ReportIndex]] = weakref.WeakKeyDictionary()

    @classmethod
    def shared(cls, store: QuadStore, embedder: Embedder) -> ReportIndex:
        """The one index of ``store`` in this process (every engine on the store reads the same reports)."""
        with _SHARED_LOCK:
            found = cls._shared.get(store)
            if found is None or found.embedder is not embedder:
                found = cls._shared[store] = cls(store, embedder)
            return found

    def __init__(self, store: QuadStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.Lock()
        self._at: int | None = None
        self._reports: list[IndexedReport] = []
        self._stale = 0

    def current(self) -> tuple[list[IndexedReport], int]:
        """The reports that are not stale, and how many stale ones were left out."""
        with self._lock:
            generation = self.store.source_generation
            if self._at != generation:
                self._reports, self._stale = self._read()
                self._at = generation
            return self._reports, self._stale

    def _read(self) -> tuple[list[IndexedReport], int]:
        found: list[tuple[StoredReport, CommunityHead]] = []
        stale = 0
        for head in community_heads(self.store):
            if head.report is None:
                continue
            report = report_of(self.store, head.report)
            if report is None:
                continue
            if report.stale:
                stale += 1
                continue
            found.append((report, head))
        if not found:
            return [], stale
        texts = [" ".join([r.title, r.summary, *(f.content for f in r.findings)]) for r, _ in found]
        finding_texts = [f.content for r, _ in found for f in r.findings]
        vectors = _unit(np.asarray(self.embedder.embed(texts + finding_texts), dtype=np.float32))
        out = []
        at = len(texts)
        for i, (report, head) in enumerate(found):
            n = len(report.findings)
            out.append(IndexedReport(report, head, vectors[i], vectors[at:at + n]))
            at += n
        return out, stale
