"""Messages, usage and the StreamResult contract."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from provgraph.models.base import Completion, Message, StreamResult, Usage, assistant, system, user


async def _pieces(*items: str | Usage) -> AsyncIterator[str | Usage]:
    for item in items:
        yield item


def test_message_helpers_and_usage_sum() -> None:
    assert [system("s"), user("u"), assistant("a")] == [
        Message("system", "s"),
        Message("user", "u"),
        Message("assistant", "a"),
    ]
    assert Usage(3, 4, "p:m") + Usage(1, 2, "p:m") == Usage(4, 6, "p:m")


def test_stream_yields_text_and_sets_usage_at_the_end() -> None:
    async def run() -> tuple[list[str], Usage | None, StreamResult]:
        stream = StreamResult(_pieces("Hel", "", "lo", Usage(5, 2, "p:m")), model="p:m")
        seen = []
        before = stream.usage
        async for piece in stream:
            seen.append(piece)
        assert before is None
        return seen, stream.usage, stream

    seen, usage, stream = asyncio.run(run())
    assert seen == ["Hel", "lo"]
    assert usage == Usage(5, 2, "p:m")
    assert stream.text == "Hello" and stream.done


def test_stream_without_usage_estimates_it_and_says_so() -> None:
    async def run() -> Completion:
        return await StreamResult(_pieces("abcd", "efgh", "i"), model="p:m", prompt="12345678").collect()

    # 8 prompt characters -> 2 tokens, 9 output characters -> 3 tokens (one per 4 characters, rounded up)
    assert asyncio.run(run()) == Completion("abcdefghi", Usage(2, 3, "p:m", estimated=True))


def test_reported_usage_is_not_marked_estimated() -> None:
    assert Usage(5, 2, "p:m").estimated is False
    assert (Usage(1, 1, "p:m") + Usage(1, 1, "p:m", estimated=True)).estimated is True


def test_stream_closed_early_is_done() -> None:
    async def run() -> StreamResult:
        stream = StreamResult(_pieces("a", "b", "c"), model="p:m")
        async for _ in stream:
            break
        await stream.aclose()
        return stream

    stream = asyncio.run(run())
    assert stream.done and stream.text == "a" and stream.usage == Usage(0, 1, "p:m", estimated=True)
