"""The MCP server: the vault's read tools and persona resources for agents (the one MCP SDK user).

A thin front-end over `Vault`, like the CLI: each tool is its arguments (a JSON schema an agent
reads, refusing anything else), one core call, and the answer in the JSON dialect the CLI's
`--json` prints (`vaultmem.dialect`; markdown for note text and persona context).
`VaultmemError` becomes a tool error carrying the message the CLI prints; anything else is a
bug, logged to stderr with its traceback (stdout is the stdio transport: nothing else may write
there).

`tools/` holds the tools, a module per family (search, notes, graph, personas); `schema` what
they share (annotations, argument types, the strict input schema); `arguments` says refused
arguments plainly; `runner` runs their bodies on the server's threads; `running` keeps a
running server current (and says, call after call, why an index cannot be used, until it can);
`app` is the server and its resources (and stdio); `http` the streamable-HTTP transport behind
its gate.
"""

from vaultmem.server.app import INSTRUCTIONS, VaultServer, build_server, run_stdio
from vaultmem.server.http import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    MAX_BODY_BYTES,
    Gate,
    allowed_hosts,
    check_bind,
    http_app,
    is_loopback,
    run_http,
)
from vaultmem.server.runner import TOOL_THREADS, Runner
from vaultmem.server.running import (
    FIRST_CALL_GRACE,
    STARTUP_WAIT,
    Live,
    configure_logging,
    serving,
)
from vaultmem.server.schema import MAX_NOTE_CHARS, MAX_RESULTS, MAX_ROWS, READ_ONLY

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "FIRST_CALL_GRACE",
    "INSTRUCTIONS",
    "MAX_BODY_BYTES",
    "MAX_NOTE_CHARS",
    "MAX_RESULTS",
    "MAX_ROWS",
    "READ_ONLY",
    "STARTUP_WAIT",
    "TOOL_THREADS",
    "Gate",
    "Live",
    "Runner",
    "VaultServer",
    "allowed_hosts",
    "build_server",
    "check_bind",
    "configure_logging",
    "http_app",
    "is_loopback",
    "run_http",
    "run_stdio",
    "serving",
]
