"""Calls run beside a question's work: the block waits for them, and their outcome stays in the future."""

from __future__ import annotations

import threading

import pytest

from provgraph.retrieval.background import running


def test_the_block_ends_only_after_the_call_has_finished() -> None:
    release = threading.Event()
    order: list[str] = []

    def call() -> str:
        release.wait(timeout=30)
        order.append("call")
        return "done"

    with running(call) as future:
        order.append("block")
        assert not future.done()  # the call waits for the block, so it cannot have finished yet
        release.set()
    assert order == ["block", "call"]
    assert future.result() == "done"


def test_a_failed_call_raises_where_its_result_is_read() -> None:
    def call() -> None:
        raise ValueError("no such chunk")

    with running(call) as future:
        pass
    with pytest.raises(ValueError, match="no such chunk"):
        future.result()


def test_a_failing_block_still_waits_for_the_call() -> None:
    finished = threading.Event()

    with pytest.raises(RuntimeError, match="the block failed"), running(finished.set):
        raise RuntimeError("the block failed")
    assert finished.is_set()
