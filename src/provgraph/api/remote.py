"""``POST /api/v1/cli``: the CLI's remote mode. The server runs the very command the client typed,
on its open collections, as the token's user, and streams its stdout and stderr back as written.

So ``provgraph … `` prints the same locally and remotely by construction. Request (JSON)::

    {"argv": ["graph-rag", "-q", "…", "-x"], "stdin": null,
     "files": [{"path": "examples/corpus/a.txt", "data": "<base64>"}], "outputs": ["demo.trig"]}

Response: NDJSON lines ``{"stdout": text}``, ``{"stderr": text}``, ``{"file": path, "data": base64}``
(for ``export -o``), and last ``{"exit": code}``. Uploaded files live in a private folder for the
command's run; paths in the output are the client's. The command is parsed as running it would
parse it, and every file parameter it gets must lie in that folder (:func:`_outside`); queries
stop at the server's ``--timeout`` as their routes do.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path, PurePosixPath
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from provgraph.api.errors import one_line
from provgraph.api.routes_data import ERRORS
from provgraph.api.streams import Deadline, redirected
from provgraph.api.uploads import checked_part
from provgraph.api.state import ServerState, state_of, user_of
from provgraph.config import Settings
from provgraph.errors import InputError, ProvgraphError
from provgraph.layout import CollectionRef

__all__ = ["install", "CliRequest", "LOCAL_ONLY", "WRITES"]

LOCAL_ONLY = ("serve", "tokens", "config")
WRITES = ("load", "extract", "import", "check")
EXCLUSIVE = ("restore",)  # replaces a whole collection: runs with it closed (RuntimePool.exclusive)
QUERIES = ("graph-rag", "document-rag", "agent")  # run within the server's --timeout, as their routes do


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


class _Host:
    """What ``cli.common.hosted`` needs: the server's home, the caller, its open collections."""

    def __init__(self, state: ServerState, user: str, write: bool) -> None:
        self.state = state
        self.home = str(state.settings.home)
        self.user = user
        self.write = write
        self.timeout_s = state.limits.timeout_s
        self.result_caps = (state.limits.max_result_rows, int(state.limits.max_result_mb * 2**20))

    def use(self, settings: Settings, *, create: bool, write: bool) -> Any:
        return self.state.pool.use(settings, create=create, write=write)

    def drop(self, ref: CollectionRef) -> None:
        self.state.pool.drop(self.state.settings, ref)


def _place(folder: Path, given: str) -> Path:
    """Where an uploaded file named ``given`` by the client lives on the server (inside ``folder``)."""
    parts = [checked_part(p) for p in PurePosixPath(given.replace("\\", "/")).parts if p not in ("/", "", ".")]
    if not parts or any(p == ".." for p in parts):
        parts = ["up", *[p for p in parts if p != ".."]] or ["up", "file"]
    side = "abs" if given.startswith("/") else "rel"
    return folder.joinpath(side, *parts)


def _refused(emit: Callable[[dict[str, Any]], None], message: str) -> None:
    emit({"stderr": f"error: {message}\n"})
    emit({"exit": 2})


def _server_argv(body: CliRequest, folder: Path) -> tuple[list[str], dict[str, str]]:
    """The arguments with every file the client named moved into ``folder``, and server path → client path."""
    mapping: dict[str, str] = {}
    argv = list(body.argv)
    for given in {*body.paths, *body.outputs}:
        server_path = str(_place(folder, given))
        mapping[server_path] = given
        argv = [server_path if a == given else _option_value(a, given, server_path) for a in argv]
    return argv, mapping


def _outside(group: Any, argv: list[str], folder: Path) -> str | None:
    """The first file the parsed command would read or write outside ``folder`` (None: none).

    The command is parsed exactly as running it parses it, so every spelling (``-oFILE``,
    ``--output=FILE``, ``-o FILE``) gives the value the command would use. Arguments that do not
    parse name no file: the command stops at the same error.
    """
    from provgraph.cli.remote import parse_command, path_values

    try:
        with redirected(lambda _: None, ""):  # an eager --help prints when parsed; the run prints it
            parsed = parse_command(group, argv, strict=True)
    except Exception as exc:  # noqa: BLE001 - a usage error of click's (or typer's vendored click)
        if hasattr(exc, "exit_code"):
            return None
        raise
    if parsed is None:
        return None
    inside = folder.resolve()
    return next((v for v in path_values(argv[0], parsed[1]) if not Path(v).resolve().is_relative_to(inside)), None)


def _run(state: ServerState, user: str, body: CliRequest, folder: Path,
         emit: Callable[[dict[str, Any]], None]) -> None:
    import typer.main

    from provgraph.cli.app import app
    from provgraph.cli.common import hosted
    from provgraph.cli.remote import parse_command

    command = body.argv[0]
    if command.startswith("-"):
        return _refused(emit, f"{command}: global options apply on the client; send the command and its options")
    if command in LOCAL_ONLY:
        return _refused(emit, f"provgraph {command} runs on the client, not against a server")
    group = typer.main.get_command(app)
    for f in body.files:
        path = _place(folder, f.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(f.data))
    argv, mapping = _server_argv(body, folder)
    for out in body.outputs:
        _place(folder, out).parent.mkdir(parents=True, exist_ok=True)
    outside = _outside(group, argv, folder)
    if outside is not None:
        return _refused(emit, f"{outside}: a server reads and writes only the files the client sends")
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
    host = _Host(state, user, write=command in WRITES or argv[:2] in (["documents", "remove"], ["traces", "delete"],
                                                                             ["communities", "build"]))
    exclusive: AbstractContextManager[None] = nullcontext()
    if command in EXCLUSIVE:
        parsed = parse_command(group, argv)
        collection = (parsed[1] if parsed else {}).get("collection") or state.settings.collection
        exclusive = state.pool.exclusive(CollectionRef(state.settings.home, user, str(collection)))
    deadline = Deadline(state.limits.timeout_s) if command in QUERIES else None
    with redirected(send, body.stdin or "", deadline), hosted(host), exclusive:
        try:
            group.main(args=argv, prog_name="provgraph")
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
    """``--output=FILE`` and ``-oFILE`` style arguments."""
    if arg.startswith("-") and "=" in arg and arg.split("=", 1)[1] == given:
        return arg.split("=", 1)[0] + "=" + server_path
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2 and arg[2:] == given:
        return arg[:2] + server_path
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
        from provgraph.cli.common import exit_code_for

        try:
            _run(state, user, body, folder, emit)
        except ProvgraphError as exc:  # before the command ran (an upload it cannot hold)
            emit({"stderr": f"error: {one_line(exc)}\n"})
            emit({"exit": exit_code_for(exc)})
        except Exception as exc:  # noqa: BLE001 - reported to the client as the command's failure
            emit({"stderr": f"error: {type(exc).__name__}: {str(exc).replace(str(folder), 'the upload')}\n"})
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

