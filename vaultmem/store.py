"""The SQLite index: schema, connection and every SQL statement vaultmem runs."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import sqlean as sqlite3  # one driver for every connection: it can load sqlite-vec anywhere
import sqlite_vec

from vaultmem.errors import NoIndex, SchemaMismatch
from vaultmem.model import ParsedNote
from vaultmem.resolver import fold, heading_key, name_key

SCHEMA_VERSION = 2
OperationalError = sqlite3.OperationalError
Error = sqlite3.Error
DatabaseError = sqlite3.DatabaseError
if TYPE_CHECKING:  # sqlean mirrors the stdlib API, whose types mypy knows
    from sqlite3 import Connection as Connection
else:
    Connection = sqlite3.Connection

# Column weights for bm25 over chunks_fts(title, aliases, headings, tags, path, body).
FTS_WEIGHTS = (10.0, 8.0, 4.0, 4.0, 2.0, 1.0)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,                -- note | attachment
    key TEXT NOT NULL,                 -- name_key(path): what bare links match
    title TEXT NOT NULL,
    folded_title TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT,
    date TEXT,
    frontmatter TEXT NOT NULL DEFAULT '{}',
    aliases TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]',
    line_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX notes_key ON notes(key);
CREATE INDEX notes_title ON notes(folded_title);
CREATE TABLE aliases (note_id INTEGER NOT NULL, alias TEXT NOT NULL, alias_key TEXT NOT NULL);
CREATE INDEX aliases_note ON aliases(note_id);
CREATE INDEX aliases_key ON aliases(alias_key);
CREATE TABLE headings (
    note_id INTEGER NOT NULL, level INTEGER NOT NULL, text TEXT NOT NULL, norm TEXT NOT NULL,
    line INTEGER NOT NULL, end_line INTEGER NOT NULL
);
CREATE INDEX headings_note ON headings(note_id);
CREATE TABLE blocks (note_id INTEGER NOT NULL, block_id TEXT NOT NULL, line INTEGER NOT NULL);
CREATE INDEX blocks_note ON blocks(note_id);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY, note_id INTEGER NOT NULL, seq INTEGER NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, heading TEXT NOT NULL,
    text_hash TEXT NOT NULL              -- of what is embedded: heading path + text
);
-- Vectors by (model, text hash): unchanged text is never embedded twice, even across renames.
-- The per-chunk vec0 table `chunk_vectors` is made on first use, when the dimension is known.
CREATE TABLE embeddings (
    model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
CREATE INDEX chunks_note ON chunks(note_id);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, aliases, headings, tags, path, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE links (
    id INTEGER PRIMARY KEY,
    src_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,                -- wiki | markdown | property
    target TEXT NOT NULL,
    target_key TEXT NOT NULL,
    heading TEXT,
    block TEXT,
    display TEXT,
    embed INTEGER NOT NULL,
    relation TEXT NOT NULL,
    dst_path TEXT,                     -- NULL: a wanted note
    candidates TEXT,                   -- JSON list when several files matched
    anchor_ok INTEGER,                 -- heading/block found in the target (NULL: no anchor)
    alias_fix TEXT                     -- path of the note whose alias this wanted link names
);
CREATE INDEX links_src ON links(src_id);
CREATE INDEX links_key ON links(target_key);
CREATE INDEX links_dst ON links(dst_path);
CREATE TABLE tags (note_id INTEGER NOT NULL, tag TEXT NOT NULL, direct INTEGER NOT NULL);
CREATE INDEX tags_note ON tags(note_id);
CREATE INDEX tags_tag ON tags(tag COLLATE NOCASE);
CREATE TABLE tasks (
    note_id INTEGER NOT NULL, line INTEGER NOT NULL, status TEXT NOT NULL, checked INTEGER NOT NULL,
    text TEXT NOT NULL, due TEXT, priority TEXT, done TEXT
);
CREATE INDEX tasks_note ON tasks(note_id);
CREATE TABLE fields (
    note_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, line INTEGER NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX fields_note ON fields(note_id);
CREATE INDEX fields_key ON fields(key);
CREATE TABLE dirty_keys (key TEXT PRIMARY KEY);  -- link targets to re-resolve
CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""

_NOTE_TABLES = ("aliases", "headings", "blocks", "tags", "tasks", "fields")


def connect(path: Path, new: bool = False) -> Connection:
    """A connection to the index at `path` (`new`: a file being created)."""
    conn: Connection = sqlite3.connect(
        str(path), timeout=30.0, isolation_level=None, check_same_thread=False
    )
    try:
        if not new:  # before anything writes (WAL mode does): is this an index at all?
            conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:  # not SQLite, someone else's database, damaged
        conn.close()
        raise SchemaMismatch(
            f"{path} cannot be read as a vaultmem index ({exc}): run `vaultmem reindex --full`"
        ) from exc
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-65536")
    # sqlite-vec on every connection: any statement touching chunk_vectors needs it
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def create(path: Path) -> Connection:
    """Create an empty index at `path` (which must not exist)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path, new=True)
    # One script in one transaction: a crash leaves no half-made schema behind.
    conn.executescript(
        "BEGIN;"
        + _SCHEMA
        + f"INSERT INTO meta(key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'),"
        + f" ('created_at', '{time.time()}');"
        + "COMMIT;"
    )
    return conn


