"""The MCP server itself: the `VaultServer` with every family's tools, persona resources, stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import CallToolResult, InputRequiredResult, Resource
from pydantic import ValidationError

from vaultmem import __version__
from vaultmem.server.arguments import plainly
from vaultmem.server.runner import Runner
from vaultmem.server.running import Live, configure_logging, serving
from vaultmem.server.tools import all_tools, personas

if TYPE_CHECKING:
    from vaultmem.vault import Vault

INSTRUCTIONS = """\
vaultmem serves a person's Obsidian-style markdown vault as memory: notes, the links between \
them, and personas (persona notes with the facts and notes they rely on).

At the start of a session, if you act as a persona (or the user names one), call \
list_personas once and then persona_context with its slug; keep that text at the top of your \
context: it is stable, so prompt caches keep working. Then use search to find notes (hybrid \
by default: words and meaning), read_note to read a whole note or one section (the heading \
from a search hit), backlinks / neighbors / find_connections to follow links, and \
knowledge_gaps to see what is missing or poorly linked. Every tool is read-only; note paths \
are vault-relative.
"""


class VaultServer(MCPServer[Any]):
    """MCPServer whose resource list follows the vault's persona notes as they come and go."""

    def __init__(self, runner: Runner, tools: list[Tool]) -> None:
        super().__init__(
            "vaultmem",
            title="vaultmem",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            tools=tools,
        )
        self.runner = runner
        # each tool's argument names, as its input schema lists them: said when one is unknown
        self.arguments = {t.name: list(t.parameters.get("properties", {})) for t in tools}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool as the SDK does, but say refused arguments plainly (`limit: must be at
        most 50 (got 500)`) instead of pydantic's report, with its error types and links."""
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            refused = exc.__cause__
            if not isinstance(refused, ValidationError) or name not in self.arguments:
                raise
            raise ToolError(plainly(refused, self.arguments[name])) from refused

    async def list_resources(self) -> list[Resource]:
        listed = list(await super().list_resources())
        try:
            found = await self.runner.read(personas.personas, self.runner.vault)
        except ResourceError:
            return listed  # resources/list has no way to say why; the tools do
        for p in found:
            listed.append(
                Resource(
                    uri=f"vaultmem://persona/{p.slug}",
                    name=p.slug,
                    title=p.title,
                    description=f"The persona note of {p.title}"
                    + (f" ({p.role})" if p.role else ""),
                    mime_type="text/markdown",
                )
            )
        return listed

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout as the SDK does, but answer a line that is not a JSON-RPC
        message (not JSON, a lone surrogate, nesting too deep) with a JSON-RPC error: the SDK
        drops it without a word, and the client waits for an answer forever."""
        lowlevel = self._lowlevel_server
        async with stdio_server() as (read_stream, write_stream):
            send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def answer_malformed() -> None:
                async with send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(malformed_reply(item)))
                        else:
                            await send.send(item)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_malformed)
                await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())


def malformed_reply(problem: Exception) -> mcp_types.JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message: a parse error
    when it is not JSON, else an invalid request (its id unknown, so null, as JSON-RPC says)."""
    not_json = isinstance(problem, ValidationError) and any(
        e["type"] == "json_invalid" for e in problem.errors()
    )
    code, what = (
        (mcp_types.PARSE_ERROR, "Parse error: the line is not JSON")
        if not_json
        else (mcp_types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message")
    )
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    detail = str(errors[0]["msg"]) if errors else str(problem)
    message = what + (f" ({detail[:200]})" if detail else "")
    return mcp_types.JSONRPCError(
        jsonrpc="2.0", id=None, error=mcp_types.ErrorData(code=code, message=message)
    )


def build_server(vault: Vault, live: Live | None = None) -> VaultServer:
    """The MCP server over `vault`: tools, persona resources and instructions for agents."""
    runner = Runner(vault, live)
    server = VaultServer(runner, all_tools(runner))

    @server.resource(
        "vaultmem://persona/{slug}",
        name="persona",
        title="Persona note",
        description="A persona note as written (markdown).",
        mime_type="text/markdown",
    )
    async def persona_note(slug: str) -> str:
        return await runner.read(personas.persona_note, vault, slug)

    @server.resource(
        "vaultmem://persona/{slug}/context",
        name="persona-context",
        title="Persona context",
        description="A persona's loaded context at its own budget, as persona_context returns it.",
        mime_type="text/markdown",
    )
    async def persona_loaded(slug: str) -> str:
        return await runner.read(personas.persona_loaded, vault, slug)

    return server


def run_stdio(vault: Vault) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    configure_logging()
    with serving(vault) as live:
        build_server(vault, live).run("stdio")
