"""The MCP tools, one module per family; each family's `tools(runner)` makes its tools.

A tool is its arguments (a schema an agent reads, refusing anything else), one core call run
by the `Runner`, and the answer in the JSON dialect (`vaultmem.dialect`), as the CLI prints it.
"""

from __future__ import annotations

from mcp.server.mcpserver.tools import Tool

from vaultmem.server.runner import Runner
from vaultmem.server.tools import capture, graph, memory, notes, personas, related, search

FAMILIES = (search, notes, related, graph, personas, memory, capture)


def all_tools(runner: Runner) -> list[Tool]:
    """Every tool of every family, in the order an agent sees them listed."""
    return [tool for family in FAMILIES for tool in family.tools(runner)]
