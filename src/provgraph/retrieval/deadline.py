"""A question's deadline for its LLM steps, and the words that explain a fallback.

Both RAG engines give a question ``question_deadline`` seconds of LLM work; a step that fails or
runs past it falls back to its no-LLM form and says why (:func:`why`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from provgraph.errors import ModelError
from provgraph.models.base import StreamResult

__all__ = ["Deadline", "Outcome", "until", "answer_pieces", "why"]


@dataclass
class Deadline:
    """``seconds`` from creation, on ``clock`` (monotonic by default)."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    at: float = field(init=False)

    def __post_init__(self) -> None:
        self.at = self.clock() + self.seconds

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - self.clock()


async def until(stream: StreamResult, deadline: Deadline) -> AsyncIterator[str]:
    """The stream's pieces while the deadline lasts; TimeoutError after it.

    Each wait is cut by a timer on the current task (no task per piece, as ``wait_for`` would make).
    """
    while True:
        try:
            async with asyncio.timeout(max(deadline.remaining(), 0.001)):
                piece = await stream.__anext__()
        except StopAsyncIteration:
            return
        yield piece


@dataclass
class Outcome:
    """How a streamed answer ended: ``fallback`` says why there is none to use (None when there is)."""

    fallback: str | None = None
    warnings: list[str] = field(default_factory=list)


async def answer_pieces(stream: StreamResult, deadline: Deadline, outcome: Outcome) -> AsyncIterator[str]:
    """The answer's pieces until the deadline; a failure before any text sets ``outcome.fallback``,
    one after it leaves the text cut short with a warning."""
    try:
        async for piece in until(stream, deadline):
            yield piece
    except (ModelError, TimeoutError) as exc:
        await stream.aclose()
        if not stream.text.strip():
            outcome.fallback = f"the LLM's answer failed: {why(exc)}"
        else:
            outcome.warnings.append(f"synthesis: the answer is cut short, {why(exc)}")


def why(exc: BaseException) -> str:
    """A failed or timed-out LLM step, in a few words."""
    if isinstance(exc, TimeoutError):
        return "it ran past the question deadline"
    return " ".join(str(exc).split())[:400] or type(exc).__name__
