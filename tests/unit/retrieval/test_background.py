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


def test_a_call_failing_on_a_worker_drops_what_its_frames_held_on_that_worker() -> None:
    """pyoxigraph's results must be dropped on the thread that made them; a failure must not carry them over."""
    lives: list[tuple[str, str]] = []
    started = threading.Event()

    class Held:
        def __init__(self) -> None:
            self.made = threading.current_thread().name

        def __del__(self) -> None:
            lives.append((self.made, threading.current_thread().name))

    def call() -> None:
        started.set()
        held = Held()  # noqa: F841 - a local of the failing frame, like a query's solutions
        raise OSError("Corruption: block checksum mismatch")

    with running(call) as beside:
        assert started.wait(timeout=30)
    with pytest.raises(OSError, match="Corruption"):
        beside.result()
    assert len(lives) == 1 and lives[0][0].startswith("provgraph-io") and lives[0][0] == lives[0][1], lives


def test_a_handed_off_call_runs_on_a_worker_and_keeps_its_outcome() -> None:
    assert Beside(sorted, [3, 1, 2], handoff=True).result() == [1, 2, 3]

    def call() -> None:
        raise ValueError("no such chunk")

    with pytest.raises(ValueError, match="no such chunk"):
        Beside(call, handoff=True).result()


def test_a_handoff_no_worker_takes_is_made_by_the_caller() -> None:
    """With every worker busy the handoff gives up (it does not wait for a worker) and the caller makes the call."""
    hold = threading.Event()
    busy = [Beside(hold.wait, 30) for _ in range(2)]
    try:
        assert Beside(threading.get_ident, handoff=True).result() == threading.get_ident()
    finally:
        hold.set()
        for b in busy:
            b.settle()
