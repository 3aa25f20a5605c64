"""When and how long to wait before trying a model endpoint again.

Exponential backoff with full jitter, capped; a server's ``Retry-After`` (seconds or an HTTP
date) wins over the computed delay, up to ``max_delay``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

__all__ = ["RetryPolicy", "retry_after_seconds", "RETRY_STATUSES"]

RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))
"""HTTP statuses worth another try (rate limits, server errors); other 4xx are final."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_retries`` extra attempts; delays grow as ``base_delay * 2**attempt``, jittered."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait asked by ``Retry-After``/``retry-after-ms`` headers, or ``None``."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
