"""Chunks (the sections search returns) and their FTS5 text index: writing them, keyword
matches with bm25, snippets, and the chunks a date or a phrase picks."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from vaultmem.model import ParsedNote
from vaultmem.store.schema import Connection, marks, rows_in

# Column weights for bm25 over chunks_fts(title, aliases, headings, tags, path, body, history).
# `history` holds a fact's `- was:: old value (until …)` lines: still findable, but a note
# whose current value matches ranks above one that only used to hold it (docs/memory.md).
FTS_WEIGHTS = (10.0, 8.0, 4.0, 4.0, 2.0, 1.0, 0.25)
_HISTORY_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+was::", re.IGNORECASE)
_BM25 = f"bm25(chunks_fts, {', '.join(str(w) for w in FTS_WEIGHTS)})"


# ChunkRow and ChunkMatch are NamedTuples, not frozen dataclasses: a search builds up to a few
# hundred, and 100 rows took 0.44 ms as frozen dataclasses (whose __init__ sets each field
# through object.__setattr__), 0.10-0.13 ms as NamedTuples, 0.02 ms as plain tuples (MDN's
# rows, a loaded 2-core machine): the dataclasses would add a tenth to a keyword search's p50.


class ChunkRow(NamedTuple):
    """Where a chunk is: its note, lines and heading path (" > "-joined)."""

    id: int
    path: str
    title: str
    start_line: int
    end_line: int
    heading: str


class ChunkMatch(NamedTuple):
    """A chunk an FTS5 query matched, with its bm25 (lower is better, as SQLite gives it)."""

    id: int
    path: str
    title: str
    start_line: int
    end_line: int
    heading: str
    bm25: float


@dataclass(frozen=True, slots=True)
class ChunkText:
    """What a chunk's vector is made from."""

    headings: str  # the heading path, space-joined
    body: str


@dataclass(frozen=True, slots=True)
class Mention:
    path: str
    line: int  # first line of the chunk holding the phrase


def chunk_hash(heading_path: Sequence[str], text: str) -> str:
    """What a chunk's vector is cached under: its heading path and text, not its note."""
    data = ("\x1f".join(heading_path) + "\x1e" + text).encode("utf-8")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# --------------------------------------------------------------------------- writing


def insert_chunks(conn: Connection, note_id: int, note: ParsedNote) -> None:
    """A parsed note's chunks, and their text in the FTS5 index."""
    aliases_text = " ".join(note.aliases)
    tags_text = " ".join(note.tags)
    first_chunk = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
    conn.executemany(
        "INSERT INTO chunks(id, note_id, seq, start_line, end_line, heading, text_hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                first_chunk + c.seq,
                note_id,
                c.seq,
                c.start_line,
                c.end_line,
                c.heading,
                chunk_hash(c.heading_path, c.text),
            )
            for c in note.chunks
        ],
    )
    conn.executemany(
        "INSERT INTO chunks_fts(rowid, title, aliases, headings, tags, path, body, history)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                first_chunk + c.seq,
                note.title,
                aliases_text,
                " ".join(c.heading_path),
                tags_text,
                note.path,
                *split_history(c.text),
            )
            for c in note.chunks
        ],
    )


def split_history(text: str) -> tuple[str, str]:
    """A chunk's text as (body, history): its `- was::` lines apart, each kept whole."""
    if "::" not in text:
        return text, ""
    body: list[str] = []
    history: list[str] = []
    for line in text.split("\n"):
        (history if _HISTORY_LINE.match(line) else body).append(line)
    return "\n".join(body), "\n".join(history)


def delete_chunks(conn: Connection, note_ids: Sequence[int], has_vectors: bool) -> None:
    """The chunks of some notes, with their text (and vectors, when the index has them)."""
    in_list = marks(note_ids)
    chunks = f"SELECT id FROM chunks WHERE note_id IN ({in_list})"
    conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({chunks})", list(note_ids))
    if has_vectors:
        conn.execute(f"DELETE FROM chunk_vectors WHERE rowid IN ({chunks})", list(note_ids))
    conn.execute(f"DELETE FROM chunks WHERE note_id IN ({in_list})", list(note_ids))


