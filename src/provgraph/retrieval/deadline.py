"""A question's deadline for its LLM steps, and the words that explain a fallback.

Both RAG engines give a question ``question_deadline`` seconds of LLM work; a step that fails or
runs past it falls back to its no-LLM form and says why (:func:`why`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from provgraph.models.base import StreamResult

__all__ = ["Deadline", "until", "why"]


@dataclass
class Deadline:
    """``seconds`` from creation (monotonic clock)."""

    seconds: float
    at: float = field(init=False)

    def __post_init__(self) -> None:
        self.at = time.monotonic() + self.seconds

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - time.monotonic()


async def until(stream: StreamResult, deadline: Deadline) -> AsyncIterator[str]:
    """The stream's pieces while the deadline lasts; TimeoutError after it."""
    while True:
        try:
            piece = await asyncio.wait_for(stream.__anext__(), max(deadline.remaining(), 0.001))
        except StopAsyncIteration:
            return
        yield piece


def why(exc: BaseException) -> str:
    """A failed or timed-out LLM step, in a few words."""
    if isinstance(exc, TimeoutError):
        return "it ran past the question deadline"
    return " ".join(str(exc).split())[:200] or type(exc).__name__
