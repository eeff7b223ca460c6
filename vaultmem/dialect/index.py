"""The index in the dialect: `reindex`, `stats` and `doctor`."""

from __future__ import annotations

import datetime as dt

from typing_extensions import TypedDict

from vaultmem.dialect.refs import NoteRef, notes
from vaultmem.embed_upgrade import Outcome, Status
from vaultmem.indexer import ReindexReport
from vaultmem.live import Refresh
from vaultmem.model import title_of
from vaultmem.vault import DoctorReport, LinkProblem, Stats

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


class RefreshOut(TypedDict):
    """One refresh of `vaultmem watch --json` (one object per line)."""

    reindexed_at: str  # ISO 8601, UTC
    notes: int  # notes in the index after it
    new: list[NoteRef]
    edited: list[NoteRef]
    gone: list[NoteRef]  # dropped from the index (deleted, moved, excluded)
    reindex: ReindexOut  # the reindex that did it


def refresh(r: Refresh) -> RefreshOut:
    return {
        "reindexed_at": timestamp(r.at) or "",
        "notes": r.notes,
        "new": notes(r.new),
        "edited": notes(r.edited),
        "gone": notes(r.gone),
        "reindex": reindex(r.report),
    }


class StatsOut(TypedDict):
    notes: int
    attachments: int
    chunks: int
    vectors: int
    embed_model: str | None
    embed_chosen_by: str | None  # "auto" (vaultmem, by the vault's size) or "you"; None: unknown
    embed_reason: str | None  # why this model, in words
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
    embed_upgrade: UpgradeStatusOut | None  # the move to all-MiniLM-L6-v2 (None: not asked)


class UpgradeStatusOut(TypedDict):
    """Where the upgrade of a vault past auto's limit to all-MiniLM-L6-v2 stands."""

    state: str  # "pending", "upgraded", "unavailable" (MiniLM not installed), "none"
    reason: str  # in words
    chunks: int  # the vault's sections (as stats' `chunks`)
    covered: int  # of them, those all-MiniLM-L6-v2 has embedded
    minutes_left: int  # about how many minutes of one core the rest costs


class UpgradeOut(UpgradeStatusOut):
    """`vaultmem upgrade-model --json`: the status after the run, and what the run did."""

    embedded: int  # sections embedded by this run
    seconds: float
    swapped: bool  # this run moved the vault to all-MiniLM-L6-v2


def upgrade_status(u: Status) -> UpgradeStatusOut:
    return {
        "state": u.state,
        "reason": u.reason,
        "chunks": u.sections,
        "covered": u.covered,
        "minutes_left": u.minutes_left,
    }


def upgrade(o: Outcome) -> UpgradeOut:
    return {
        **upgrade_status(o.status),
        "embedded": o.embedded,
        "seconds": o.seconds,
        "swapped": o.swapped,
    }


def timestamp(seconds: float | None) -> str | None:
    """Epoch seconds as ISO 8601 in UTC (to the second), the dialect's form of a time."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def stats(s: Stats, upgrade: Status | None = None) -> StatsOut:
    return {
        "notes": s.notes,
        "attachments": s.attachments,
        "chunks": s.chunks,
        "vectors": s.vectors,
        "embed_model": s.embed_model,
        "embed_chosen_by": s.embed_by,
        "embed_reason": s.embed_reason,
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
        "embed_upgrade": upgrade_status(upgrade) if upgrade is not None else None,
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
