"""A real ``provgraph serve`` process on a free loopback port (uvicorn in a subprocess)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from provgraph.api.tokens import TokenStore

SERVE = "from provgraph.cli.app import main; main()"


def corpus_copy(tmp_path_factory: pytest.TempPathFactory, corpus_home: Path, name: str) -> Path:
    """A private copy of the loaded sample corpus's data directory (collection ``corpus`` of user ``default``)."""
    home = tmp_path_factory.mktemp(name) / "home"
    shutil.copytree(corpus_home, home)
    return home


def user_tokens(home: Path, *users: str) -> dict[str, str]:
    """A new API token for each user, by user."""
    store = TokenStore(home)
    return {user: store.create(user)[1] for user in users}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    home: Path
    process: subprocess.Popen[bytes]

    def log(self) -> str:
        """What the server printed."""
        return (self.home.parent / f"serve-{self.url.rsplit(':', 1)[1]}.log").read_text()

    def stop(self) -> int:
        """SIGTERM (graceful shutdown); returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)


@contextmanager
def live_server(home: Path, *args: str, max_fds: int | None = None,
                env: dict[str, str] | None = None) -> Iterator[LiveServer]:
    """Start ``provgraph serve`` over ``home``; stopped (SIGTERM) on exit. ``max_fds`` caps its file descriptors;
    ``env`` adds settings (``PROVGRAPH_LLM_BASE_URL``…)."""

    def cap_fds() -> None:
        if max_fds is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_fds, max_fds))

    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
    environ.update(env or {}, PROVGRAPH_HOME=str(home))
    log = open(home.parent / f"serve-{port}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", str(port), *args],
                            env=environ, stdout=log, stderr=subprocess.STDOUT, preexec_fn=cap_fds)
    server = LiveServer(f"http://127.0.0.1:{port}", home, proc)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {(home.parent / f'serve-{port}.log').read_text()}")
            try:
                if httpx.get(server.url + "/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start within 60 s")
            time.sleep(0.1)
        yield server
    finally:
        server.stop()
        log.close()
