"""The server's load jobs on disk, so a restart does not lose them, and bounded.

Each job is one JSON file, ``{home}/jobs/{id}.json``, written whole (a temporary file renamed over
it) when the job is queued and when it ends. A job that was queued or running when its server
stopped without ending it (killed, or the machine went down) is read back as ``failed``: its
documents that were stored keep their status as ``interrupted`` (``POST /jobs/{id}/retry`` extracts
their chunks that have no extraction yet), and those never stored are ``failed`` (upload them
again); the job's leftover upload folder is removed. Of each user's finished jobs only the
``keep`` most recent are kept, in memory and on disk; running jobs are never dropped.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["JobTable", "KEEP_FINISHED", "INTERRUPTED", "interrupted"]

KEEP_FINISHED = 200  # finished jobs kept per user
INTERRUPTED = "interrupted: the server stopped before this job ended"
FINISHED = ("done", "failed")


def interrupted(record: dict[str, Any]) -> dict[str, Any]:
    """A record of a job that was queued or running when its server stopped, as it now ends."""
    if record.get("status") in FINISHED:
        return record
    documents = []
    for doc in record.get("documents", []):
        if doc.get("status", "queued") not in ("queued", "loading", "extracting"):
            documents.append(doc)
        elif doc.get("document"):  # stored: its chunks may lack extractions, which a retry makes
            documents.append({**doc, "status": "interrupted", "error": INTERRUPTED})
        else:
            documents.append({**doc, "status": "failed", "error": f"{INTERRUPTED}: not loaded, upload it again"})
    return {**record, "status": "failed", "documents": documents,
            "errors": [*record.get("errors", []), f"{INTERRUPTED} ({record.get('files_done', 0)} of "
                                                  f"{len(record.get('files', []))} file(s) loaded)"]}


class JobTable:
    """Job records under ``folder``: saved, read back at start-up, pruned past ``keep`` finished per user."""

    def __init__(self, folder: Path, keep: int = KEEP_FINISHED) -> None:
        self.folder, self.keep = folder, keep
        self._lock = threading.Lock()

    def _path(self, job_id: str) -> Path:
        return self.folder / f"{job_id}.json"

    def save(self, record: dict[str, Any]) -> None:
        """Write one job's record whole (a reader, or a crash, sees the old record or the new one)."""
        with self._lock:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            final = self._path(record["id"])
            temporary = final.with_suffix(".tmp")
            temporary.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, final)

    def drop(self, job_ids: Iterable[str]) -> None:
        with self._lock:
            for job_id in job_ids:
                self._path(job_id).unlink(missing_ok=True)

    def load(self) -> list[dict[str, Any]]:
        """Every record, oldest first; those a stopped server left unfinished are saved as interrupted."""
        if not self.folder.is_dir():
            return []
        records = []
        for path in self.folder.glob("*.json"):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # a record this server cannot read is not a job it can show
                path.unlink(missing_ok=True)
                continue
            if not isinstance(record, dict) or not isinstance(record.get("id"), str) or path.stem != record["id"]:
                path.unlink(missing_ok=True)
                continue
            if record.get("status") not in FINISHED:
                record = interrupted(record)
                self.save(record)
            records.append(record)
        for leftover in self.folder.glob("*.tmp"):
            leftover.unlink(missing_ok=True)
        records.sort(key=lambda r: (r.get("created", 0), r["id"]))
        return records

    def over(self, records: Iterable[tuple[str, str, str]]) -> list[str]:
        """Of ``(id, user, status)`` oldest first, the finished jobs past ``keep`` for their user."""
        finished: dict[str, list[str]] = {}
        for job_id, user, status in records:
            if status in FINISHED:
                finished.setdefault(user, []).append(job_id)
        return [job_id for ids in finished.values() for job_id in ids[:max(0, len(ids) - self.keep)]]
