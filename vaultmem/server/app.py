"""The MCP server itself: the `VaultServer`, its tools' and resources' registration, stdio."""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult, Resource, ToolAnnotations
from pydantic import Field

from vaultmem import __version__
from vaultmem.search import Mode
from vaultmem.server.running import Live, configure_logging, serving
from vaultmem.server.shapes import (
    BacklinksOut,
    ConnectionOut,
    GapsOut,
    NeighborsOut,
    NoteTextOut,
    PersonaContextOut,
    PersonasOut,
    SearchOut,
)
from vaultmem.server.tools import MAX_RESULTS, MAX_ROWS, Tools

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

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

# --------------------------------------------------------------------------- argument types

NoteRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="A note: its vault path ('projects/Heat pump.md'), title ('Heat pump') or an "
        "alias, matched case-insensitively.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=MAX_ROWS, description="At most this many rows.")]


# --------------------------------------------------------------------------- the server


_Fn = TypeVar("_Fn", bound=Callable[..., Any])


class VaultServer(MCPServer[Any]):
    """MCPServer whose resource list follows the vault's persona notes as they come and go."""

    def __init__(self, tools: Tools) -> None:
        super().__init__(
            "vaultmem",
            title="vaultmem",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
        )
        self.tools = tools

    def tool(  # type: ignore[override]
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> Callable[[_Fn], _Fn]:
        """As MCPServer.tool, with the docstring dedented into the description: a model reads
        it, and the SDK would pass on the source's indentation."""
        register = super().tool

        def decorate(fn: _Fn) -> _Fn:
            text = description or inspect.cleandoc(fn.__doc__ or "")
            return register(name=name, title=title, description=text, annotations=annotations)(fn)

        return decorate

    async def list_resources(self) -> list[Resource]:
        listed = list(await super().list_resources())
        try:
            personas = await self.tools.read(self.tools.personas)
        except ResourceError:
            return listed  # resources/list has no way to say why; the tools do
        for p in personas:
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


def build_server(vault: Vault, live: Live | None = None) -> VaultServer:
    """The MCP server over `vault`: tools, persona resources and instructions for agents."""
    tools = Tools(vault, live)
    server = VaultServer(tools)

    @server.tool(name="search", title="Search the vault", annotations=READ_ONLY)
    async def search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="What to look for, in plain words or a question. Dates in it "
                "('yesterday', 'last Monday', 'Feb 8', '2026-11-28') favour notes of that day.",
            ),
        ],
        mode: Annotated[
            Mode,
            Field(
                description="hybrid (default): words and meaning fused, best for most questions; "
                "keyword: exact words only (names, identifiers, error messages); "
                "semantic: meaning only (paraphrases, concepts)."
            ),
        ] = "hybrid",
        limit: Annotated[
            int, Field(ge=1, le=MAX_RESULTS, description="How many notes to return (best first).")
        ] = 10,
        tag: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Only notes with this tag, without '#'; a parent tag also matches "
                "nested tags ('project' matches 'project/alpha').",
            ),
        ] = None,
        path: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Only notes under this vault folder, e.g. 'projects/'.",
            ),
        ] = None,
        since: Annotated[
            dt.date | None,
            Field(description="Only notes dated (or changed) on or after this day, YYYY-MM-DD."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        """Search the vault's notes by words and meaning; one best-matching section per note.

        Each result has the note's path and title, the heading of the matching section, its
        line range, a snippet and a score. Read more of a hit with read_note(path, heading).
        """
        return await tools.answer(tools.search, query, mode, limit, tag, path, since)

    @server.tool(name="read_note", title="Read a note", annotations=READ_ONLY)
    async def read_note(
        ref: NoteRef,
        heading: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Read only the section under this heading (as in [[Note#Heading]]: "
                "case and punctuation do not matter; 'Plan#Risks' names a subheading). "
                "Omit to read the whole note.",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, NoteTextOut]:
        """Read a note's current text from disk: the whole note, or one section of it.

        The answer is the note's path and line range, then the markdown exactly as written
        (a separate block); its structured part lists the note's headings, to read another
        section next. Text past 200,000 characters is cut at a line end, and the answer says so.
        """
        return await tools.answer(tools.read_note, ref, heading)

    @server.tool(name="backlinks", title="Notes linking here", annotations=READ_ONLY)
    async def backlinks(ref: NoteRef, limit: Limit = 50) -> Annotated[CallToolResult, BacklinksOut]:
        """List the notes that link to a note, each with the line around the link."""
        return await tools.answer(tools.backlinks, ref, limit)

    @server.tool(name="find_connections", title="How two notes connect", annotations=READ_ONLY)
    async def find_connections(
        start: NoteRef,
        end: NoteRef,
        max_depth: Annotated[
            int, Field(ge=1, le=10, description="The longest chain of links to look for.")
        ] = 5,
        relations: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
            Field(
                max_length=20,
                description="Only walk links of these relations: links_to (body links), embeds, "
                "or a typed-link key such as depends_on. Omit to walk every link.",
            ),
        ] = None,
        directed: Annotated[
            bool, Field(description="Follow links only in the direction they were written.")
        ] = False,
    ) -> Annotated[CallToolResult, ConnectionOut]:
        """The shortest chain of links between two notes, each hop with its relation and
        direction ('-->' as written, '<--' walked backwards); when there is none, why not.

        A name that no note has but some notes link to (a wanted note) works too.
        """
        return await tools.answer(
            tools.find_connections, start, end, max_depth, relations, directed
        )

    @server.tool(name="neighbors", title="Notes around a note", annotations=READ_ONLY)
    async def neighbors(
        ref: NoteRef,
        depth: Annotated[
            int, Field(ge=1, le=3, description="How many links away to look (1: direct links).")
        ] = 1,
        limit: Limit = 50,
    ) -> Annotated[CallToolResult, NeighborsOut]:
        """The notes linked to or from a note (either direction), nearest first.

        kind is 'note', 'attachment', or 'wanted' (linked to but not written yet).
        """
        return await tools.answer(tools.neighbors, ref, depth, limit)

    @server.tool(name="knowledge_gaps", title="Where the vault is thin", annotations=READ_ONLY)
    async def knowledge_gaps(
        limit: Annotated[
            int, Field(ge=1, le=MAX_RESULTS, description="At most this many rows per list.")
        ] = 10,
    ) -> Annotated[CallToolResult, GapsOut]:
        """The knowledge-gap report: totals, then the first rows of each list.

        Orphans (no links in or out), dead ends (linked to, linking nowhere), wanted notes
        (linked to but not written, most wanted first), alias links Obsidian will not
        resolve, weakly linked notes, notes and links holding groups together, small isolated
        clusters, suggested links with their evidence, and notes past their decay tier.
        """
        return await tools.answer(tools.knowledge_gaps, limit)

    @server.tool(name="list_personas", title="List personas", annotations=READ_ONLY)
    async def list_personas() -> Annotated[CallToolResult, PersonasOut]:
        """The personas in the vault (persona notes): slug, title, role and context budget.

        Load one with persona_context(slug).
        """
        return await tools.answer(tools.list_personas)

    @server.tool(name="persona_context", title="Load a persona", annotations=READ_ONLY)
    async def persona_context(
        slug: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="The persona's slug (its file name in personas/, see list_personas) "
                "or one of its aliases.",
            ),
        ],
        budget: Annotated[
            int | None,
            Field(
                ge=200,
                le=200_000,
                description="How many characters of context to load; omit for the persona's "
                "own budget (its front matter, default 5000).",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, PersonaContextOut]:
        """Load a persona's memory as markdown: its note verbatim, then its facts, then the most
        relevant facts and sections of the notes it works with, cut to the budget.

        Call it once at the start of a session and keep the text at the top of your context:
        the same vault gives the same text, so prompt caches keep working. The last block says
        how much of the budget each part used.
        """
        return await tools.answer(tools.persona_context, slug, budget)

    @server.resource(
        "vaultmem://persona/{slug}",
        name="persona",
        title="Persona note",
        description="A persona note as written (markdown).",
        mime_type="text/markdown",
    )
    async def persona_note(slug: str) -> str:
        return await tools.read(tools.persona_note, slug)

    @server.resource(
        "vaultmem://persona/{slug}/context",
        name="persona-context",
        title="Persona context",
        description="A persona's loaded context at its own budget, as persona_context returns it.",
        mime_type="text/markdown",
    )
    async def persona_loaded(slug: str) -> str:
        return await tools.read(tools.persona_loaded, slug)

    return server


def run_stdio(vault: Vault) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    configure_logging()
    with serving(vault) as live:
        build_server(vault, live).run("stdio")