def is_index(path: Path) -> bool:
    """Whether `path` holds a vaultmem index of any schema version (safe to replace)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return bool(conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone())
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def reset(conn: Connection) -> None:
    """Empty the index in place, in one transaction: readers keep seeing the old index until
    the empty one commits, never a missing or half-made file. The generation counter carries
    on, so caches keyed by it (vector matrix, clusters) never mistake the new index for old."""
    after = generation(conn) + 1
    objects = conn.execute(
        "SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master"
        " WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 2 DESC, name"
    ).fetchall()
    drops = "".join(f'DROP TABLE IF EXISTS "{name}";' for name, _ in objects)
    conn.executescript(
        "BEGIN;"
        + drops
        + _SCHEMA
        + f"INSERT INTO meta(key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'),"
        + f" ('created_at', '{time.time()}'), ('generation', '{after}');"
        + "COMMIT;"
    )


def open_existing(path: Path) -> Connection:
    """Open an index for reading, checking its schema version."""
    if not path.exists():
        raise NoIndex(f"no index at {path} yet: run `vaultmem reindex`")
    conn = connect(path)
    check_schema(conn, path)
    return conn


def check_schema(conn: Connection, path: Path) -> None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise SchemaMismatch(
            f"the index at {path} cannot be read ({exc}): run `vaultmem reindex --full`"
        ) from exc
    version = row[0] if row else "none"
    if version != str(SCHEMA_VERSION):
        raise SchemaMismatch(
            f"the index at {path} was built with schema {version}, this vaultmem uses "
            f"{SCHEMA_VERSION}: run `vaultmem reindex --full`"
        )


@contextmanager
def transaction(conn: Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def get_meta(conn: Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def generation(conn: Connection) -> int:
    """A counter bumped by every reindex that changed anything."""
    return int(get_meta(conn, "generation") or 0)


def set_meta(conn: Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def _rows_in(
    conn: Connection, sql: str, values: Sequence[Any], before: Sequence[Any] = ()
) -> Iterator[Any]:
    """Rows of `sql`, whose `{marks}` is an IN list, over `values` 500 at a time (SQLite caps
    the number of parameters one statement takes)."""
    for start in range(0, len(values), 500):
        part = list(values[start : start + 500])
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), (*before, *part))


# --------------------------------------------------------------------------- writing


class FileState(NamedTuple):  # a tuple: one per file, loaded on every reindex
    id: int
    kind: str
    size: int
    mtime_ns: int
    hash: str | None


@dataclass(frozen=True)
class LinkResolution:
    dst_path: str | None
    candidates: tuple[str, ...]
    anchor_ok: bool | None
    alias_fix: str | None


def file_stats(conn: Connection) -> dict[str, str]:
    """path -> "kind:size:mtime_ns" of every indexed file: what change detection compares.

    One string per file, built by SQLite: on every reindex this loads the whole vault's rows.
    """
    return dict(conn.execute("SELECT path, kind || ':' || size || ':' || mtime_ns FROM notes"))


def file_states(conn: Connection, paths: Sequence[str]) -> dict[str, FileState]:
    """The stored rows of some files (those that look changed)."""
    rows = _rows_in(
        conn,
        "SELECT path, id, kind, size, mtime_ns, hash FROM notes WHERE path IN ({marks})",
        paths,
    )
    return {path: FileState(*rest) for path, *rest in rows}


def delete_files(conn: Connection, ids: Sequence[int]) -> None:
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        conn.execute(
            f"DELETE FROM chunks_fts WHERE rowid IN "
            f"(SELECT id FROM chunks WHERE note_id IN ({marks}))",
            part,
        )
        if has_vectors(conn):
            conn.execute(
                f"DELETE FROM chunk_vectors WHERE rowid IN "
                f"(SELECT id FROM chunks WHERE note_id IN ({marks}))",
                part,
            )
        for table in ("chunks", *_NOTE_TABLES):
            conn.execute(f"DELETE FROM {table} WHERE note_id IN ({marks})", part)
        conn.execute(f"DELETE FROM links WHERE src_id IN ({marks})", part)
        conn.execute(f"DELETE FROM notes WHERE id IN ({marks})", part)


def update_stat(conn: Connection, file_id: int, size: int, mtime_ns: int) -> None:
    conn.execute("UPDATE notes SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id))


def insert_attachment(conn: Connection, path: str, size: int, mtime_ns: int) -> None:
    title = path.rsplit("/", 1)[-1]
    conn.execute(
        "INSERT INTO notes(path, kind, key, title, folded_title, size, mtime_ns)"
        " VALUES (?, 'attachment', ?, ?, ?, ?, ?)",
        (path, name_key(path), title, fold(title), size, mtime_ns),
    )


def _note_date(note: ParsedNote) -> str | None:
    for key in ("date", "created", "captured_at"):
        value = note.frontmatter.get(key)
        if isinstance(value, str) and value[:4].isdigit():
            return value
    return None


def insert_note(
    conn: Connection,
    note: ParsedNote,
    size: int,
    mtime_ns: int,
    digest: str,
    resolutions: Sequence[LinkResolution],
) -> int:
    """Insert a parsed note with its chunks, links and metadata; returns its id."""
    cur = conn.execute(
        "INSERT INTO notes(path, kind, key, title, folded_title, size, mtime_ns, hash, date,"
        " frontmatter, aliases, warnings, line_count) VALUES (?, 'note', ?, ?, ?, ?, ?, ?, ?, ?,"
        " ?, ?, ?)",
        (
            note.path,
            name_key(note.path),
            note.title,
            fold(note.title),
            size,
            mtime_ns,
            digest,
            _note_date(note),
            json.dumps(note.frontmatter, ensure_ascii=False, default=str),
            json.dumps(list(note.aliases), ensure_ascii=False),
            json.dumps(list(note.warnings), ensure_ascii=False),
            note.line_count,
        ),
    )
    note_id = int(cur.lastrowid or 0)
    conn.executemany(
        "INSERT INTO aliases(note_id, alias, alias_key) VALUES (?, ?, ?)",
        [(note_id, a, name_key(a)) for a in note.aliases],
    )
    conn.executemany(
        "INSERT INTO headings(note_id, level, text, norm, line, end_line)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (note_id, h.level, h.text, heading_key(h.text), h.line, h.end_line)
            for h in note.headings
        ],
    )
    conn.executemany(
        "INSERT INTO blocks(note_id, block_id, line) VALUES (?, ?, ?)",
        [(note_id, b.id, b.line) for b in note.blocks],
    )
    tag_rows: dict[str, int] = {}
    for tag in note.tags:
        tag_rows[tag] = 1
        parts = tag.split("/")
        for depth in range(1, len(parts)):
            tag_rows.setdefault("/".join(parts[:depth]), 0)
    conn.executemany(
        "INSERT INTO tags(note_id, tag, direct) VALUES (?, ?, ?)",
        [(note_id, t, d) for t, d in tag_rows.items()],
    )
    conn.executemany(
        "INSERT INTO tasks(note_id, line, status, checked, text, due, priority, done)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (note_id, t.line, t.status, int(t.checked), t.text, t.due, t.priority, t.done)
            for t in note.tasks
        ],
    )
    conn.executemany(
        "INSERT INTO fields(note_id, key, value, line, source) VALUES (?, ?, ?, ?, ?)",
        [(note_id, f.key, f.value, f.line, f.source) for f in note.fields],
    )
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
        "INSERT INTO chunks_fts(rowid, title, aliases, headings, tags, path, body)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                first_chunk + c.seq,
                note.title,
                aliases_text,
                " ".join(c.heading_path),
                tags_text,
                note.path,
                c.text,
            )
            for c in note.chunks
        ],
    )
    conn.executemany(
        "INSERT INTO links(src_id, line, kind, target, target_key, heading, block, display, embed,"
        " relation, dst_path, candidates, anchor_ok, alias_fix)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                note_id,
                link.line,
                link.kind,
                link.target,
                name_key(link.target) if link.target else "",
                link.heading,
                link.block,
                link.display,
                int(link.embed),
                link.relation,
                res.dst_path,
                json.dumps(list(res.candidates), ensure_ascii=False) if res.candidates else None,
                None if res.anchor_ok is None else int(res.anchor_ok),
                res.alias_fix,
            )
            for link, res in zip(note.links, resolutions, strict=True)
        ],
    )
    return note_id


def mark_dirty(conn: Connection, keys: Iterable[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO dirty_keys(key) VALUES (?)", [(k,) for k in keys])


def dirty_keys(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT key FROM dirty_keys")]


def clear_dirty(conn: Connection) -> None:
    conn.execute("DELETE FROM dirty_keys")


@dataclass(frozen=True)
class StoredLink:
    id: int
    src_path: str
    target: str
    heading: str | None
    block: str | None
    dst_path: str | None
    candidates: str | None
    anchor_ok: int | None
    alias_fix: str | None


_STORED_LINKS = (
    "SELECT l.id, n.path, l.target, l.heading, l.block, l.dst_path, l.candidates,"
    " l.anchor_ok, l.alias_fix FROM links l JOIN notes n ON n.id = l.src_id"
)


def stored_links(conn: Connection, where: str = "1") -> list[StoredLink]:
    """Links with their current resolution, filtered by a fixed SQL condition."""
    return [StoredLink(*r) for r in conn.execute(f"{_STORED_LINKS} WHERE {where}")]


def links_with_keys(conn: Connection, keys: Sequence[str]) -> list[StoredLink]:
    """Links whose target names one of `keys` (or, for "", the note itself)."""
    sql = _STORED_LINKS + " WHERE l.target_key IN ({marks})"
    return [StoredLink(*r) for r in _rows_in(conn, sql, keys)]


def update_resolutions(conn: Connection, rows: Sequence[tuple[int, LinkResolution]]) -> None:
    conn.executemany(
        "UPDATE links SET dst_path = ?, candidates = ?, anchor_ok = ?, alias_fix = ? WHERE id = ?",
        [
            (
                r.dst_path,
                json.dumps(list(r.candidates), ensure_ascii=False) if r.candidates else None,
                None if r.anchor_ok is None else int(r.anchor_ok),
                r.alias_fix,
                link_id,
            )
            for link_id, r in rows
        ],
    )


def anchors_of(conn: Connection, path: str) -> tuple[set[str], set[str]]:
    """(heading keys, folded block ids) of the note at `path`."""
    row = conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
    if row is None:
        return set(), set()
    heads = {r[0] for r in conn.execute("SELECT norm FROM headings WHERE note_id = ?", (row[0],))}
    blocks = {
        fold(r[0]) for r in conn.execute("SELECT block_id FROM blocks WHERE note_id = ?", (row[0],))
    }
    return heads, blocks


def alias_owners(conn: Connection) -> dict[str, str]:
    """alias key -> path of the note listing it (shortest path first when several do)."""
    owners: dict[str, str] = {}
    rows = conn.execute(
        "SELECT a.alias_key, n.path FROM aliases a JOIN notes n ON n.id = a.note_id"
        " ORDER BY length(n.path), n.path"
    )
    for key, path in rows:
        owners.setdefault(key, path)
    return owners


def replace_skipped(conn: Connection, skipped: dict[str, str]) -> None:
    conn.execute("DELETE FROM skipped")
    conn.executemany("INSERT INTO skipped(path, reason) VALUES (?, ?)", sorted(skipped.items()))


def keyword_chunks(
    conn: Connection, match: str, limit: int
) -> list[tuple[int, str, str, int, int, str, float]]:
    """Best chunks for an FTS5 query: (chunk id, path, title, start, end, heading, bm25)."""
    weights = ", ".join(str(w) for w in FTS_WEIGHTS)
    rows = conn.execute(
        f"SELECT rowid, bm25(chunks_fts, {weights}) AS rank FROM chunks_fts"
        " WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
        (match, limit),
    ).fetchall()
    if not rows:
        return []
    meta = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM chunks c"
            f" JOIN notes n ON n.id = c.note_id WHERE c.id IN ({','.join('?' * len(rows))})",
            [r[0] for r in rows],
        )
    }
    return [(rowid, *meta[rowid], rank) for rowid, rank in rows if rowid in meta]


def note_vector(conn: Connection, path: str) -> bytes | None:
    """The mean of a note's section vectors (float32 bytes), or None without vectors."""
    if not has_vectors(conn):
        return None
    rows = conn.execute(
        "SELECT v.embedding FROM chunks c JOIN notes n ON n.id = c.note_id"
        " JOIN chunk_vectors v ON v.rowid = c.id WHERE n.path = ?",
        (path,),
    ).fetchall()
    if not rows:
        return None
    matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    mean = matrix.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32).tobytes() if norm > 0 else None


