"""The tool bodies over the core `Vault` API: on their own threads, `VaultmemError` translated."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import networkx as nx
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, TextContent

from vaultmem import graph as link_graph
from vaultmem.errors import NoteNotFound, VaultmemError
from vaultmem.gaps import gaps_report
from vaultmem.persona import PersonaInfo, find_persona, list_personas, load_persona
from vaultmem.search import Mode, plain
from vaultmem.server.running import Live
from vaultmem.server.shapes import (
    BacklinkOut,
    BacklinksOut,
    ConnectionOut,
    GapsOut,
    NeighborOut,
    NeighborsOut,
    NodeOut,
    NoteTextOut,
    PersonaContextOut,
    PersonasOut,
    SearchHitOut,
    SearchOut,
)

if TYPE_CHECKING:
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

MAX_RESULTS = 50  # search hits per call
MAX_ROWS = 200  # backlinks or neighbours per call
MAX_NOTE_CHARS = 200_000  # read_note cuts longer text at a line end and says how to read less
TOOL_THREADS = 2  # one answers while another waits on a reindex or a long gaps report

P = ParamSpec("P")
R = TypeVar("R")


def _answer(data: Any, text: str | None = None) -> CallToolResult:
    """A tool result: `data` as structured content, and as the text a model reads."""
    shown = text if text is not None else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=shown)], structured_content=data)


def _failure(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


@dataclass
class Tools:
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
        # by slug or alias, the way persona_context finds it
        return self.vault.read_note(find_persona(self.vault, slug).path).text

    def persona_loaded(self, slug: str) -> str:
        return load_persona(self.vault, slug, None).to_markdown()


def _title(G: nx.DiGraph, node: str) -> str:
    return str(G.nodes[node]["title"])


def _node(G: nx.DiGraph, node: str) -> NodeOut:
    data = G.nodes[node]
    return {"id": node, "title": str(data["title"]), "kind": str(data["kind"])}
