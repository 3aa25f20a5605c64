"""Extraction jobs between ``load`` and ``provgraph worker`` processes: the job, and its NATS JetStream queue."""

from provgraph.queue.jobs import Job, job_id

__all__ = ["Job", "job_id"]
