"""The MCP server: the vault's read tools and persona resources for agents (the one MCP SDK user).

A thin front-end over `Vault`, like the CLI: each tool is its arguments (a JSON schema an agent
reads), one core call, and the answer as JSON (markdown for note text and persona context).
`VaultmemError` becomes a tool error carrying the message the CLI prints; anything else is a bug,
logged to stderr with its traceback (stdout is the stdio transport: nothing else may write there).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hmac
import ipaddress
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar

import networkx as nx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    CallToolResult,
    Resource,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from typing_extensions import TypedDict  # pydantic reads field types only from this one on 3.11

from vaultmem import __version__
from vaultmem import graph as link_graph
from vaultmem.errors import NoIndex, NoteNotFound, UsageError, VaultmemError
from vaultmem.gaps import gaps_report
from vaultmem.persona import PersonaInfo, list_personas, load_persona
from vaultmem.search import Mode, plain

if TYPE_CHECKING:
    from vaultmem.indexer import ReindexReport
    from vaultmem.live import Freshness
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 48400
MAX_BODY_BYTES = 1024 * 1024  # a tool call's arguments are a few hundred bytes
MAX_RESULTS = 50  # search hits per call
MAX_ROWS = 200  # backlinks or neighbours per call
MAX_NOTE_CHARS = 200_000  # read_note cuts longer text at a line end and says how to read less
TOOL_THREADS = 2  # one answers while another waits on a reindex or a long gaps report
STARTUP_WAIT = 120.0  # seconds a first call waits for the start-up catch-up reindex
FIRST_CALL_GRACE = 2.0  # the watcher starts after the first answer, or after this many seconds

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

P = ParamSpec("P")
R = TypeVar("R")

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


# --------------------------------------------------------------------------- output shapes


class SearchHitOut(TypedDict):
    path: str
    title: str
    heading: str
    start_line: int
    end_line: int
    snippet: str
    score: float


class SearchOut(TypedDict):
    query: str
    mode: str
    results: list[SearchHitOut]
    notices: list[str]


class NoteTextOut(TypedDict):
    """Where the text came from; the text itself is the answer's second content block only
    (a note can be long: sending it twice would double what a client reads and pays for)."""

    path: str
    title: str
    heading: str | None
    start_line: int
    end_line: int
    chars: int
    truncated: bool
    headings: list[str]  # every heading of the note, to read another section next


class PersonaContextOut(TypedDict):
    """What a loaded persona is made of; its markdown is the answer's first content block."""

    slug: str
    path: str
    role: str
    budget: int
    used: int
    over_budget: bool
    usage: dict[str, int]
    left_out: list[str]
    parts: list[PersonaPartOut]


class PersonaPartOut(TypedDict):
    kind: str
    source: str
    heading: str | None
    chars: int


class BacklinkOut(TypedDict):
    path: str
    line: int
    relation: str
    anchor: str | None
    context: str


class BacklinksOut(TypedDict):
    note: str
    total: int
    backlinks: list[BacklinkOut]


class NodeOut(TypedDict):
    id: str
    title: str
    kind: str


class HopOut(TypedDict):
    src: str
    dst: str
    dst_title: str
    relation: str
    direction: Literal["-->", "<--"]


class EndOut(TypedDict):
    id: str
    linked_notes: int
    group_size: int


class ConnectionOut(TypedDict):
    start: NodeOut
    end: NodeOut
    found: bool
    hops: list[HopOut]
    why_not: str | None
    ends: list[EndOut]


class NeighborOut(TypedDict):
    id: str
    title: str
    kind: str
    distance: int


class NeighborsOut(TypedDict):
    note: str
    depth: int
    total: int
    neighbors: list[NeighborOut]


class WantedOut(TypedDict):
    name: str
    wanted_by: int
    linked_from: list[str]


class AliasLinkOut(TypedDict):
    path: str
    line: int
    written: str
    fix: str | None


class SuggestionOut(TypedDict):
    source: str
    target: str
    evidence: str


class GapsOut(TypedDict):
    notes: int
    totals: dict[str, int]
    orphans: list[str]
    dead_ends: list[str]
    wanted: list[WantedOut]
    alias_fixable: list[AliasLinkOut]
    weakly_linked: list[str]
    articulation_points: list[str]
    bridges: list[list[str]]
    isolated_clusters: list[list[str]]
    suggestions: list[SuggestionOut]
    expired: list[str]


class PersonaOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str | None
    budget: int
    aliases: list[str]


class PersonasOut(TypedDict):
    personas: list[PersonaOut]


# --------------------------------------------------------------------------- answers


def _answer(data: Any, text: str | None = None) -> CallToolResult:
    """A tool result: `data` as structured content, and as the text a model reads."""
    shown = text if text is not None else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=shown)], structured_content=data)


def _failure(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


@dataclass
class Live:
    """What keeps a running server's answers current: the start-up catch-up, then the watcher."""

    freshness: Freshness
    ready: threading.Event = field(default_factory=threading.Event)  # caught up with edits
    answered: threading.Event = field(default_factory=threading.Event)  # a first call is done
    watching: threading.Event = field(default_factory=threading.Event)  # the watcher runs
    closed: threading.Event = field(default_factory=threading.Event)  # the server is stopping

    caught_up_at: float = 0.0  # time.monotonic() of the last catch-up

    def refresh(self) -> ReindexReport | None:
        """Reindex if notes changed (a first call waits for the start-up catch-up)."""
        self.ready.wait(STARTUP_WAIT)
        if not self.watching.is_set() and time.monotonic() - self.caught_up_at > 1.0:
            self.freshness.mark_changed()  # no watcher yet to say whether anything changed
        return self.freshness.ensure_fresh()


@dataclass
class _Tools:
    """The tool bodies, bound to one vault (and what keeps it fresh, when the server runs)."""

    vault: Vault
    live: Live | None = None
    # Tool bodies run on these threads, not on whichever of the event loop's dozens of workers
    # is free: each thread has its own SQLite connection and page cache, and on MDN a cold
    # one added ~8 ms to every search.
    pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(TOOL_THREADS, thread_name_prefix="vaultmem-tool")
    )

    async def answer(
        self, body: Callable[P, CallToolResult], *args: P.args, **kwargs: P.kwargs
    ) -> CallToolResult:
        """Run a tool body on a fresh index, turning VaultmemError into a tool error."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, partial(self._answer, body, *args, **kwargs))

    def _answer(
        self, body: Callable[P, CallToolResult], *args: P.args, **kwargs: P.kwargs
    ) -> CallToolResult:
        try:
            self.fresh()
            return body(*args, **kwargs)
        except VaultmemError as exc:
            return _failure(str(exc))
        finally:
            if self.live is not None:
                self.live.answered.set()

    async def read(self, body: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Read a resource on a fresh index, turning VaultmemError into a resource error."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, partial(self._read, body, *args, **kwargs))

    def _read(self, body: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            self.fresh()
            return body(*args, **kwargs)
        except VaultmemError as exc:
            if isinstance(exc, NoteNotFound):
                raise ResourceNotFoundError(str(exc)) from exc
            raise ResourceError(str(exc)) from exc

    def fresh(self) -> None:
        """Reindex first when notes changed on disk, so every answer reflects the files."""
        if self.live is not None:
            report = self.live.refresh()
            if report is not None:
                log.info("reindexed after edits: %s", report.summary())

    def search(
        self,
        query: str,
        mode: Mode,
        limit: int,
        tag: str | None,
        path: str | None,
        since: dt.date | None,
    ) -> CallToolResult:
        result = self.vault.search(query, limit=limit, mode=mode, tag=tag, path=path, since=since)
        hits: list[SearchHitOut] = [
            {
                "path": h.path,
                "title": h.title,
                "heading": h.header,
                "start_line": h.start_line,
                "end_line": h.end_line,
                "snippet": " ".join(plain(h.snippet).split()),
                "score": round(h.score, 4),
            }
            for h in result.hits
        ]
        out: SearchOut = {
            "query": query,
            "mode": result.mode,
            "results": hits,
            "notices": list(result.notices),
        }
        return _answer(out)

    def read_note(self, ref: str, heading: str | None) -> CallToolResult:
        note = self.vault.read_note(ref, heading)
        text, end_line, truncated = note.text, note.end_line, False
        if len(text) > MAX_NOTE_CHARS:
            kept = text[:MAX_NOTE_CHARS].rsplit("\n", 1)[0]
            end_line = note.start_line + kept.count("\n")
            text, truncated = kept, True
        out: NoteTextOut = {
            "path": note.path,
            "title": note.title,
            "heading": note.heading,
            "start_line": note.start_line,
            "end_line": end_line,
            "chars": len(text),
            "truncated": truncated,
            "headings": list(note.headings[:MAX_ROWS]),
        }
        where = f"{note.path}, lines {note.start_line}-{end_line}"
        if note.heading:
            where += f", section '{note.heading}'"
        blocks = [where, text]
        if truncated:
            blocks.append(
                f"[cut at line {end_line} of {note.end_line}: pass a heading to read one section]"
            )
        return CallToolResult(
            content=[TextContent(type="text", text=b) for b in blocks], structured_content=out
        )

    def backlinks(self, ref: str, limit: int) -> CallToolResult:
        path = self.vault.find_note(ref)
        found = self.vault.backlinks(path)
        rows: list[BacklinkOut] = [
            {
                "path": b.src_path,
                "line": b.line,
                "relation": b.relation,
                "anchor": b.anchor,
                "context": b.context,
            }
            for b in found[:limit]
        ]
        out: BacklinksOut = {"note": path, "total": len(found), "backlinks": rows}
        return _answer(out)

    def find_connections(
        self,
        start: str,
        end: str,
        max_depth: int,
        relations: list[str] | None,
        directed: bool,
    ) -> CallToolResult:
        G = self.vault.graph()
        a, b = self.vault.node(start), self.vault.node(end)
        result = link_graph.shortest_path(
            G, a, b, max_depth=max_depth, relations=relations or None, directed=directed
        )
        out: ConnectionOut = {
            "start": _node(G, a),
            "end": _node(G, b),
            "found": isinstance(result, link_graph.PathResult),
            "hops": [],
            "why_not": None,
            "ends": [],
        }
        if isinstance(result, link_graph.PathResult):
            out["hops"] = [
                {
                    "src": hop.src,
                    "dst": hop.dst,
                    "dst_title": _title(G, hop.dst),
                    "relation": hop.relation,
                    "direction": hop.direction,
                }
                for hop in result.hops
            ]
            return _answer(out)
        out["ends"] = [
            {
                "id": a,
                "linked_notes": result.start_degree,
                "group_size": result.start_component_size,
            },
            {"id": b, "linked_notes": result.end_degree, "group_size": result.end_component_size},
        ]
        if result.connected:
            out["why_not"] = (
                f"they are linked, but not within {max_depth} hops"
                + (" along those relations" if relations else "")
                + (" following links only as written" if directed else "")
                + ": try a larger max_depth"
                + (", fewer relations" if relations else "")
                + (" or directed=false" if directed else "")
            )
        else:
            out["why_not"] = "no chain of links joins them: they are in separate groups of notes"
        return _answer(out)

    def neighbors(self, ref: str, depth: int, limit: int) -> CallToolResult:
        G = self.vault.graph()
        node = self.vault.node(ref)
        found = link_graph.neighbors(G, node, depth=depth)
        rows: list[NeighborOut] = [
            {**_node(G, other), "distance": distance} for other, distance in found[:limit]
        ]
        out: NeighborsOut = {"note": node, "depth": depth, "total": len(found), "neighbors": rows}
        return _answer(out)

    def knowledge_gaps(self, limit: int) -> CallToolResult:
        report = gaps_report(self.vault)
        G = self.vault.graph()
        out: GapsOut = {
            "notes": report.notes,
            "totals": report.totals(),
            "orphans": list(report.orphans[:limit]),
            "dead_ends": list(report.dead_ends[:limit]),
            "wanted": [
                {
                    "name": w.name,
                    "wanted_by": len(w.linked_from),
                    "linked_from": list(w.linked_from[:5]),
                }
                for w in report.wanted[:limit]
            ],
            "alias_fixable": [
                {"path": p.src_path, "line": p.line, "written": p.written, "fix": p.fix}
                for p in report.alias_fixable[:limit]
            ],
            "weakly_linked": list(report.weakly_linked[:limit]),
            "articulation_points": [n for n, _ in report.articulation_points[:limit]],
            "bridges": [[a, b] for a, b in report.bridges[:limit]],
            "isolated_clusters": [list(c) for c in report.isolated_clusters[:limit]],
            "suggestions": [
                {
                    "source": s.source,
                    "target": _title(G, s.target) if s.target in G else s.target,
                    "evidence": s.evidence,
                }
                for s in report.suggestions[:limit]
            ],
            "expired": [e.path for e in report.expired[:limit]],
        }
        return _answer(out)

    def list_personas(self) -> CallToolResult:
        out: PersonasOut = {
            "personas": [
                {
                    "slug": p.slug,
                    "path": p.path,
                    "title": p.title,
                    "role": p.role,
                    "budget": p.budget,
                    "aliases": list(p.aliases),
                }
                for p in list_personas(self.vault)
            ]
        }
        return _answer(out)

    def persona_context(self, slug: str, budget: int | None) -> CallToolResult:
        context = load_persona(self.vault, slug, budget)
        usage = context.usage()
        parts = ", ".join(f"{name} {chars}" for name, chars in usage.items())
        footer = f"[persona {context.slug}: {context.used} of {context.budget} characters ({parts})"
        if context.left_out:
            footer += f"; {len(context.left_out)} left out for the budget"
        out: PersonaContextOut = {
            "slug": context.slug,
            "path": context.path,
            "role": context.role,
            "budget": context.budget,
            "used": context.used,
            "over_budget": context.over_budget,
            "usage": usage,
            "left_out": list(context.left_out),
            "parts": [
                {"kind": p.kind, "source": p.source, "heading": p.heading, "chars": p.chars}
                for p in context.parts
            ],
        }
        return CallToolResult(
            content=[
                TextContent(type="text", text=context.to_markdown()),
                TextContent(type="text", text=footer + "]"),
            ],
            structured_content=out,
        )

    def personas(self) -> tuple[PersonaInfo, ...]:
        return list_personas(self.vault)

    def persona_note(self, slug: str) -> str:
        named = next((p for p in list_personas(self.vault) if p.slug == slug), None)
        # An alias finds its persona the way persona_context finds it.
        path = named.path if named else load_persona(self.vault, slug, None).path
        return self.vault.read_note(path).text

    def persona_loaded(self, slug: str) -> str:
        return load_persona(self.vault, slug, None).to_markdown()


def _title(G: nx.DiGraph, node: str) -> str:
    return str(G.nodes[node]["title"])


def _node(G: nx.DiGraph, node: str) -> NodeOut:
    data = G.nodes[node]
    return {"id": node, "title": str(data["title"]), "kind": str(data["kind"])}


# --------------------------------------------------------------------------- the server


class VaultServer(MCPServer[Any]):
    """MCPServer whose resource list follows the vault's persona notes as they come and go."""

    def __init__(self, tools: _Tools) -> None:
        super().__init__(
            "vaultmem",
            title="vaultmem",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
        )
        self.tools = tools

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
    tools = _Tools(vault, live)
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


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def serving(vault: Vault) -> Iterator[Live]:
    """Ready a vault for a long-running server: an index, a file watcher, and in the
    background the catch-up on edits made while no server ran, the embedding model and the
    vectors in memory (a first call waits for the catch-up only)."""
    from vaultmem.live import Freshness

    try:
        vault.conn  # noqa: B018 - opening the index checks that it exists and its schema
    except NoIndex:
        log.info("no index for %s yet: building it once (text and vectors)", vault.root)
        report = vault.reindex()
        log.info("indexed: %s", report.summary())
    freshness = Freshness(vault)
    live = Live(freshness)

    def prepare() -> None:
        # One thread, one step after another, and only the catch-up before the first answer:
        # on two cores, threads fighting for the GIL (setting up inotify watches on every
        # folder, loading the vectors) made the first answer wait for all of them.
        freshness.mark_changed()  # catch up with edits made while no server ran
        catch_up()
        live.ready.set()
        try:
            vault.embedder().embed(["vaultmem"])  # loads the model (it loads on first use)
        except VaultmemError as exc:  # search says so itself, and falls back to keywords
            log.warning("embedding model not ready: %s", exc)
        if live.answered.wait(FIRST_CALL_GRACE):
            # The answer is still being serialised and written: setting up the watches holds
            # the GIL for a while, and would hold the first answer back with it.
            live.closed.wait(0.5)
        if live.closed.is_set():
            return
        freshness.start(check_now=True)
        freshness.ready.wait(STARTUP_WAIT)
        catch_up()  # what changed between the first catch-up and the watcher's start
        live.watching.set()
        if not live.closed.is_set():
            vault.warm(background=False)

    def catch_up() -> None:
        try:
            report = freshness.ensure_fresh()
            live.caught_up_at = time.monotonic()
            if report is not None and report.changed + report.removed:
                log.info("caught up with edits: %s", report.summary())
        except VaultmemError as exc:  # the next call retries and reports it
            log.warning("could not catch up with edits yet: %s", exc)

    preparing = threading.Thread(target=prepare, name="vaultmem-prepare", daemon=True)
    preparing.start()
    try:
        yield live
    finally:
        live.closed.set()
        live.answered.set()  # no first call is coming: let the preparation finish
        preparing.join(timeout=STARTUP_WAIT)
        freshness.stop()


