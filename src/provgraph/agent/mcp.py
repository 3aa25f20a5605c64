"""Tools served by MCP servers (the official ``mcp`` SDK, 2.x), for the agent.

``Settings.mcp_servers`` lists servers as ``{"name": "x", "command": ["prog", "arg"…]}`` (stdio;
optional ``"env"``, ``"cwd"``) or ``{"name": "x", "url": "http://…/mcp"}`` (streamable HTTP);
either may set ``"timeout"`` (seconds per call, default 60). Each server's tools become agent
tools under their own names; a name already taken gets the server's name in front
(``x.tool``). Each connection lives in its own asyncio task, so the SDK's cancel scopes are
entered and left in one task whatever the caller does between calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, TextIO

from provgraph.agent.tools import Tool, ToolContext, ToolOutput, ToolSpec
from provgraph.errors import ConfigError
from provgraph.events import Explain

__all__ = ["McpServerConfig", "McpConnection", "McpTool", "McpTools", "parse_servers"]

START_TIMEOUT = 30.0
CALL_TIMEOUT = 60.0
MAX_PAGES = 100
"""Tool-list pages read at most (a server whose pagination never ends cannot hang the agent)."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One configured server: a stdio ``command`` or a streamable-HTTP ``url``."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    timeout: float = CALL_TIMEOUT

    @property
    def where(self) -> str:
        """The command line or URL, for messages."""
        return self.url or " ".join(self.command)


def parse_servers(entries: Sequence[Mapping[str, Any]]) -> list[McpServerConfig]:
    """Validate ``Settings.mcp_servers`` entries; raises ConfigError naming the bad entry."""
    out: list[McpServerConfig] = []
    for i, entry in enumerate(entries):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"mcp_servers[{i}] needs a \"name\"")
        command, url = entry.get("command"), entry.get("url")
        if isinstance(command, str):
            command = [command]
        if (command is None) == (url is None):
            raise ConfigError(f"MCP server {name!r} needs exactly one of \"command\" (stdio) or \"url\" (HTTP)")
        if command is not None and (not command or not all(isinstance(c, str) and c for c in command)):
            raise ConfigError(f"MCP server {name!r}: \"command\" must be a non-empty list of strings")
        if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
            raise ConfigError(f"MCP server {name!r}: \"url\" must be an http(s) URL")
        timeout = entry.get("timeout", CALL_TIMEOUT)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"MCP server {name!r}: \"timeout\" must be a positive number of seconds")
        env = entry.get("env")
        out.append(McpServerConfig(name=name, command=tuple(command or ()), url=url,
                                   env=dict(env) if env else None, cwd=entry.get("cwd"), timeout=float(timeout)))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise ConfigError("MCP server names must be unique")
    return out


def _content_text(result: Any) -> str:
    """The text of a tool result's content blocks (non-text blocks named by their type)."""
    parts: list[str] = []
    for block in result.content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