def chunk_rows(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, str, int, int, str]]:
    """chunk id -> (path, title, start line, end line, heading)."""
    rows = _rows_in(
        conn,
        "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM chunks c"
        " JOIN notes n ON n.id = c.note_id WHERE c.id IN ({marks})",
        ids,
    )
    return {r[0]: r[1:] for r in rows}


def first_chunks_dated(
    conn: Connection, days: Sequence[str], limit: int
) -> list[tuple[int, str, str, int, int, str]]:
    """The first chunk of notes dated on one of `days` (ISO), by property, path or title."""
    if not days:
        return []
    likes = " OR ".join(["n.path LIKE ?"] * len(days))
    marks = ",".join("?" * len(days))
    return conn.execute(
        "SELECT c.id, n.path, n.title, c.start_line, c.end_line, c.heading FROM notes n"
        " JOIN chunks c ON c.note_id = n.id AND c.seq = 0"
        f" WHERE n.kind = 'note' AND (substr(n.date, 1, 10) IN ({marks}) OR {likes})"
        " ORDER BY n.path LIMIT ?",
        (*days, *(f"%{d}%" for d in days), limit),
    ).fetchall()


def note_facts(
    conn: Connection, paths: Sequence[str]
) -> dict[str, tuple[str | None, str, int, str]]:
    """path -> (date, front matter JSON, mtime_ns, direct tags joined by newlines)."""
    rows = _rows_in(
        conn,
        "SELECT n.path, n.date, n.frontmatter, n.mtime_ns,"
        " (SELECT group_concat(lower(tag), char(10)) FROM tags t WHERE t.note_id = n.id)"
        " FROM notes n WHERE n.path IN ({marks})",
        paths,
    )
    return {r[0]: (r[1], r[2], r[3], r[4] or "") for r in rows}


