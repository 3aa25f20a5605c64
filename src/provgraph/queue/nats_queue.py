"""The job queue on NATS JetStream: a work-queue stream, one durable pull consumer shared by the workers.

At least once: a worker acks a job only after its results are committed, and says it is still working
on it every third of ``ack_wait``; a job not acked within ``ack_wait`` seconds of that (its worker died)
is delivered again, at most ``max_deliver`` times, and a worker
that sees its last delivery fail publishes it to the dead-letter subject ``provgraph.dead.<id>``. The
job id is the message id, so the stream drops a job enqueued twice within its duplicate window.
nats-py is imported on first use; its errors become StoreUnavailable (the queue is unreachable).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from provgraph.errors import StoreUnavailable
from provgraph.queue.jobs import Job

__all__ = ["NatsQueue", "Delivery", "STREAM", "SUBJECT", "DEAD", "DEAD_STREAM"]

STREAM, SUBJECT, CONSUMER = "PROVGRAPH_JOBS", "provgraph.jobs", "workers"
DEAD_STREAM, DEAD = "PROVGRAPH_DEAD", "provgraph.dead"


class Delivery:
    """One delivered job: ``attempt`` counts from 1; ack after commit, nak to have it delivered again."""

    def __init__(self, msg: Any, job: Job | None, max_deliver: int) -> None:
        self._msg = msg
        self.job = job
        self.attempt = int(msg.metadata.num_delivered)
        self.last = self.attempt >= max_deliver

    async def ack(self) -> None:
        await self._msg.ack()

    async def nak(self) -> None:
        await self._msg.nak()

    async def working(self) -> None:
        """Tell the server the job is still being worked on (its ack_wait starts again)."""
        await self._msg.in_progress()

    @property
    def data(self) -> bytes:
        return bytes(self._msg.data)


class NatsQueue:
    """Extraction jobs on the JetStream server at ``url`` (``nats://host:port``)."""

    def __init__(self, url: str, *, ack_wait: float = 600.0, max_deliver: int = 5) -> None:
        self.url = url
        self.ack_wait = ack_wait
        self.max_deliver = max_deliver
        self._nc: Any = None
        self._js: Any = None
        self._sub: Any = None

    async def __aenter__(self) -> NatsQueue:
        try:
            import nats
            from nats.js.api import RetentionPolicy, StreamConfig
        except ImportError as exc:
            raise StoreUnavailable("the job queue needs nats-py: pip install 'provgraph[scale]'") from exc
        try:
            self._nc = await nats.connect(self.url, connect_timeout=5, max_reconnect_attempts=3, allow_reconnect=True)
            self._js = self._nc.jetstream()
            for config in (StreamConfig(name=STREAM, subjects=[f"{SUBJECT}.*"], retention=RetentionPolicy.WORK_QUEUE,
                                        duplicate_window=3600.0),
                           StreamConfig(name=DEAD_STREAM, subjects=[f"{DEAD}.*"], retention=RetentionPolicy.LIMITS)):
                try:
                    await self._js.add_stream(config)
                except Exception:  # noqa: BLE001 - it exists (maybe with other limits): use it as it is
                    await self._js.stream_info(config.name)
        except Exception as exc:  # noqa: BLE001 - every failure to reach the server is one
            await self.aclose()
            raise StoreUnavailable(f"job queue {self.url}: cannot connect to NATS JetStream: {exc}") from exc
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._nc is not None:
            try:
                await self._nc.close()
            finally:
                self._nc = None

    async def publish(self, jobs: Sequence[Job]) -> None:
        """Enqueue ``jobs`` (each acknowledged by the server before this returns)."""
        for job in jobs:
            await self._js.publish(f"{SUBJECT}.{job.id}", job.to_bytes(), stream=STREAM, headers={"Nats-Msg-Id": job.id})

    async def dead_letter(self, delivery: Delivery, reason: str) -> None:
        """Publish a job that failed its last delivery to ``provgraph.dead.<id>``."""
        ident = delivery.job.id if delivery.job else "malformed"
        await self._js.publish(f"{DEAD}.{ident}", delivery.data, stream=DEAD_STREAM,
                               headers={"Provgraph-Reason": reason[:500]})

    async def next(self, timeout: float) -> Delivery | None:
        """The next job (None when none came within ``timeout`` seconds)."""
        from nats.errors import TimeoutError as NatsTimeout
        from nats.js.api import AckPolicy, ConsumerConfig

        if self._sub is None:  # created, or updated to this worker's ack_wait and max_deliver (the last started wins)
            config = ConsumerConfig(durable_name=CONSUMER, ack_policy=AckPolicy.EXPLICIT, ack_wait=self.ack_wait,
                                    max_deliver=self.max_deliver, filter_subject=f"{SUBJECT}.*")
            await self._js.add_consumer(STREAM, config)
            self._sub = await self._js.pull_subscribe_bind(CONSUMER, stream=STREAM)
        try:
            msgs = await self._sub.fetch(1, timeout=timeout)
        except NatsTimeout:
            return None
        msg = msgs[0]
        try:
            job: Job | None = Job.from_bytes(msg.data)
        except Exception:  # noqa: BLE001 - a malformed message is dead-lettered by the worker
            job = None
        return Delivery(msg, job, self.max_deliver)
