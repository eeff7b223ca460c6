"""What the index says about itself: counts for stats and reindex reports, notes' warnings,
skipped files, integrity."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.store.schema import Connection, marks, scalar
from vaultmem.store.vectors import vector_count


@dataclass(frozen=True)
class IndexCounts:
    notes: int
    attachments: int
    chunks: int
    links: int
    resolved_links: int
    wanted_links: int
    wanted_notes: int  # distinct names of wanted links
    ambiguous_links: int
    tags: int  # distinct, case-insensitively
    open_tasks: int
    done_tasks: int
    skipped: int
    notes_with_warnings: int
    vectors: int


@dataclass(frozen=True)
class FileTotals:
    """The few counts a reindex reports."""

    notes: int
    attachments: int
    links: int
    wanted_links: int


@dataclass(frozen=True)
class NoteWarning:
    path: str
    warning: str


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


def _kinds(conn: Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT kind, count(*) FROM notes GROUP BY kind").fetchall())


def _count(conn: Connection, sql: str) -> int:
    return int(scalar(conn, sql) or 0)


def file_totals(conn: Connection) -> FileTotals:
    kinds = _kinds(conn)
    return FileTotals(
        kinds.get("note", 0),
        kinds.get("attachment", 0),
        _count(conn, "SELECT count(*) FROM links"),
        _count(conn, "SELECT count(*) FROM links WHERE dst_path IS NULL"),
    )


def index_counts(conn: Connection) -> IndexCounts:
    kinds = _kinds(conn)
    return IndexCounts(
        notes=kinds.get("note", 0),
        attachments=kinds.get("attachment", 0),
        chunks=_count(conn, "SELECT count(*) FROM chunks"),
        links=_count(conn, "SELECT count(*) FROM links"),
        resolved_links=_count(conn, "SELECT count(*) FROM links WHERE dst_path IS NOT NULL"),
        wanted_links=_count(conn, "SELECT count(*) FROM links WHERE dst_path IS NULL"),
        wanted_notes=_count(
            conn, "SELECT count(DISTINCT target_key) FROM links WHERE dst_path IS NULL"
        ),
        ambiguous_links=_count(conn, "SELECT count(*) FROM links WHERE candidates IS NOT NULL"),
        tags=_count(conn, "SELECT count(DISTINCT lower(tag)) FROM tags"),
        open_tasks=_count(conn, "SELECT count(*) FROM tasks WHERE status = ' '"),
        done_tasks=_count(conn, "SELECT count(*) FROM tasks WHERE checked = 1"),
        skipped=_count(conn, "SELECT count(*) FROM skipped"),
        notes_with_warnings=_count(conn, "SELECT count(*) FROM notes WHERE warnings != '[]'"),
        vectors=vector_count(conn),
    )


def note_warnings(conn: Connection) -> list[NoteWarning]:
    """Every warning the parser gave, by path."""
    rows = conn.execute("SELECT path, warnings FROM notes WHERE warnings != '[]' ORDER BY path")
    return [NoteWarning(path, w) for path, ws in rows for w in json.loads(ws)]


def skipped_files(conn: Connection) -> list[Skipped]:
    """Files the last reindex could not read, by path, with the reason."""
    rows = conn.execute("SELECT path, reason FROM skipped ORDER BY path")
    return [Skipped(*r) for r in rows]


def replace_skipped(conn: Connection, skipped: dict[str, str]) -> None:
    conn.execute("DELETE FROM skipped")
    conn.executemany("INSERT INTO skipped(path, reason) VALUES (?, ?)", sorted(skipped.items()))


def update_skipped(conn: Connection, paths: Sequence[str], skipped: dict[str, str]) -> None:
    """Set what is known about skipping `paths` alone: `skipped` holds those skipped now."""
    for start in range(0, len(paths), 500):
        part = list(paths[start : start + 500])
        conn.execute(f"DELETE FROM skipped WHERE path IN ({marks(part)})", part)
    conn.executemany("INSERT INTO skipped(path, reason) VALUES (?, ?)", sorted(skipped.items()))


def quick_check(conn: Connection) -> str:
    """SQLite's quick integrity check: "ok", or what it found."""
    return str(scalar(conn, "PRAGMA quick_check"))
