"""Notes in the dialect: search results, one note (`show`), backlinks, a note's text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import TypedDict

from vaultmem.dialect.refs import NoteRef, heading_or_none, limited, note, notes
from vaultmem.model import title_of
from vaultmem.search import SearchResult, plain
from vaultmem.vault import Backlink, NoteInfo, NoteText

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
    expired_hidden: int  # expired notes left out that would be results (see include_expired)


def search_result(result: SearchResult, explain: bool = False) -> SearchOut:
    hits: list[SearchHitOut] = []
    for h in result.hits:
        hit: SearchHitOut = {
            "path": h.path,
            "title": h.title,
            "heading": heading_or_none(h.header),
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
        "expired_hidden": result.expired_hidden,
    }


def expired_notice(count: int, option: str) -> str | None:
    """What a person (or an agent) is told when a search left out `count` expired notes that
    would be hits, naming the `option` that shows them; None when it left out none."""
    if not count:
        return None
    some = f"{count} expired notes" if count > 1 else "1 expired note"
    theirs, them = ("their", "them") if count > 1 else ("its", "it")
    return f"{some} hidden (past {theirs} decay tier's lifetime); {option} shows {them}"


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
        "backlinks": [backlink(b) for b in limited(found, limit)],
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
    digest: str  # the revision read: a write sends it back, and is refused if the note changed


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
        "digest": text.digest,
    }


class NoteBodyOut(NoteTextOut):
    """`vaultmem get --json`: where the text came from, and the text itself (on the CLI)."""

    text: str


def note_body(text: NoteText) -> NoteBodyOut:
    where = note_text(text, text.end_line, len(text.text), False, len(text.headings))
    return {**where, "text": text.text}