class McpConnection:
    """A connected MCP server, owned by a background task; calls are queued to it."""

    def __init__(self, config: McpServerConfig, *, errlog: TextIO | None = None) -> None:
        self.config = config
        self._errlog = errlog
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[Any]] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.tools: list[Any] = []
        self._devnull: TextIO | None = None

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        if self.config.url is not None:
            return self.config.url
        params = StdioServerParameters(command=self.config.command[0], args=list(self.config.command[1:]),
                                       env=dict(self.config.env) if self.config.env else None, cwd=self.config.cwd)
        return stdio_client(params, errlog=self._server_log())

    def _server_log(self) -> TextIO:
        """Where the server's stderr goes: ``errlog``, else our stderr, else (no file behind it) nowhere."""
        for candidate in (self._errlog, sys.stderr):
            try:
                if candidate is not None and candidate.fileno() >= 0:
                    return candidate
            except (AttributeError, OSError, ValueError):
                continue
        if self._devnull is None:
            self._devnull = open(os.devnull, "w")  # noqa: SIM115 - closed with the connection
        return self._devnull

    async def start(self) -> None:
        """Connect and list the tools; raises ConfigError when the server cannot be reached."""
        ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp:{self.config.name}")
        try:
            self.tools = await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except Exception as exc:
            await self.close()
            cause = exc if not isinstance(exc, TimeoutError) else f"no answer within {START_TIMEOUT:g}s"
            where = f"MCP server {self.config.name!r} ({self.config.where})"
            raise ConfigError(f"{where} failed to start: {cause}") from exc

    async def _serve(self, ready: asyncio.Future[list[Any]]) -> None:
        from mcp import Client

        try:
            async with Client(self._transport(), read_timeout_seconds=self.config.timeout) as client:
                tools: list[Any] = []
                cursor: str | None = None
                for _ in range(MAX_PAGES):
                    listed = await client.list_tools(cursor=cursor)
                    tools += listed.tools
                    cursor = listed.next_cursor
                    if cursor is None:
                        break
                ready.set_result(tools)
                while (item := await self._queue.get()) is not None:
                    name, arguments, reply = item
                    try:
                        result = await client.call_tool(name, arguments)
                    except Exception as exc:  # noqa: BLE001 - handed to the caller
                        if not reply.done():
                            reply.set_exception(exc)
                    else:
                        if not reply.done():
                            reply.set_result(result)
        except BaseException as exc:  # noqa: BLE001 - reported to whoever waits
            if isinstance(exc, asyncio.CancelledError):
                ready.cancel()
                self._fail_pending("stopped")
                raise
            if not ready.done():
                ready.set_exception(_unwrap(exc))
            self._fail_pending(str(_unwrap(exc)))

    def _fail_pending(self, why: str) -> None:
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None and not item[2].done():
                item[2].set_result(why)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Call tool ``name``; returns its text and whether it failed (never raises for the tool's failures)."""
        task = self._task
        prefix = f"MCP server {self.config.name!r}"
        if task is None or task.done():
            return f"{prefix} is not running", True
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((name, arguments, reply))
        await asyncio.wait({reply, task}, timeout=self.config.timeout + 5, return_when=asyncio.FIRST_COMPLETED)
        if not reply.done():
            reply.cancel()
            why = "stopped" if task.done() else f"no answer within {self.config.timeout:g}s"
            return f"{prefix}: {name}: {why}", True
        if reply.exception() is not None:
            return f"{prefix}: {name} failed: {_unwrap(reply.exception())}", True  # type: ignore[arg-type]
        result = reply.result()
        if isinstance(result, str):
            return f"{prefix}: {name}: {result}", True
        return _content_text(result), bool(result.is_error)

    async def close(self) -> None:
        """Stop the server (idempotent)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            await self._queue.put(None)
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, Exception):  # noqa: BLE001 - shutting down anyway
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._devnull is not None:
            self._devnull.close()
            self._devnull = None


def _unwrap(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class McpTool:
    """One tool of an MCP server, as an agent tool."""

    def __init__(self, spec: ToolSpec, remote_name: str, connection: McpConnection) -> None:
        self._spec = spec
        self.remote_name = remote_name
        self.connection = connection

    @property
    def spec(self) -> ToolSpec:
        """Name, description and the server's input schema."""
        return self._spec

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        """Call the remote tool; an ``is_error`` result becomes an error output."""
        text, error = await self.connection.call(self.remote_name, arguments)
        yield ToolOutput(text=text, error=error)


class McpTools(AbstractAsyncContextManager["McpTools"]):
    """``async with McpTools(configs, taken=…) as mcp: mcp.tools`` — connects every server, closes them after."""

    def __init__(self, configs: Sequence[McpServerConfig], *, taken: Sequence[str] = (),
                 errlog: TextIO | None = None) -> None:
        self.configs = list(configs)
        self.connections: list[McpConnection] = []
        self.tools: list[Tool] = []
        self._taken = set(taken)
        self._errlog = errlog

    async def __aenter__(self) -> McpTools:
        try:
            for config in self.configs:
                connection = McpConnection(config, errlog=self._errlog)
                self.connections.append(connection)
                await connection.start()
                for remote in connection.tools:
                    name = remote.name if remote.name not in self._taken else f"{config.name}.{remote.name}"
                    self._taken.add(name)
                    schema = remote.input_schema if isinstance(remote.input_schema, dict) else {"type": "object"}
                    spec = ToolSpec(name, remote.description or remote.name, schema)
                    self.tools.append(McpTool(spec, remote.name, connection))
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server (newest first)."""
        while self.connections:
            await self.connections.pop().close()
