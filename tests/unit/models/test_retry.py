"""Backoff and Retry-After."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from provgraph.models.retry import RETRY_STATUSES, RetryPolicy, retry_after_seconds


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=0.1, max_delay=0.5)
    for attempt, ceiling in [(0, 0.1), (1, 0.2), (2, 0.4), (3, 0.5), (9, 0.5)]:
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1


def test_retry_after_wins_but_is_capped() -> None:
    policy = RetryPolicy(base_delay=10.0, max_delay=3.0)
    assert policy.delay(0, retry_after=0.25) == 0.25
    assert policy.delay(0, retry_after=60.0) == 3.0


def test_retry_after_header_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "150"}) == 0.15
    now = 1_800_000_000.0  # a fixed clock: the HTTP date is whole seconds, three after "now"
    monkeypatch.setattr(time, "time", lambda: now)
    assert retry_after_seconds({"Retry-After": formatdate(now + 3, usegmt=True)}) == 3.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None


def test_only_rate_limits_and_server_errors_are_retried() -> None:
    assert {429, 500, 502, 503, 504} <= RETRY_STATUSES
    assert not {400, 401, 403, 404, 422} & RETRY_STATUSES
