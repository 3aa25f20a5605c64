"""One concurrency budget per token: HTTP requests and WebSocket messages draw on the same slots.

A request takes a slot for as long as it runs (a streamed answer until its last message); when the
token has none left it is refused at once (HTTP 429, or a ``TooManyRequests`` error message on the
socket) instead of queueing. Without tokens every client shares the one anonymous budget.
Used only on the server's event loop, so no lock is needed.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["Budget"]


class Budget:
    """Slots in flight per token key (the token's text, or ``""`` in open mode)."""

    def __init__(self, per_token: int) -> None:
        self.per_token = per_token
        self._used: Counter[str] = Counter()

    def take(self, key: str) -> bool:
        """Take a slot for ``key``; False when all its slots are in use."""
        if self._used[key] >= self.per_token:
            return False
        self._used[key] += 1
        return True

    def give(self, key: str) -> None:
        """Return a slot taken with :meth:`take`."""
        self._used[key] -= 1
        if self._used[key] <= 0:
            del self._used[key]

    def refusal(self) -> str:
        """The message of a refusal."""
        return f"more than {self.per_token} requests in flight for this token: wait for one to finish"
