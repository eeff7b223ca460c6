"""The one JSON dialect of every `--json` and every MCP tool: core values in, JSON objects out.

docs/json.md is its contract. The CLI and the MCP server both build their JSON here, so the same
thing has the same key everywhere; the TypedDicts are the shapes (the MCP tools' output
schemas are made from them). The core never builds JSON for a front-end.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, Literal

import networkx as nx
from typing_extensions import TypedDict  # pydantic reads these on Python 3.11

from vaultmem import graph as link_graph
from vaultmem.gaps import GapsReport
from vaultmem.indexer import ReindexReport
from vaultmem.model import title_of
from vaultmem.persona import PersonaContext, PersonaInfo
from vaultmem.search import SearchResult, plain
from vaultmem.vault import Backlink, DoctorReport, LinkProblem, NoteInfo, NoteText, Stats

# --------------------------------------------------------------------------- notes and nodes


class NoteRef(TypedDict):
    """A note (or attachment) as every answer names it: its vault path, its title beside it."""

    path: str
    title: str


class NodeOut(TypedDict):
    """A node of the link graph; a wanted note (linked to, not written yet) has no path."""

    path: str | None
    title: str
    kind: str  # note, attachment or wanted


def note(path: str) -> NoteRef:
    return {"path": path, "title": title_of(path)}


def notes(paths: Sequence[str]) -> list[NoteRef]:
    return [note(p) for p in paths]


def node(graph_node: link_graph.GraphNode) -> NodeOut:
    wanted = graph_node.kind == "wanted"
    return {
        "path": None if wanted else graph_node.id,
        "title": graph_node.title,
        "kind": graph_node.kind,
    }


def _limited(rows: Sequence[Any], limit: int | None) -> Sequence[Any]:
    return rows if limit is None else rows[:limit]


def _heading(text: str | None) -> str | None:
    return text or None  # a section before any heading has none: null, never ""


# --------------------------------------------------------------------------- search


class DatesOut(TypedDict):
    since: str  # the first day a query's date words name (ISO)
    until: str  # the last day (ISO), inclusive
    phrase: str  # the words that named them


class SearchHitOut(TypedDict):
    path: str
    title: str
    heading: str | None  # the section's heading path ("Plan > Risks"); null before any heading
    start_line: int
    end_line: int
    score: float
    snippet: str  # the section's text around the match, whitespace collapsed


class ExplainedHitOut(SearchHitOut):
    explain: dict[str, float]  # what each signal added to the score (`--explain`)


class SearchOut(TypedDict):
    query: str
    mode: str  # the mode that ran: keyword when meaning search fell back (see notices)
    notices: list[str]
    dates: DatesOut | None
    results: list[SearchHitOut]


def search_result(result: SearchResult, explain: bool = False) -> SearchOut:
    hits: list[SearchHitOut] = []
    for h in result.hits:
        hit: SearchHitOut = {
            "path": h.path,
            "title": h.title,
            "heading": _heading(h.header),
            "start_line": h.start_line,
            "end_line": h.end_line,
            "score": round(h.score, 4),
            "snippet": " ".join(plain(h.snippet).split()),
        }
        if explain:
            hit = ExplainedHitOut(**hit, explain={k: round(v, 4) for k, v in h.explain})
        hits.append(hit)
    route = result.route
    dates: DatesOut | None = None
    if route is not None:
        dates = {
            "since": route.start.isoformat(),
            "until": route.end.isoformat(),
            "phrase": route.phrase,
        }
    return {
        "query": result.query,
        "mode": result.mode,
        "notices": list(result.notices),
        "dates": dates,
        "results": hits,
    }


def openclaw_search(result: SearchResult, explain: bool = False) -> dict[str, Any]:
    """The enhanced-memory / OpenClaw shape (`search --format openclaw`), outside the dialect:
    `{query, results: [{path, startLine, endLine, score, snippet, header}]}`."""
    results = []
    for h in result.hits:
        row: dict[str, Any] = {
            "path": h.path,
            "startLine": h.start_line,
            "endLine": h.end_line,
            "score": round(h.score, 4),
            "snippet": plain(h.snippet),
            "header": h.header,
        }
        if explain:
            row["explain"] = {k: round(v, 4) for k, v in h.explain}
        results.append(row)
    return {"query": result.query, "results": results}


# --------------------------------------------------------------------------- one note


class SectionOut(TypedDict):
    heading: str
    level: int
    start_line: int
    end_line: int


class OutgoingLinkOut(TypedDict):
    line: int
    written: str  # the link as it reads in the note, normalised
    target: str  # its target as written
    heading: str | None
    block: str | None
    display: str | None
    relation: str
    kind: str  # wiki, markdown or property
    embed: bool
    status: str  # resolved, ambiguous, missing-anchor, wanted or alias-fixable
    to: NoteRef | None  # the file it resolves to; null when it resolves to none
    candidates: list[NoteRef]  # every file the name matched, when several did
    fix: str | None  # the rewrite `gaps fix-aliases` would make


class BacklinkOut(TypedDict):
    path: str  # the note the link is in
    title: str
    line: int
    relation: str
    anchor: str | None  # the heading or ^block the link points into
    context: str  # the linking line


class TaskOut(TypedDict):
    line: int
    status: str
    text: str
    due: str | None
    priority: str | None


class NoteOut(TypedDict):
    path: str
    title: str
    kind: str
    bytes: int
    line_count: int
    date: str | None
    aliases: list[str]
    tags: list[str]
    frontmatter: dict[str, Any]
    warnings: list[str]
    sections: list[SectionOut]
    outgoing: list[OutgoingLinkOut]
    backlinks: list[BacklinkOut]
    tasks: list[TaskOut]


def backlink(b: Backlink) -> BacklinkOut:
    return {
        "path": b.src_path,
        "title": title_of(b.src_path),
        "line": b.line,
        "relation": b.relation,
        "anchor": b.anchor,
        "context": b.context,
    }


def note_info(info: NoteInfo) -> NoteOut:
    return {
        "path": info.path,
        "title": info.title,
        "kind": info.kind,
        "bytes": info.size,
        "line_count": info.line_count,
        "date": info.date,
        "aliases": list(info.aliases),
        "tags": list(info.tags),
        "frontmatter": dict(info.frontmatter),
        "warnings": list(info.warnings),
        "sections": [
            {"heading": h.text, "level": h.level, "start_line": h.line, "end_line": h.end_line}
            for h in info.headings
        ],
        "outgoing": [
            {
                "line": link.line,
                "written": link.written,
                "target": link.target,
                "heading": link.heading,
                "block": link.block,
                "display": link.display,
                "relation": link.relation,
                "kind": link.kind,
                "embed": link.embed,
                "status": link.status,
                "to": None if link.dst_path is None else note(link.dst_path),
                "candidates": notes(link.candidates),
                "fix": link.alias_fix,
            }
            for link in info.links
        ],
        "backlinks": [backlink(b) for b in info.backlinks],
        "tasks": [
            {
                "line": t.line,
                "status": t.status,
                "text": t.text,
                "due": t.due,
                "priority": t.priority,
            }
            for t in info.tasks
        ],
    }


class BacklinksOut(TypedDict):
    path: str  # the note linked to
    title: str
    total: int  # every backlink, however many are listed
    backlinks: list[BacklinkOut]


def backlinks(path: str, found: Sequence[Backlink], limit: int | None = None) -> BacklinksOut:
    return {
        "path": path,
        "title": title_of(path),
        "total": len(found),
        "backlinks": [backlink(b) for b in _limited(found, limit)],
    }


class NoteTextOut(TypedDict):
    """Where a note's text came from (MCP `read_note`; the text is its own content block)."""

    path: str
    title: str
    heading: str | None  # the section read; null for the whole note
    start_line: int
    end_line: int
    chars: int
    truncated: bool
    headings: list[str]  # every heading of the note, to read another section next