def links_among(conn: Connection, paths: Sequence[str]) -> list[tuple[str, str]]:
    """(source, target) links between notes of `paths`."""
    if not paths:
        return []
    marks = ",".join("?" * len(paths))
    return conn.execute(
        "SELECT DISTINCT n.path, l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
        f" WHERE n.path IN ({marks}) AND l.dst_path IN ({marks}) AND n.path != l.dst_path",
        (*paths, *paths),
    ).fetchall()


def chunk_bodies(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    return {i: body for i, (_, body) in chunk_texts(conn, ids).items()}


def snippets(conn: Connection, match: str, chunk_ids: Sequence[int]) -> dict[int, str]:
    """Highlighted snippets (matches between \\x02 and \\x03) for a few chunks of a query."""
    if not chunk_ids:
        return {}
    rows = conn.execute(
        "SELECT rowid, snippet(chunks_fts, 5, char(2), char(3), '…', 24) FROM chunks_fts"
        f" WHERE chunks_fts MATCH ? AND rowid IN ({','.join('?' * len(chunk_ids))})",
        (match, *chunk_ids),
    )
    return dict(rows.fetchall())


class GraphRows(NamedTuple):
    files: list[tuple[str, str, str]]  # path, kind, title
    tags: list[tuple[str, str]]  # path, tag (as written)
    # src, dst (None: wanted), target key, target as written, relation, embed
    links: list[tuple[str, str | None, str, str, str, int]]


def graph_rows(conn: Connection) -> GraphRows:
    """Everything the link graph is built from, in three queries."""
    return GraphRows(
        conn.execute("SELECT path, kind, title FROM notes ORDER BY path").fetchall(),
        conn.execute(
            "SELECT n.path, t.tag FROM tags t JOIN notes n ON n.id = t.note_id"
            " WHERE t.direct = 1 ORDER BY n.path, t.rowid"
        ).fetchall(),
        conn.execute(
            "SELECT n.path, l.dst_path, l.target_key, l.target, l.relation, l.embed"
            " FROM links l JOIN notes n ON n.id = l.src_id ORDER BY n.path, l.line, l.id"
        ).fetchall(),
    )


def alias_fix_links(
    conn: Connection,
) -> list[tuple[str, int, str, str | None, str | None, int, str | None, str]]:
    """Wanted links naming an alias: (src, line, target, heading, block, embed, display, fix)."""
    return conn.execute(
        "SELECT n.path, l.line, l.target, l.heading, l.block, l.embed, l.display, l.alias_fix"
        " FROM links l JOIN notes n ON n.id = l.src_id WHERE l.alias_fix IS NOT NULL"
        " ORDER BY n.path, l.line, l.id"
    ).fetchall()


def shared_note_keys(conn: Connection, paths: Iterable[str]) -> set[str]:
    """The name keys of `paths` that more than one file in the vault has."""
    keys = list({name_key(p) for p in paths})
    if not keys:
        return set()
    rows = conn.execute(
        f"SELECT key FROM notes WHERE key IN ({','.join('?' * len(keys))})"
        " GROUP BY key HAVING count(*) > 1",
        keys,
    )
    return {r[0] for r in rows}


def note_digest(conn: Connection, path: str) -> str | None:
    return scalar(conn, "SELECT hash FROM notes WHERE path = ?", (path,))  # type: ignore[no-any-return]


def decaying_notes(conn: Connection) -> list[tuple[str, str, int]]:
    """(path, front matter JSON, mtime_ns) of notes with a `decay:` property."""
    return conn.execute(
        "SELECT path, frontmatter, mtime_ns FROM notes WHERE kind = 'note'"
        " AND json_extract(frontmatter, '$.decay') IS NOT NULL ORDER BY path"
    ).fetchall()


def shared_labels(conn: Connection, max_notes: int) -> list[tuple[str, str]]:
    """(label, path) for tags and `key:: value` fields that at most `max_notes` notes share.

    Labels read `#tag` or `key:: value`; rare ones are evidence that two notes belong together.
    """
    return conn.execute(
        "WITH labels AS ("
        "  SELECT '#' || lower(t.tag) AS label, n.path FROM tags t"
        "  JOIN notes n ON n.id = t.note_id WHERE t.direct = 1"
        "  UNION"
        "  SELECT f.key || ':: ' || f.value, n.path FROM fields f JOIN notes n ON n.id = f.note_id"
        "  WHERE f.source = 'inline' AND length(f.value) BETWEEN 2 AND 80"
        "    AND f.value NOT LIKE '%[[%'"
        ") SELECT label, path FROM labels WHERE label IN ("
        "  SELECT label FROM labels GROUP BY label HAVING count(*) BETWEEN 2 AND ?"
        ") ORDER BY label, path",
        (max_notes,),
    ).fetchall()


def mentions(conn: Connection, phrase_words: Sequence[str], limit: int) -> list[tuple[str, int]]:
    """(path, chunk start line) of chunks whose text holds the words as a phrase."""
    if not phrase_words:
        return []
    phrase = " ".join(phrase_words).replace('"', "")
    return conn.execute(
        "SELECT n.path, c.start_line FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
        " JOIN notes n ON n.id = c.note_id WHERE chunks_fts MATCH ? ORDER BY f.rank LIMIT ?",
        (f'body : "{phrase}"', limit),
    ).fetchall()


# --------------------------------------------------------------------------- vectors


def chunk_hash(heading_path: Sequence[str], text: str) -> str:
    """What a chunk's vector is cached under: its heading path and text, not its note."""
    data = ("\x1f".join(heading_path) + "\x1e" + text).encode("utf-8")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def has_vectors(conn: Connection) -> bool:
    return bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'"
        ).fetchone()
    )


