"""The `vaultmem` command line: options, one core call, output as text or JSON (the dialect).

`root` holds the group and `main`; each other module holds one family of commands and
registers them on the group (`register_commands`); `context` is what they share. Nothing here
imports Textual or the MCP SDK until `vaultmem tui` or `vaultmem mcp` runs.
"""

from vaultmem.cli.root import cli, main

__all__ = ["cli", "main"]