# --------------------------------------------------------------------------- reading


def keyword_chunks(conn: Connection, match: str, limit: int) -> list[ChunkMatch]:
    """The best chunks for an FTS5 query, best first."""
    rows = conn.execute(
        f"SELECT rowid, {_BM25} AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
        " ORDER BY rank LIMIT ?",
        (match, limit),
    ).fetchall()
    if not rows:
        return []
    where = {
        r[0]: r
        for r in conn.execute(
            "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM chunks c"
            f" JOIN notes n ON n.id = c.note_id WHERE c.id IN ({marks(rows)})",
            [r[0] for r in rows],
        )
    }
    out = []
    for rowid, rank in rows:
        if (c := where.get(rowid)) is not None:
            out.append(ChunkMatch(c[0], c[1], c[2], c[3], c[4], c[5], rank))
    return out


def chunk_rows(conn: Connection, ids: Sequence[int]) -> dict[int, ChunkRow]:
    """chunk id -> where it is."""
    rows = rows_in(
        conn,
        "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM chunks c"
        " JOIN notes n ON n.id = c.note_id WHERE c.id IN ({marks})",
        ids,
    )
    return {r[0]: ChunkRow(*r) for r in rows}


def first_chunks_dated(conn: Connection, days: Sequence[str], limit: int) -> list[ChunkRow]:
    """The first chunk of notes dated on one of `days` (ISO), by property, path or title."""
    if not days:
        return []
    likes = " OR ".join(["n.path LIKE ?"] * len(days))
    rows = conn.execute(
        "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM notes n"
        " JOIN chunks c ON c.note_id = n.id AND c.seq = 0"
        f" WHERE n.kind = 'note' AND (substr(n.date, 1, 10) IN ({marks(days)}) OR {likes})"
        " ORDER BY n.path LIMIT ?",
        (*days, *(f"%{d}%" for d in days), limit),
    )
    return [ChunkRow(*r) for r in rows]


def chunk_texts(conn: Connection, ids: Sequence[int]) -> dict[int, ChunkText]:
    """chunk id -> its heading path and text, from the text index that already holds them."""
    rows = rows_in(
        conn,
        "SELECT rowid, headings, body, history FROM chunks_fts WHERE rowid IN ({marks})",
        ids,
    )
    # history lines go back after the body: what is embedded is the whole chunk
    return {r[0]: ChunkText(r[1], f"{r[2]}\n{r[3]}" if r[3] else r[2]) for r in rows}


def chunk_bodies(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    """chunk id -> its text."""
    return {i: t.body for i, t in chunk_texts(conn, ids).items()}


def snippets(conn: Connection, match: str, chunk_ids: Sequence[int]) -> dict[int, str]:
    """chunk id -> a highlighted snippet (matches between \\x02 and \\x03) for a query."""
    if not chunk_ids:
        return {}
    rows = conn.execute(
        "SELECT rowid, snippet(chunks_fts, 5, char(2), char(3), '…', 24) FROM chunks_fts"
        f" WHERE chunks_fts MATCH ? AND rowid IN ({marks(chunk_ids)})",
        (match, *chunk_ids),
    )
    return dict(rows.fetchall())


def mentions(conn: Connection, phrase_words: Sequence[str], limit: int) -> list[Mention]:
    """Chunks whose text holds the words as a phrase, best first."""
    if not phrase_words:
        return []
    phrase = " ".join(phrase_words).replace('"', "")
    rows = conn.execute(
        "SELECT n.path, c.start_line FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
        " JOIN notes n ON n.id = c.note_id WHERE chunks_fts MATCH ? ORDER BY f.rank LIMIT ?",
        (f'body : "{phrase}"', limit),
    )
    return [Mention(*r) for r in rows]