def note_text(
    text: NoteText, end_line: int, chars: int, truncated: bool, max_headings: int
) -> NoteTextOut:
    return {
        "path": text.path,
        "title": text.title,
        "heading": text.heading,
        "start_line": text.start_line,
        "end_line": end_line,
        "chars": chars,
        "truncated": truncated,
        "headings": list(text.headings[:max_headings]),
    }


# --------------------------------------------------------------------------- the index


class EmbeddingsOut(TypedDict):
    model: str | None
    embedded: int
    reused: int
    seconds: float
    notice: str | None


class ReindexOut(TypedDict):
    notes: int
    attachments: int
    changed: int
    removed: int
    links: int
    wanted_links: int
    skipped: int
    seconds: float
    full: bool
    embeddings: EmbeddingsOut


def reindex(report: ReindexReport) -> ReindexOut:
    e = report.embeddings
    return {
        "notes": report.notes,
        "attachments": report.attachments,
        "changed": report.changed,
        "removed": report.removed,
        "links": report.links,
        "wanted_links": report.wanted,
        "skipped": report.skipped,
        "seconds": report.seconds,
        "full": report.full,
        "embeddings": {
            "model": e.model,
            "embedded": e.embedded,
            "reused": e.reused,
            "seconds": e.seconds,
            "notice": e.notice,
        },
    }


