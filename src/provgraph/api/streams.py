"""A command's own stdout, stderr and stdin while it runs in one of the server's threads (``/cli``).

``sys.stdout`` and friends become proxies once; each thread that runs a command gets its own
streams (:func:`redirected`), every write going to that command's client as it is made. A command
with a deadline is stopped at its first write past it (its work between two awaits cannot be
interrupted otherwise): that write raises the one timeout error, which the command prints as usual.
"""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from provgraph.cli.common import timeout_message
from provgraph.errors import ProvgraphError

__all__ = ["redirected", "Deadline"]


class Deadline:
    """When a command must stop; :meth:`check` raises once past it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.raised = False

    def check(self) -> None:
        if not self.raised and time.monotonic() > self.at:
            self.raised = True
            raise ProvgraphError(timeout_message(self.seconds))


class _Sink(io.TextIOBase):
    """A thread's stdout or stderr while it runs a command: each write goes to ``emit``."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, name: str, emit: Callable[[dict[str, Any]], None], deadline: Deadline | None) -> None:
        self.name_ = name
        self.emit = emit
        self.deadline = deadline
        self.buffer = _BinarySink(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")  # so click sees a text stream
        if text:
            if self.deadline is not None:
                self.deadline.check()  # not on empty writes: click probes streams with write("") in a try
            self.emit({self.name_: text})
        return len(text)

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


class _BinarySink(io.RawIOBase):
    def __init__(self, text: _Sink) -> None:
        self.text = text

    def write(self, data: Any) -> int:
        self.text.write(bytes(data).decode("utf-8", errors="replace"))
        return len(data)

    def writable(self) -> bool:
        return True


class _ThreadStreams(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``/``sys.stdin``: a command's thread gets its own."""

    def __init__(self, real: Any, which: str) -> None:
        self.real = real
        self.which = which
        self.local = threading.local()

    def current(self) -> Any:
        return getattr(self.local, "stream", None) or self.real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current(), name)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.current(), "encoding", "utf-8"))

    @property
    def buffer(self) -> Any:
        return self.current().buffer

    def write(self, text: str) -> int:
        return int(self.current().write(text))

    def read(self, size: int | None = -1) -> str:
        return str(self.current().read(size))

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return str(self.current().readline(size))

    def flush(self) -> None:
        self.current().flush()

    def isatty(self) -> bool:
        return bool(self.current().isatty())

    def fileno(self) -> int:
        return int(self.current().fileno())


_installed: dict[str, _ThreadStreams] = {}
_install_lock = threading.Lock()


def _streams() -> dict[str, _ThreadStreams]:
    with _install_lock:
        if not _installed:
            for name in ("stdout", "stderr", "stdin"):
                proxy = _ThreadStreams(getattr(sys, name), name)
                setattr(sys, name, proxy)
                _installed[name] = proxy
    return _installed


@contextmanager
def redirected(emit: Callable[[dict[str, Any]], None], stdin: str, deadline: Deadline | None = None) -> Iterator[None]:
    """This thread's stdout and stderr go to ``emit`` (``{"stdout": text}``), its stdin reads ``stdin``."""
    streams = _streams()
    streams["stdout"].local.stream = _Sink("stdout", emit, deadline)
    streams["stderr"].local.stream = _Sink("stderr", emit, deadline)
    streams["stdin"].local.stream = io.StringIO(stdin)
    try:
        yield
    finally:
        for proxy in streams.values():
            proxy.local.stream = None
