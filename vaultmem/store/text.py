"""Chunks (the sections search returns) and their FTS5 text index: writing them, keyword
matches with bm25, snippets, and the chunks a date or a phrase picks."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from vaultmem.model import ParsedNote
from vaultmem.store import terms
from vaultmem.store.schema import Connection, marks, rows_in

# Column weights for bm25 over chunks_fts(title, aliases, headings, tags, path, body, history).
# `history` holds a fact's `- was:: old value (until …)` lines: still findable, but a note
# whose current value matches ranks above one that only used to hold it (docs/memory.md).
FTS_WEIGHTS = (10.0, 8.0, 4.0, 4.0, 2.0, 1.0, 0.25)
_HISTORY_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+was::", re.IGNORECASE)
BM25 = f"bm25(chunks_fts, {', '.join(str(w) for w in FTS_WEIGHTS)})"
# …and over notes_fts(names, body): a note's names count four times its text (measured on the
# dev sets, docs/BENCHMARKS.md "Ranking ideas").
NOTE_FTS_WEIGHTS = (4.0, 1.0)
_NOTE_BM25 = f"bm25(notes_fts, {', '.join(str(w) for w in NOTE_FTS_WEIGHTS)})"
FOLDER_NOTES = ("index.md", "readme.md")  # a file that names its folder (MDN's `<slug>/index.md`)


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


def other_names(note: ParsedNote) -> tuple[str, ...]:
    """The names a note goes by besides its title (the file name) and aliases: an opening H1,
    a front matter `title:`, and for a folder note (`x/index.md`, `x/README.md`) its folder."""
    found: list[str] = []
    if note.headings and note.headings[0].level == 1:
        found.append(note.headings[0].text)
    title = note.frontmatter.get("title")
    if isinstance(title, str):
        found.append(title)
    parts = note.path.split("/")
    if len(parts) >= 2 and parts[-1].lower() in FOLDER_NOTES:
        found.append(parts[-2].replace("_", " "))
    seen = {n.casefold() for n in (note.title, *note.aliases)}
    out: list[str] = []
    for name in (" ".join(n.split()) for n in found):
        if name and name.casefold() not in seen:
            seen.add(name.casefold())
            out.append(name)
    return tuple(out)


def property_text(value: object) -> str:
    """Front matter values as words, one a line ("[[Ridley Scott]]" -> "Ridley Scott"); the
    keys are left out: they name the kind of a value, not what the note is about."""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)
        elif v is not None and not isinstance(v, bool):
            out.append(str(v).replace("[[", "").replace("]]", ""))

    walk(value)
    return "\n".join(out)


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
    names = "\n".join((note.title, *note.aliases, *other_names(note)))
    body = "\n".join(f"{' '.join(c.heading_path)}\n{c.text}" for c in note.chunks)
    conn.execute(
        "INSERT INTO notes_fts(rowid, names, body) VALUES (?, ?, ?)",
        (note_id, names, f"{body}\n{property_text(note.frontmatter)}"),
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
    conn.execute(f"DELETE FROM notes_fts WHERE rowid IN ({in_list})", list(note_ids))
    if has_vectors:
        conn.execute(f"DELETE FROM chunk_vectors WHERE rowid IN ({chunks})", list(note_ids))
    conn.execute(f"DELETE FROM chunks WHERE note_id IN ({in_list})", list(note_ids))


# --------------------------------------------------------------------------- reading


def keyword_chunks(
    conn: Connection, match: str, limit: int, *, cached: bool = False
) -> list[ChunkMatch]:
    """The best chunks for an FTS5 query, best first. `cached` (a warm process): a query of
    quoted words joined by OR (or by AND) is ranked from cached per-word scores, the same
    rows and scores to the last bit (store/terms.py)."""
    return matches_of(conn, _ranked_rows(conn, "chunks_fts", BM25, match, limit, cached))


def _ranked_rows(
    conn: Connection, table: terms.Table, bm25: str, match: str, limit: int, cached: bool
) -> list[tuple[int, float]]:
    """The (rowid, rank) rows of an FTS5 query, best first: from the cached per-word scores
    when `cached` and the query is one they can answer, else from FTS5 itself."""
    rows = terms.ranked(conn, table, bm25, match, limit) if cached else None
    if rows is None:
        rows = conn.execute(
            f"SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH ?"
            " ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
    return rows


def matches_of(conn: Connection, rows: Sequence[tuple[int, float]]) -> list[ChunkMatch]:
    """(chunk id, bm25) rows as ChunkMatch, in their order."""
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


def keyword_notes(
    conn: Connection, match: str, limit: int, *, cached: bool = False
) -> list[tuple[str, float]]:
    """The best whole notes for an FTS5 query, best first: (path, bm25 with higher better).
    `cached`: as for keyword_chunks."""
    rows = _ranked_rows(conn, "notes_fts", _NOTE_BM25, match, limit, cached)
    if not rows:
        return []
    paths = dict(
        conn.execute(
            f"SELECT id, path FROM notes WHERE id IN ({marks(rows)})", [r[0] for r in rows]
        ).fetchall()
    )
    return [(paths[i], -rank) for i, rank in rows if i in paths]


def section_counts(conn: Connection, paths: Sequence[str]) -> dict[str, int]:
    """How many sections each of `paths` has (a path the index does not hold is left out)."""
    return dict(
        rows_in(
            conn,
            "SELECT n.path, count(*) FROM notes n JOIN chunks c ON c.note_id = n.id"
            " WHERE n.path IN ({marks}) GROUP BY n.id",
            paths,
        )
    )


def section_count(conn: Connection) -> int:
    """How many sections the index holds."""
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def sections_holding(conn: Connection, word: str) -> int:
    """How many sections hold a word (as the text index tokenizes it)."""
    found = conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{word}"',)
    ).fetchone()
    return int(found[0])


def note_text_count(conn: Connection) -> int:
    """How many notes the whole-note text index holds."""
    return int(conn.execute("SELECT count(*) FROM notes_fts").fetchone()[0])


def notes_holding(conn: Connection, word: str) -> int:
    """How many notes hold a word anywhere (names, text or properties)."""
    found = conn.execute(
        "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", (f'"{word}"',)
    ).fetchone()
    return int(found[0])


def notes_named_by(conn: Connection, words: Sequence[str], limit: int) -> list[str]:
    """The notes whose names (title, aliases, other names) hold most of the words, best first."""
    if not words:
        return []
    match = "names : (" + " OR ".join(f'"{w}"' for w in words) + ")"
    rows = conn.execute(
        "SELECT n.path FROM notes_fts f JOIN notes n ON n.id = f.rowid"
        " WHERE notes_fts MATCH ? ORDER BY bm25(notes_fts, 1.0, 0.0) LIMIT ?",
        (match, limit),
    )
    return [r[0] for r in rows]


def first_chunks(conn: Connection, paths: Sequence[str]) -> dict[str, ChunkRow]:
    """path -> its note's first chunk."""
    rows = rows_in(
        conn,
        "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM notes n"
        " JOIN chunks c ON c.note_id = n.id AND c.seq = 0 WHERE n.path IN ({marks})",
        paths,
    )
    return {r[1]: ChunkRow(*r) for r in rows}


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
