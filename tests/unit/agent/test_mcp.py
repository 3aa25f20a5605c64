"""MCP tools: configuration, stdio and streamable-HTTP servers, errors and name clashes."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.agent.mcp import McpServerConfig, McpTools, parse_servers
from provgraph.agent.tools import ToolContext, ToolOutput
from provgraph.errors import ConfigError
from provgraph.rdf.terms import Iri
from tests.fakes.mcp_server import FACTS
from tests.unit.agent.conftest import REPO

CONTEXT = ToolContext(question=Iri("urn:trustgraph:agent:s1"), session_id="s1", collection="c", step=1)


def test_parse_servers_accepts_stdio_and_http_entries() -> None:
    stdio, http = parse_servers([
        {"name": "a", "command": ["prog", "--flag"], "env": {"K": "V"}, "timeout": 5},
        {"name": "b", "url": "http://127.0.0.1:9/mcp"},
    ])
    assert stdio == McpServerConfig(name="a", command=("prog", "--flag"), env={"K": "V"}, timeout=5.0)
    assert http == McpServerConfig(name="b", url="http://127.0.0.1:9/mcp")
    assert parse_servers([{"name": "c", "command": "prog"}])[0].command == ("prog",)


@pytest.mark.parametrize(("entry", "message"), [
    ({"command": ["x"]}, 'mcp_servers[0] needs a "name"'),
    ({"name": "a"}, "MCP server 'a' needs exactly one of \"command\" (stdio) or \"url\" (HTTP)"),
    ({"name": "a", "command": ["x"], "url": "http://h/mcp"}, "needs exactly one of"),
    ({"name": "a", "command": []}, '"command" must be a non-empty list of strings'),
    ({"name": "a", "url": "ftp://h"}, '"url" must be an http(s) URL'),
    ({"name": "a", "url": "http://h/mcp", "timeout": 0}, '"timeout" must be a positive number'),
])
def test_parse_servers_rejects_bad_entries(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_servers([entry])
    assert message in str(info.value)


def test_parse_servers_rejects_duplicate_names() -> None:
    with pytest.raises(ConfigError, match="unique"):
        parse_servers([{"name": "a", "command": ["x"]}, {"name": "a", "url": "http://h/mcp"}])


async def _call(mcp: McpTools, name: str, arguments: dict[str, Any]) -> ToolOutput:
    tool = next(t for t in mcp.tools if t.spec.name == name)
    outputs = [o async for o in tool.run(arguments, CONTEXT)]
    assert len(outputs) == 1 and isinstance(outputs[0], ToolOutput)
    return outputs[0]


def test_stdio_server_tools_are_listed_called_and_renamed_on_clash(mcp_config: McpServerConfig,
                                                                 tmp_path: Path) -> None:
    async def run() -> None:
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with McpTools([mcp_config], taken=["element-facts"], errlog=errlog) as mcp:
                [tool] = mcp.tools
                assert tool.spec.name == "facts.element-facts"
                assert tool.spec.description == "Short facts about a chemical element, by name."
                assert tool.spec.parameters["required"] == ["element"]
                assert await _call(mcp, "facts.element-facts", {"element": "Radium"}) == ToolOutput(
                    text=FACTS["radium"])
                failed = await _call(mcp, "facts.element-facts", {"element": "iron"})
                assert failed == ToolOutput(text="Error executing tool element-facts: no facts about 'iron'",
                                            error=True)
            assert mcp.connections == []
            out = await _call(mcp, "facts.element-facts", {"element": "radium"})
            assert out == ToolOutput(text="MCP server 'facts' is not running", error=True)

    asyncio.run(run())


def test_a_server_that_cannot_start_is_a_config_error(tmp_path: Path) -> None:
    config = McpServerConfig(name="broken", command=(str(tmp_path / "no-such-program"),))

    async def run() -> None:
        async with McpTools([config]):
            pass  # pragma: no cover

    with pytest.raises(ConfigError) as info:
        asyncio.run(run())
    assert str(info.value).startswith(f"MCP server 'broken' ({tmp_path / 'no-such-program'}) failed to start: ")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The test MCP server over streamable HTTP on a free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = open(tmp_path / "http.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.mcp_server", "--http", str(port)], cwd=REPO,
                            stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60  # a readiness guard for a loaded machine, not a test of speed
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_streamable_http_server(http_server: str) -> None:
    async def run() -> None:
        async with McpTools(parse_servers([{"name": "web", "url": http_server}])) as mcp:
            assert [t.spec.name for t in mcp.tools] == ["element-facts"]
            assert await _call(mcp, "element-facts", {"element": "polonium"}) == ToolOutput(text=FACTS["polonium"])

    asyncio.run(run())