def configure_logging() -> None:
    """Plain records on stderr (stdout is the stdio transport): ours from INFO, the SDK's from
    WARNING (it would log every request)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vaultmem mcp: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("vaultmem").setLevel(logging.INFO)


def run_stdio(vault: Vault) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    configure_logging()
    with serving(vault) as live:
        build_server(vault, live).run("stdio")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise UsageError(
            f"refusing to serve the vault on {host} without a token: anyone who can reach it "
            "could read every note. Pass --token SECRET (or set VAULTMEM_MCP_TOKEN), or bind "
            f"{DEFAULT_HOST}"
        )


def allowed_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> list[str]:
    """Host header values a request may carry: the bind address and localhost forms, with port."""
    names = {"127.0.0.1", "localhost", "[::1]", *extra}
    if host not in ("0.0.0.0", "::"):
        names.add(f"[{host}]" if ":" in host else host)
    out = []
    for name in sorted(names):
        out += [name, f"{name}:{port}"]
    return out


class Gate:
    """Checks every HTTP request before the app sees it: Host (DNS rebinding), then the token.

    `GET /health` needs no token (it tells nothing about the vault), but still a good Host.
    """

    def __init__(self, app: ASGIApp, hosts: list[str], token: str | None) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = {f"{scheme}://{h}" for h in self.hosts for scheme in ("http", "https")}
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = request.headers.get("host", "").lower()
        if host not in self.hosts:
            await _refuse(421, f"unexpected Host header {host!r}")(scope, receive, send)
            return
        origin = request.headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            await _refuse(403, f"unexpected Origin {origin!r}")(scope, receive, send)
            return
        if self.expected is not None and scope["path"] != "/health":
            given = request.headers.get("authorization", "").encode()
            # compare_digest takes time independent of where the strings differ.
            if not hmac.compare_digest(given, self.expected):
                response = _refuse(
                    401, "a valid 'Authorization: Bearer <token>' header is required"
                )
                response.headers["WWW-Authenticate"] = 'Bearer realm="vaultmem"'
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _refuse(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def http_app(
    server: VaultServer,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    extra_hosts: tuple[str, ...] = (),
    max_body: int = MAX_BODY_BYTES,
) -> ASGIApp:
    """The streamable-HTTP app: MCP at /mcp, `GET /health`, behind the Host and token gate."""
    check_bind(host, token)
    hosts = allowed_hosts(host, port, extra_hosts)

    @server.custom_route("/health", methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "server": "vaultmem", "version": __version__})

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{s}://{h}" for h in hosts for s in ("http", "https")],
    )
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        max_request_body_size=max_body,
        host=host,
    )
    return Gate(app, hosts, token)


def run_http(
    vault: Vault,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    extra_hosts: tuple[str, ...] = (),
) -> None:
    """Serve MCP over streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    configure_logging()
    check_bind(host, token)  # before indexing: a refused start should be quick
    with serving(vault) as live:
        app = http_app(build_server(vault, live), host, port, token, extra_hosts)
        log.info("serving %s at http://%s:%d/mcp", vault.root, host, port)
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
