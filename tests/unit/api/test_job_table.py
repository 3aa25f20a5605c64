"""The job table: read back at start-up (unfinished jobs as interrupted), each user's finished jobs bounded."""

from __future__ import annotations

from pathlib import Path

from provgraph.api.job_table import JobTable
from provgraph.api.routes_jobs import Jobs
from provgraph.api.state import ServerState
from provgraph.config import load_settings


def _record(job_id: str, user: str, status: str, created: float, **extra: object) -> dict[str, object]:
    return {"id": job_id, "user": user, "collection": "c", "files": ["a.txt"], "extractors": None, "status": status,
            "files_done": 0, "chunks": 0, "chunks_done": 0, "result": None, "errors": [], "retry_of": None,
            "created": created, "documents": [{"file": "a.txt"}], **extra}


def test_each_users_finished_jobs_are_bounded_and_unfinished_ones_read_back_interrupted(tmp_path: Path) -> None:
    table = JobTable(tmp_path / "jobs")
    for i in range(5):
        table.save(_record(f"a{i}", "alice", "done", float(i)))
    table.save(_record("run", "alice", "running", 3.5))
    table.save(_record("b0", "bob", "failed", 0.5))
    (tmp_path / "jobs" / "junk.json").write_text("{not json")
    (tmp_path / "uploads" / "run").mkdir(parents=True)
    jobs = Jobs(ServerState(load_settings(home=str(tmp_path), llm="none")), keep=2)
    assert list(jobs.jobs) == ["b0", "run", "a4"]  # oldest first; alice's two most recent (run now ended)
    assert sorted(p.name for p in (tmp_path / "jobs").iterdir()) == ["a4.json", "b0.json", "run.json"]
    run = jobs.jobs["run"]
    assert (run.status, run.errors, run.view()["documents"][0]["status"]) == (
        "failed", ["interrupted: the server stopped before this job ended (0 of 1 file(s) loaded)"], "failed")
    assert run.view()["documents"][0]["error"] == "interrupted: the server stopped before this job ended: " \
                                                  "not loaded, upload it again"
    assert not (tmp_path / "uploads" / "run").exists()
    assert [r["status"] for r in JobTable(tmp_path / "jobs").load()] == ["failed", "failed", "done"]  # saved as it now reads
