"""A data directory owned by a running server: ``{home}/serve.lock``, locked (``flock``) while ``serve`` runs.

The server's collections are open in it at any moment, so nothing else may open or delete them:
a second ``serve`` over the same directory stops at start, and a local command that would open,
drop or restore a collection there stops with one line saying how to go through the server. The
lock goes with the process (the kernel releases it however the server ends); the file keeps the
last owner's pid and URL for those messages.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from provgraph.errors import StoreUnavailable

__all__ = ["LOCK_FILE", "Owner", "own_home", "owner_of", "refuse_if_served"]

LOCK_FILE = "serve.lock"


@dataclass(frozen=True, slots=True)
class Owner:
    """The server holding a data directory."""

    pid: int
    url: str


def _read(path: Path) -> Owner:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Owner(int(data["pid"]), str(data["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return Owner(0, "an unknown address")


@contextmanager
def own_home(home: Path, url: str) -> Iterator[None]:
    """Hold ``home`` for this process while the block runs; StoreUnavailable when a server already holds it."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read(path)
            raise StoreUnavailable(f"{home} is already served by the provgraph server at {owner.url} (pid "
                                   f"{owner.pid}): stop it first, or serve another --home") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "url": url}).encode())
        yield
    finally:
        os.close(fd)  # releases the lock


def owner_of(home: Path) -> Owner | None:
    """The running server that holds ``home``, or None."""
    path = home / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read(path)
    finally:
        os.close(fd)
    return None


def refuse_if_served(home: Path, what: str) -> None:
    """Raise StoreUnavailable when a running server holds ``home`` (``what``: the collection, for the message)."""
    owner = owner_of(home)
    if owner is not None:
        raise StoreUnavailable(
            f"collection {what} is held by the provgraph server at {owner.url} (pid {owner.pid}): run the command "
            f"through it: PROVGRAPH_URL={owner.url} PROVGRAPH_TOKEN=TOKEN provgraph … (or --url/--token)")
