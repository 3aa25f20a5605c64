"""Load jobs on PostgreSQL: one row per extraction job, so ``load`` can wait on workers in other processes.

``provgraph_jobs`` (in the database's public schema) holds each job's collection, document and state:
``queued`` → ``running`` → ``done`` or ``failed`` (with the error), and the attempts made. A job enqueued
again (same id) goes back to ``queued`` unless it is done. Every operation is idempotent, so each is repeated
while PostgreSQL is unreachable (a restart), for up to a minute: ``load`` waiting and the workers ride it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from provgraph.store.pg_connection import PgLink, pg_errors, retrying

__all__ = ["JobTable", "QUEUED", "RUNNING", "DONE", "FAILED"]

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
_DDL = """CREATE TABLE IF NOT EXISTS provgraph_jobs (id text PRIMARY KEY, usr text NOT NULL, collection text NOT NULL,
  document text NOT NULL, state text NOT NULL, error text, attempts int NOT NULL DEFAULT 0,
  updated timestamptz NOT NULL DEFAULT now())"""


class JobTable:
    """The jobs table of the database at ``url``."""

    def __init__(self, url: str) -> None:
        self._link = PgLink(url, "jobs")
        retrying("jobs", "open", self._create)

    def _create(self) -> None:
        conn = self._link.conn
        with pg_errors("jobs", "open"), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('provgraph_jobs'))")
            conn.execute(_DDL)

    def enqueue(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """(id, user, collection, document) as queued (a done job stays done)."""
        def write() -> None:
            with pg_errors("jobs", "enqueue"), self._link.conn.cursor() as cur:
                cur.executemany("INSERT INTO provgraph_jobs (id, usr, collection, document, state) VALUES (%s, %s, %s, %s, "
                                "'queued') ON CONFLICT (id) DO UPDATE SET state = 'queued', error = NULL, updated = "
                                "now() WHERE provgraph_jobs.state <> 'done'", sorted(rows))
        retrying("jobs", "enqueue", write)

    def mark(self, job: str, state: str, error: str | None = None) -> None:
        """Move ``job`` to ``state`` (``running`` counts an attempt)."""
        def write() -> None:
            with pg_errors("jobs", "update"):
                self._link.conn.execute("UPDATE provgraph_jobs SET state = %s, error = %s, updated = now(), attempts = "
                                        "attempts + (CASE WHEN %s = 'running' THEN 1 ELSE 0 END) WHERE id = %s",
                                        (state, error, state, job))
        retrying("jobs", "update", write)

    def states(self, ids: Sequence[str]) -> dict[str, tuple[str, str | None, int]]:
        """(state, error, attempts) of each job asked about that exists."""
        def read() -> list[tuple[str, str, str | None, int]]:
            with pg_errors("jobs", "read"):
                return list(self._link.conn.execute("SELECT id, state, error, attempts FROM provgraph_jobs WHERE "
                                                    "id = ANY(%s)", (list(ids),)).fetchall())
        rows = retrying("jobs", "read", read)
        return {i: (s, e, a) for i, s, e, a in rows}

    def close(self) -> None:
        self._link.close()
