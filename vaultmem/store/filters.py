"""The notes a search operator lets through (vaultmem.query): each function returns the paths
of the notes that pass one term."""

from __future__ import annotations

from collections.abc import Sequence

from vaultmem.store.schema import Connection, marks, rows_in
from vaultmem.store.text import BM25, ChunkMatch, keyword_chunks, matches_of

LINE_CHUNKS = 5000  # sections read for a line:( ) operator, best first


def _like(fragment: str) -> str:
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def all_notes(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT path FROM notes WHERE kind = 'note'")}


def notes_matching(conn: Connection, match: str) -> set[str]:
    """Notes whose names, text or property values match an FTS5 query (whole-note index)."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT n.path FROM notes_fts f JOIN notes n ON n.id = f.rowid WHERE notes_fts MATCH ?",
            (match,),
        )
    }


def notes_tagged(conn: Connection, tag: str) -> set[str]:
    """Notes with the tag or a tag nested under it (case-insensitive)."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT n.path FROM tags t JOIN notes n ON n.id = t.note_id"
            " WHERE t.tag = ? COLLATE NOCASE",
            (tag,),
        )
    }


def notes_in_path(conn: Connection, fragment: str) -> set[str]:
    """Notes whose vault path holds the fragment (case-insensitive, as Obsidian's path:)."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT path FROM notes WHERE kind = 'note' AND path LIKE ? ESCAPE '\\'",
            (_like(fragment),),
        )
    }


def notes_named(conn: Connection, fragment: str) -> set[str]:
    """Notes whose file name holds the fragment (case-insensitive, as Obsidian's file:)."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT path FROM notes WHERE kind = 'note' AND title LIKE ? ESCAPE '\\'",
            (_like(fragment),),
        )
    }


def sections_matching(conn: Connection, match: str, limit: int = LINE_CHUNKS) -> list[ChunkMatch]:
    """Sections (chunks) whose heading path and text match an FTS5 query, best first."""
    return keyword_chunks(conn, f"{{headings body}} : ({match})", limit)


def notes_with_tasks(conn: Connection, words: Sequence[str], done: bool | None) -> set[str]:
    """Notes with a task holding every word (`done`: only checked / only open tasks)."""
    where = " AND ".join(["t.text LIKE ? ESCAPE '\\'"] * len(words)) or "1"
    if done is not None:
        where += f" AND t.checked = {int(done)}"
    return {
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT n.path FROM tasks t JOIN notes n ON n.id = t.note_id WHERE {where}",
            [_like(w) for w in words],
        )
    }


def keyword_chunks_among(
    conn: Connection, match: str, paths: Sequence[str], limit: int
) -> list[ChunkMatch]:
    """The best chunks for an FTS5 query among some notes' chunks only, best first."""
    if not paths:
        return []
    ids = [
        r[0]
        for r in rows_in(
            conn,
            "SELECT c.id FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path IN ({marks})",
            list(paths),
        )
    ]
    ranked: list[tuple[int, float]] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        ranked += conn.execute(
            f"SELECT rowid, {BM25} AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
            f" AND rowid IN ({marks(part)}) ORDER BY rank LIMIT ?",
            (match, *part, limit),
        ).fetchall()
    ranked.sort(key=lambda r: r[1])
    return matches_of(conn, ranked[:limit])
