"""Calls run beside a question's work: the block waits for them, and their outcome is read after it."""

from __future__ import annotations

import threading

import pytest

from provgraph.retrieval.background import Beside, running


def test_the_block_ends_only_after_the_call_has_finished() -> None:
    release = threading.Event()
    order: list[str] = []

    def call() -> str:
        release.wait(timeout=30)
        order.append("call")
        return "done"

    with running(call) as beside:
        order.append("block")
        release.set()
    assert order == ["block", "call"]
    assert beside.result() == "done"


def test_a_failed_call_raises_where_its_result_is_read() -> None:
    def call() -> None:
        raise ValueError("no such chunk")

    with running(call) as beside:
        pass
    with pytest.raises(ValueError, match="no such chunk"):
        beside.result()


def test_a_failing_block_still_waits_for_the_call() -> None:
    finished = threading.Event()

    with pytest.raises(RuntimeError, match="the block failed"), running(finished.set):
        raise RuntimeError("the block failed")
    assert finished.is_set()


def test_a_call_no_worker_has_started_is_made_by_the_caller() -> None:
    """With every worker busy, the call is taken back and made on the caller's thread, not waited for."""
    hold = threading.Event()
    busy = [Beside(hold.wait, 30) for _ in range(2)]  # both workers wait: the next call stays queued
    try:
        assert Beside(threading.get_ident).result() == threading.get_ident()
    finally:
        hold.set()
        for b in busy:
            b.settle()
