"""The job queue on NATS JetStream: a work-queue stream, one durable pull consumer shared by the workers.

At least once: a worker acks a job only after its results are committed, and says it is still working
on it every third of ``ack_wait``; a job not acked within ``ack_wait`` seconds of that (its worker died)
is delivered again, at most ``max_deliver`` times, and a worker
that sees its last delivery fail publishes it to the dead-letter subject ``provgraph.dead.<id>``. The
job id is the message id, so the stream drops a job enqueued twice within its duplicate window.
nats-py is imported on first use; its errors become StoreUnavailable (the queue is unreachable). A server restarted
within two minutes is reconnected to; meanwhile no job is taken, and an ack that cannot be sent leaves its job to be
delivered again after ack_wait (its redo writes nothing new).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from provgraph.errors import StoreUnavailable
from provgraph.queue.jobs import Job

__all__ = ["NatsQueue", "Delivery", "STREAM", "SUBJECT", "DEAD", "DEAD_STREAM"]

STREAM, SUBJECT, CONSUMER = "PROVGRAPH_JOBS", "provgraph.jobs", "workers"
DEAD_STREAM, DEAD = "PROVGRAPH_DEAD", "provgraph.dead"
_RECONNECTS = 240  # 0.5 s apart: a server restarted within two minutes is reconnected to


async def _told(call: Awaitable[None]) -> bool:
    """Whether a message to the server went out (during a server restart it cannot; at least once covers it)."""
    try:
        await call
    except Exception:  # noqa: BLE001 - every failure to reach the server is one
        return False
    return True


class Delivery:
    """One delivered job: ``attempt`` counts from 1; ack after commit, nak to have it delivered again."""

    def __init__(self, msg: Any, job: Job | None, max_deliver: int) -> None:
        self._msg = msg
        self.job = job
        self.attempt = int(msg.metadata.num_delivered)
        self.last = self.attempt >= max_deliver

    async def ack(self) -> bool:
        """Done with the job; False when the server could not be told (it delivers the job again after ack_wait)."""
        return await _told(self._msg.ack())

    async def nak(self, delay: float | None = None) -> bool:
        """Deliver the job again (after ``delay`` seconds); False when the server could not be told."""
        return await _told(self._msg.nak(delay=delay))

    async def working(self) -> bool:
        """Tell the server the job is still being worked on (its ack_wait starts again)."""
        return await _told(self._msg.in_progress())

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
            self._nc = await nats.connect(self.url, connect_timeout=5, allow_reconnect=True, reconnect_time_wait=0.5,
                                          max_reconnect_attempts=_RECONNECTS)
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
        """The next job (None when none came within ``timeout`` seconds, or the server is restarting: the client
        reconnects meanwhile)."""
        from nats.errors import TimeoutError as NatsTimeout
        from nats.js.api import AckPolicy, ConsumerConfig

        try:
            if self._sub is None:  # created, or updated to this worker's ack_wait and max_deliver (the last started wins)
                config = ConsumerConfig(durable_name=CONSUMER, ack_policy=AckPolicy.EXPLICIT, ack_wait=self.ack_wait,
                                        max_deliver=self.max_deliver, filter_subject=f"{SUBJECT}.*")
                await self._js.add_consumer(STREAM, config)
                self._sub = await self._js.pull_subscribe_bind(CONSUMER, stream=STREAM)
            msgs = await self._sub.fetch(1, timeout=timeout)
        except NatsTimeout:
            return None
        except Exception as exc:  # noqa: BLE001 - the server is away (a restart): wait, unless the client gave up
            if self._nc is None or self._nc.is_closed:
                raise StoreUnavailable(f"job queue {self.url}: the NATS JetStream server is gone: {exc}") from exc
            await asyncio.sleep(min(timeout, 0.5))
            return None
        msg = msgs[0]
        try:
            job: Job | None = Job.from_bytes(msg.data)
        except Exception:  # noqa: BLE001 - a malformed message is dead-lettered by the worker
            job = None
        return Delivery(msg, job, self.max_deliver)