def ensure_vectors(conn: Connection, model: str, dim: int) -> None:
    """Make the vec0 table for `dim`-wide cosine vectors and record which model fills it."""
    if not has_vectors(conn):
        conn.execute(
            f"CREATE VIRTUAL TABLE chunk_vectors USING vec0("
            f"embedding float[{int(dim)}] distance_metric=cosine)"
        )
    set_meta(conn, "embed_model", model)
    set_meta(conn, "embed_dim", str(dim))


def drop_vectors(conn: Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS chunk_vectors")
    conn.execute("DELETE FROM meta WHERE key IN ('embed_model', 'embed_dim')")


def chunks_without_vectors(conn: Connection) -> list[tuple[int, str]]:
    """(chunk id, text hash) of every chunk with no vector yet."""
    if not has_vectors(conn):
        return conn.execute("SELECT id, text_hash FROM chunks ORDER BY id").fetchall()
    return conn.execute(
        "SELECT id, text_hash FROM chunks WHERE id NOT IN (SELECT rowid FROM chunk_vectors)"
        " ORDER BY id"
    ).fetchall()


def alias_keys(conn: Connection, ids: Sequence[int]) -> set[str]:
    """The name keys of the aliases notes `ids` list (links naming them may need a fix)."""
    return {
        r[0]
        for r in _rows_in(conn, "SELECT alias_key FROM aliases WHERE note_id IN ({marks})", ids)
    }


def cached_vectors(conn: Connection, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
    sql = "SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({marks})"
    return dict(_rows_in(conn, sql, hashes, before=(model,)))


def chunk_texts(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """(heading path, text) of chunks, from the text index that already holds them."""
    rows = _rows_in(
        conn, "SELECT rowid, headings, body FROM chunks_fts WHERE rowid IN ({marks})", ids
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def store_vectors(
    conn: Connection, model: str, rows: Sequence[tuple[int, str, bytes]], cache: bool = True
) -> None:
    """Attach vectors to chunks (chunk id, text hash, float32 bytes), caching new ones."""
    if cache:
        before = conn.total_changes
        conn.executemany(
            "INSERT OR IGNORE INTO embeddings(model, text_hash, vector) VALUES (?, ?, ?)",
            [(model, h, v) for _, h, v in rows],
        )
        added = conn.total_changes - before
        if added:  # each new text may have replaced one: what prune_embedding_cache weighs
            set_meta(conn, "cache_added", str(int(get_meta(conn, "cache_added") or 0) + added))
    conn.executemany(
        "INSERT OR REPLACE INTO chunk_vectors(rowid, embedding) VALUES (?, ?)",
        [(i, v) for i, _, v in rows],
    )


def prune_embedding_cache(
    conn: Connection, model: str, slack: float = 0.25, floor: int = 100
) -> bool:
    """Forget cached vectors no chunk uses any more (other models' are kept: switching back
    is then free), once enough new ones were cached since the last pruning to have left more
    than `slack` of the chunks' worth stale: the anti-join reads the whole cache (~0.25 s over
    126k sections), too slow to run after every one-note edit."""
    added = int(get_meta(conn, "cache_added") or 0)
    chunks = int(scalar(conn, "SELECT count(*) FROM chunks"))
    if added <= chunks * slack + floor:
        return False
    conn.execute(
        "DELETE FROM embeddings WHERE model = ? AND text_hash NOT IN"
        " (SELECT text_hash FROM chunks)",
        (model,),
    )
    set_meta(conn, "cache_added", "0")
    return True


def nearest_chunks(conn: Connection, vector: bytes, k: int) -> list[tuple[int, float]]:
    """(chunk id, cosine distance) of the k nearest chunks."""
    if not has_vectors(conn):
        return []
    return conn.execute(
        "SELECT rowid, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ?"
        " ORDER BY distance",
        (vector, k),
    ).fetchall()


def scalar(conn: Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


# ---- browsing (TUI, MCP)


def note_paths(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM notes WHERE kind = 'note'")]


def tag_counts(conn: Connection) -> list[tuple[str, int]]:
    """(tag, notes carrying it) with nested parents counted; spelled as most notes spell it."""
    rows = conn.execute(
        "SELECT min(tag), count(DISTINCT note_id) FROM tags GROUP BY lower(tag) ORDER BY lower(tag)"
    )
    return [(r[0], r[1]) for r in rows]


def note_summaries(conn: Connection, limit: int | None = None) -> list[tuple[Any, ...]]:
    """(path, title, date, mtime_ns, aliases JSON) of notes, newest file first."""
    sql = (
        "SELECT path, title, date, mtime_ns, aliases FROM notes WHERE kind = 'note'"
        " ORDER BY mtime_ns DESC, path"
    )
    if limit is not None:
        return conn.execute(sql + " LIMIT ?", (limit,)).fetchall()
    return conn.execute(sql).fetchall()


def vector_count(conn: Connection) -> int:
    return int(scalar(conn, "SELECT count(*) FROM chunk_vectors")) if has_vectors(conn) else 0


def iter_vectors(conn: Connection) -> Iterator[tuple[int, bytes]]:
    """Every chunk's id and vector, for an in-memory matrix."""
    if has_vectors(conn):
        yield from conn.execute("SELECT rowid, embedding FROM chunk_vectors")


def vector_ids(conn: Connection) -> list[int]:
    if not has_vectors(conn):
        return []
    return [r[0] for r in conn.execute("SELECT rowid FROM chunk_vectors")]


def vectors_of(conn: Connection, ids: Sequence[int]) -> tuple[list[int], list[bytes]]:
    rows = list(
        _rows_in(conn, "SELECT rowid, embedding FROM chunk_vectors WHERE rowid IN ({marks})", ids)
    )
    return [r[0] for r in rows], [r[1] for r in rows]


# --------------------------------------------------------------------------- personas


def notes_in_folder(conn: Connection, folder: str) -> list[tuple[str, str, str, str]]:
    """(path, title, front matter JSON, aliases JSON) of the notes directly inside `folder`."""
    prefix = f"{folder}/" if folder else ""
    # A range over the unique path index: every path that starts with "folder/".
    upper = prefix[:-1] + chr(ord("/") + 1) if prefix else "\U0010ffff"
    rows = conn.execute(
        "SELECT path, title, frontmatter, aliases FROM notes"
        " WHERE kind = 'note' AND path >= ? AND path < ? ORDER BY path",
        (prefix, upper),
    ).fetchall()
    return [r for r in rows if "/" not in r[0][len(prefix) :]]


def outgoing_links(
    conn: Connection, path: str
) -> list[tuple[int, str | None, str | None, str | None, str | None]]:
    """(line, target path, target kind, heading, block) of each link in the note, in order."""
    return conn.execute(
        "SELECT l.line, l.dst_path, d.kind, l.heading, l.block FROM links l"
        " JOIN notes n ON n.id = l.src_id LEFT JOIN notes d ON d.path = l.dst_path"
        " WHERE n.path = ? ORDER BY l.line, l.id",
        (path,),
    ).fetchall()


def heading_ranges(conn: Connection, path: str) -> list[tuple[int, str, int, int]]:
    """(level, text, line, end line) of the note's headings, in order."""
    return conn.execute(
        "SELECT h.level, h.text, h.line, h.end_line FROM headings h"
        " JOIN notes n ON n.id = h.note_id WHERE n.path = ? ORDER BY h.line",
        (path,),
    ).fetchall()


def property_values(conn: Connection, key: str) -> list[tuple[str, str]]:
    """(path, value) of every front matter property named `key`, by path."""
    return conn.execute(
        "SELECT n.path, f.value FROM fields f JOIN notes n ON n.id = f.note_id"
        " WHERE f.key = ? AND f.source = 'property' ORDER BY n.path",
        (key,),
    ).fetchall()


def fields_of(conn: Connection, paths: Sequence[str]) -> dict[str, list[tuple[str, str, int, str]]]:
    """path -> its fields as (key, value, line, source), in line order."""
    out: dict[str, list[tuple[str, str, int, str]]] = {p: [] for p in paths}
    rows = _rows_in(
        conn,
        "SELECT n.path, f.key, f.value, f.line, f.source FROM fields f"
        " JOIN notes n ON n.id = f.note_id WHERE n.path IN ({marks}) ORDER BY f.line, f.rowid",
        paths,
    )
    for path, key, value, line, source in rows:
        out[path].append((key, value, line, source))
    return out


def task_lines(conn: Connection, paths: Sequence[str]) -> set[tuple[str, int]]:
    """(path, line) of every task in the notes at `paths`."""
    rows = _rows_in(
        conn,
        "SELECT n.path, t.line FROM tasks t JOIN notes n ON n.id = t.note_id"
        " WHERE n.path IN ({marks})",
        paths,
    )
    return {(r[0], r[1]) for r in rows}
