"""A tiny MCP server for tests: one tool, ``element-facts``. Tests only.

Built with the SDK's FastMCP (named ``MCPServer`` since mcp 2). Run it as
``python -m tests.fakes.mcp_server`` (stdio) or with ``--http PORT`` (streamable HTTP on
127.0.0.1 at ``/mcp``). An unknown element makes the tool raise ``ToolError``, which the
server reports as a tool error (``is_error``) carrying the message.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

FACTS = {
    "polonium": "Polonium (Po, atomic number 84) was discovered in 1898 by Marie and Pierre Curie.",
    "radium": "Radium (Ra, atomic number 88) was discovered in 1898 by Marie and Pierre Curie.",
}

server = MCPServer("provgraph-test-tools", log_level="ERROR")


@server.tool(name="element-facts", description="Short facts about a chemical element, by name.")
def element_facts(element: str) -> str:
    """The facts about ``element``; raises for an element it does not know."""
    key = element.strip().lower()
    if key not in FACTS:
        raise ToolError(f"no facts about {element!r}")
    return FACTS[key]


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
