"""``POST /api/v1/cli``: the CLI's remote mode. The server runs the very command the client typed,
on its open collections, as the token's user, and streams its stdout and stderr back as written.

So ``provgraph … `` prints the same locally and remotely by construction. Request (JSON)::

    {"argv": ["graph-rag", "-q", "…", "-x"], "stdin": null,
     "files": [{"path": "examples/corpus/a.txt", "data": "<base64>"}], "outputs": ["demo.trig"]}

Response: NDJSON lines ``{"stdout": text}``, ``{"stderr": text}``, ``{"file": path, "data": base64}``
(for ``export -o``), and last ``{"exit": code}``. Uploaded files live in a private folder for the
command's run; paths in the output are the client's.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import shutil
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path, PurePosixPath
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from provgraph.api.routes_data import ERRORS
from provgraph.api.state import ServerState, state_of, user_of
from provgraph.config import Settings
from provgraph.errors import InputError
from provgraph.layout import CollectionRef

__all__ = ["install", "CliRequest", "LOCAL_ONLY", "WRITES"]

LOCAL_ONLY = ("serve", "tokens", "config")
WRITES = ("load", "extract", "import", "check")
EXCLUSIVE = ("restore",)  # replaces a whole collection: runs with it closed (RuntimePool.exclusive)


class UploadedFile(BaseModel):
    path: str = Field(description="the path as the client named it")
    data: str = Field(description="the file's bytes, base64")


class CliRequest(BaseModel):
    """One CLI invocation: the arguments after ``provgraph`` (and its global options)."""

    argv: list[str] = Field(min_length=1, max_length=10_000, examples=[["traces", "list", "-C", "demo"]])
    stdin: str | None = None
    files: list[UploadedFile] = Field(default_factory=list, max_length=100_000)
    paths: list[str] = Field(default_factory=list, max_length=10_000,
                             description="arguments naming uploaded files or folders (rewritten on the server)")
    outputs: list[str] = Field(default_factory=list, max_length=16, description="arguments naming files to write back")


class _Sink(io.TextIOBase):
    """A thread's stdout or stderr while it runs a command: each write goes to ``emit``."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, name: str, emit: Callable[[dict[str, Any]], None]) -> None:
        self.name_ = name
        self.emit = emit
        self.buffer = _BinarySink(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")  # so click sees a text stream
        if text:
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
def _redirected(emit: Callable[[dict[str, Any]], None], stdin: str) -> Iterator[None]:
    streams = _streams()
    streams["stdout"].local.stream = _Sink("stdout", emit)
    streams["stderr"].local.stream = _Sink("stderr", emit)
    streams["stdin"].local.stream = io.StringIO(stdin)
    try:
        yield
    finally:
        for proxy in streams.values():
            proxy.local.stream = None


class _Host:
    """What ``cli.common.hosted`` needs: the server's home, the caller, its open collections."""

    def __init__(self, state: ServerState, user: str, write: bool) -> None:
        self.state = state
        self.home = str(state.settings.home)
        self.user = user
        self.write = write

    def use(self, settings: Settings, *, create: bool, write: bool) -> Any:
        return self.state.pool.use(settings, create=create, write=write)

    def drop(self, ref: CollectionRef) -> None:
        self.state.pool.drop(ref)


def _place(folder: Path, given: str) -> Path:
    """Where an uploaded file named ``given`` by the client lives on the server (inside ``folder``)."""
    parts = [p for p in PurePosixPath(given.replace("\\", "/")).parts if p not in ("/", "", ".")]
    if not parts or any(p == ".." for p in parts):
        parts = ["up", *[p for p in parts if p != ".."]] or ["up", "file"]
    side = "abs" if given.startswith("/") else "rel"
    return folder.joinpath(side, *parts)


def _run(state: ServerState, user: str, body: CliRequest, folder: Path,
         emit: Callable[[dict[str, Any]], None]) -> None:
    import typer.main

    from provgraph.cli.app import app
    from provgraph.cli.common import hosted
    from provgraph.cli.remote import _params, file_arguments

    command = body.argv[0]
    if command.startswith("-"):
        emit({"stderr": f"error: {command}: global options apply on the client; send the command and its options\n"})
        emit({"exit": 2})
        return
    if command in LOCAL_ONLY:
        emit({"stderr": f"error: provgraph {command} runs on the client, not against a server\n"})
        emit({"exit": 2})
        return
    mapping: dict[str, str] = {}
    for f in body.files:
        path = _place(folder, f.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(f.data))
    argv = list(body.argv)
    for given in {*body.paths, *body.outputs}:
        server_path = str(_place(folder, given))
        mapping[server_path] = given
        argv = [server_path if a == given else _option_value(a, given, server_path) for a in argv]
    for out in body.outputs:
        _place(folder, out).parent.mkdir(parents=True, exist_ok=True)
    inputs, outputs = file_arguments(typer.main.get_command(app), argv)  # type: ignore[arg-type]
    outside = [a for a in inputs + outputs if not Path(a).resolve().is_relative_to(folder.resolve())]
    if outside:
        emit({"stderr": f"error: {outside[0]}: a server reads and writes only the files the client sends\n"})
        emit({"exit": 2})
        return
    replacements = sorted(mapping.items(), key=lambda kv: -len(kv[0]))

    def send(message: dict[str, Any]) -> None:
        for key in ("stdout", "stderr"):
            if key in message:
                text = message[key]
                for server_path, given in replacements:
                    text = text.replace(server_path, given)
                message = {key: text}
        emit(message)

    code = 0
    host = _Host(state, user, write=command in WRITES or argv[:2] in (["documents", "remove"], ["traces", "delete"]))
    exclusive: AbstractContextManager[None] = nullcontext()
    if command in EXCLUSIVE:
        collection = _params(typer.main.get_command(app), argv).get("collection") or state.settings.collection
        exclusive = state.pool.exclusive(CollectionRef(state.settings.home, user, str(collection)))
    with _redirected(send, body.stdin or ""), hosted(host), exclusive:
        try:
            typer.main.get_command(app).main(args=argv, prog_name="provgraph")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                sys.stderr.write(exc.code + "\n")
        finally:
            sys.stdout.flush()
    for out in body.outputs:
        made = _place(folder, out)
        if made.is_file():
            emit({"file": out, "data": base64.b64encode(made.read_bytes()).decode("ascii")})
    emit({"exit": code})


def _option_value(arg: str, given: str, server_path: str) -> str:
    """``--output=FILE`` style arguments."""
    if arg.startswith("-") and "=" in arg and arg.split("=", 1)[1] == given:
        return arg.split("=", 1)[0] + "=" + server_path
    return arg


router = APIRouter(responses=ERRORS, tags=["cli"])


@router.post("/cli", responses={200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}}}})
async def cli(request: Request, body: CliRequest) -> StreamingResponse:
    """Run a CLI command on the server (remote mode); NDJSON stdout/stderr chunks as written, then the exit code."""
    state = state_of(request)
    user = user_of(request)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    folder = state.settings.home / "uploads" / f"cli-{uuid.uuid4().hex}"
    if any(not f.path for f in body.files):
        raise InputError("an uploaded file needs its path")

    def emit(message: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, message)

    def work() -> None:
        try:
            _run(state, user, body, folder, emit)
        except Exception as exc:  # noqa: BLE001 - reported to the client as the command's failure
            emit({"stderr": f"error: {type(exc).__name__}: {exc}\n"})
            emit({"exit": 1})
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    task = asyncio.create_task(asyncio.to_thread(work))

    async def lines() -> AsyncIterator[bytes]:
        while True:
            message = await queue.get()
            if message is None:
                break
            yield json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        await task

    return StreamingResponse(lines(), media_type="application/x-ndjson")


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the remote-mode route."""
    app.include_router(router, prefix=prefix)