class StatsOut(TypedDict):
    notes: int
    attachments: int
    chunks: int
    vectors: int
    embed_model: str | None
    links: int
    resolved_links: int
    wanted_links: int
    wanted_notes: int
    ambiguous_links: int
    distinct_tags: int
    open_tasks: int
    done_tasks: int
    skipped: int
    notes_with_warnings: int
    index_path: str
    index_bytes: int
    schema_version: int
    last_reindex: str | None  # ISO 8601, UTC


def timestamp(seconds: float | None) -> str | None:
    """Epoch seconds as ISO 8601 in UTC (to the second), the dialect's form of a time."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def stats(s: Stats) -> StatsOut:
    return {
        "notes": s.notes,
        "attachments": s.attachments,
        "chunks": s.chunks,
        "vectors": s.vectors,
        "embed_model": s.embed_model,
        "links": s.links,
        "resolved_links": s.resolved_links,
        "wanted_links": s.wanted_links,
        "wanted_notes": s.wanted_notes,
        "ambiguous_links": s.ambiguous_links,
        "distinct_tags": s.tags,
        "open_tasks": s.open_tasks,
        "done_tasks": s.done_tasks,
        "skipped": s.skipped,
        "notes_with_warnings": s.notes_with_warnings,
        "index_path": s.index_path,
        "index_bytes": s.index_bytes,
        "schema_version": s.schema_version,
        "last_reindex": timestamp(s.last_reindex),
    }


class LinkProblemOut(TypedDict):
    path: str  # the note the link is in
    title: str
    line: int
    written: str
    detail: str
    fix: str | None


class ParseWarningOut(TypedDict):
    path: str
    title: str
    message: str


class SkippedFileOut(TypedDict):
    path: str
    title: str
    reason: str


class DoctorOut(TypedDict):
    healthy: bool
    parse_warnings: list[ParseWarningOut]
    skipped_files: list[SkippedFileOut]
    ambiguous: list[LinkProblemOut]
    alias_fixable: list[LinkProblemOut]
    missing_anchors: list[LinkProblemOut]
    index_problems: list[str]


def link_problem(p: LinkProblem) -> LinkProblemOut:
    return {
        "path": p.src_path,
        "title": title_of(p.src_path),
        "line": p.line,
        "written": p.written,
        "detail": p.detail,
        "fix": p.fix,
    }


def doctor(report: DoctorReport) -> DoctorOut:
    return {
        "healthy": report.healthy,
        "parse_warnings": [
            {"path": p, "title": title_of(p), "message": w} for p, w in report.warnings
        ],
        "skipped_files": [
            {"path": p, "title": title_of(p), "reason": r} for p, r in report.skipped
        ],
        "ambiguous": [link_problem(p) for p in report.ambiguous],
        "alias_fixable": [link_problem(p) for p in report.alias_fixable],
        "missing_anchors": [link_problem(p) for p in report.missing_anchors],
        "index_problems": list(report.index_problems),
    }


# --------------------------------------------------------------------------- the link graph


class PathEndOut(NodeOut):
    linked_notes: int | None  # without a path: the notes it links with (either way)
    group_size: int | None  # without a path: the size of its group of linked notes


# `from` is a Python keyword: these shapes are written in TypedDict's functional form.
HopOut = TypedDict(
    "HopOut",
    {"from": NodeOut, "to": NodeOut, "relation": str, "direction": Literal["-->", "<--"]},
)


class ConnectionOut(TypedDict):
    found: bool
    start: PathEndOut
    end: PathEndOut
    max_depth: int
    relations: list[str] | None  # the relations walked; null: every relation
    directed: bool
    hops: list[HopOut]
    why_not: str | None


def _end(graph_node: link_graph.GraphNode, degree: int | None, size: int | None) -> PathEndOut:
    return PathEndOut(**node(graph_node), linked_notes=degree, group_size=size)


def connection(c: link_graph.Connection) -> ConnectionOut:
    why = c.no_path
    prev = c.steps[0].node if c.steps else c.start
    hops: list[HopOut] = []
    for step in c.steps[1:]:
        assert step.hop is not None
        hops.append(
            {
                "from": node(prev),
                "to": node(step.node),
                "relation": step.hop.relation,
                "direction": step.hop.direction,
            }
        )
        prev = step.node
    return {
        "found": c.found,
        "start": _end(
            c.start,
            why.start_degree if why else None,
            why.start_component_size if why else None,
        ),
        "end": _end(
            c.end, why.end_degree if why else None, why.end_component_size if why else None
        ),
        "max_depth": c.max_depth,
        "relations": None if c.relations is None else list(c.relations),
        "directed": c.directed,
        "hops": hops,
        "why_not": " ".join(c.why_not()) or None,
    }


class NeighborOut(NodeOut):
    distance: int  # links away


class NeighborsOut(TypedDict):
    path: str | None  # the note looked around (null for a wanted note)
    title: str
    kind: str
    depth: int
    total: int  # every neighbour within depth, however many are listed
    neighbors: list[NeighborOut]


def neighbors(
    G: nx.DiGraph, center: str, depth: int, found: Sequence[tuple[str, int]], limit: int | None
) -> NeighborsOut:
    rows: list[NeighborOut] = [
        NeighborOut(**node(link_graph.node_of(G, other)), distance=distance)
        for other, distance in _limited(found, limit)
    ]
    return {
        **node(link_graph.node_of(G, center)),
        "depth": depth,
        "total": len(found),
        "neighbors": rows,
    }


class ClusterOut(TypedDict):
    size: int
    hub: NoteRef  # the member linked with most others
    top_tags: list[str]
    members: list[NoteRef]


class ClustersOut(TypedDict):
    total: int
    clusters: list[ClusterOut]


def clusters(found: Sequence[link_graph.Cluster]) -> ClustersOut:
    return {
        "total": len(found),
        "clusters": [
            {
                "size": c.size,
                "hub": note(c.hub),
                "top_tags": list(c.top_tags),
                "members": notes(c.members),
            }
            for c in found
        ],
    }


class GroupOut(TypedDict):
    size: int
    members: list[NoteRef]


class CyclesOut(TypedDict):
    total: int
    cycles: list[GroupOut]


def group(members: Sequence[str]) -> GroupOut:
    return {"size": len(members), "members": notes(members)}


def cycles(found: Sequence[Sequence[str]]) -> CyclesOut:
    return {"total": len(found), "cycles": [group(c) for c in found]}


class ArticulationPointOut(NoteRef):
    pieces: int  # the parts its group splits into without it


class BridgeOut(TypedDict):
    ends: list[NoteRef]  # the two notes of the link, sorted by path


class FragileOut(TypedDict):
    articulation_points: list[ArticulationPointOut]
    bridges: list[BridgeOut]


def _points(points: Sequence[tuple[str, int]]) -> list[ArticulationPointOut]:
    return [ArticulationPointOut(**note(p), pieces=k) for p, k in points]


def _bridges(bridges: Sequence[tuple[str, str]]) -> list[BridgeOut]:
    return [{"ends": [note(a), note(b)]} for a, b in bridges]


def fragile(f: link_graph.Fragile) -> FragileOut:
    return {
        "articulation_points": _points(f.articulation_points),
        "bridges": _bridges(f.bridges),
    }


# --------------------------------------------------------------------------- knowledge gaps


class WantedOut(TypedDict):
    title: str  # the name the links use
    wanted_by: int  # how many notes link to it
    linked_from: list[NoteRef]


SuggestionOut = TypedDict("SuggestionOut", {"from": NoteRef, "to": NoteRef, "evidence": str})


class ExpiredOut(NoteRef):
    tier: str
    expired_at: str  # ISO 8601


class GapsOut(TypedDict):
    notes: int
    totals: dict[str, int]  # every class's full count, whatever the limit
    orphans: list[NoteRef]
    dead_ends: list[NoteRef]
    wanted: list[WantedOut]
    alias_fixable: list[LinkProblemOut]
    weakly_linked: list[NoteRef]
    articulation_points: list[ArticulationPointOut]
    bridges: list[BridgeOut]
    isolated_clusters: list[GroupOut]
    suggestions: list[SuggestionOut]
    expired: list[ExpiredOut]


def gaps(
    report: GapsReport, limit: int | None = None, linked_from_limit: int | None = None
) -> GapsOut:
    """The report, each class cut to `limit` rows (None: all), totals always whole."""

    def cut(rows: Sequence[Any]) -> Sequence[Any]:
        return _limited(rows, limit)

    return {
        "notes": report.notes,
        "totals": report.totals(),
        "orphans": notes(cut(report.orphans)),
        "dead_ends": notes(cut(report.dead_ends)),
        "wanted": [
            {
                "title": w.name,
                "wanted_by": len(w.linked_from),
                "linked_from": notes(_limited(w.linked_from, linked_from_limit)),
            }
            for w in cut(report.wanted)
        ],
        "alias_fixable": [link_problem(p) for p in cut(report.alias_fixable)],
        "weakly_linked": notes(cut(report.weakly_linked)),
        "articulation_points": _points(cut(report.articulation_points)),
        "bridges": _bridges(cut(report.bridges)),
        "isolated_clusters": [group(c) for c in cut(report.isolated_clusters)],
        "suggestions": [
            {"from": note(s.source), "to": note(s.target), "evidence": s.evidence}
            for s in cut(report.suggestions)
        ],
        "expired": [
            ExpiredOut(**note(e.path), tier=e.tier, expired_at=e.expired_at)
            for e in cut(report.expired)
        ],
    }


# --------------------------------------------------------------------------- personas


class PersonaOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str
    budget: int
    aliases: list[str]


class PersonasOut(TypedDict):
    personas: list[PersonaOut]


def personas(found: Sequence[PersonaInfo]) -> PersonasOut:
    return {
        "personas": [
            {
                "slug": p.slug,
                "path": p.path,
                "title": p.title,
                "role": p.role,
                "budget": p.budget,
                "aliases": list(p.aliases),
            }
            for p in found
        ]
    }


class PersonaPartOut(TypedDict):
    kind: str  # persona, facts or working_set
    path: str  # the note the text came from
    title: str
    heading: str | None  # the section it came from, when the persona linked one
    chars: int


class PersonaPartTextOut(PersonaPartOut):
    text: str


class PersonaContextOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str
    budget: int
    used: int
    over_budget: bool
    usage: dict[str, int]  # characters per kind of part; they add up to `used`
    left_out: list[NoteRef]  # notes that did not fit the budget
    parts: list[PersonaPartOut]


def persona_context(
    context: PersonaContext, info: PersonaInfo, with_text: bool
) -> PersonaContextOut:
    """A loaded persona; the parts' text only `with_text` (MCP sends the markdown once, as text)."""
    parts: list[PersonaPartOut] = []
    for p in context.parts:
        part: PersonaPartOut = {
            "kind": p.kind,
            "path": p.source,
            "title": info.title if p.source == info.path else title_of(p.source),
            "heading": p.heading,
            "chars": p.chars,
        }
        parts.append(PersonaPartTextOut(**part, text=p.text) if with_text else part)
    return {
        "slug": context.slug,
        "path": context.path,
        "title": info.title,
        "role": context.role,
        "budget": context.budget,
        "used": context.used,
        "over_budget": context.over_budget,
        "usage": context.usage(),
        "left_out": notes(context.left_out),
        "parts": parts,
    }
