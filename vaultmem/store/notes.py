"""The notes and attachments tables and what hangs off a note: aliases, headings, blocks, tags,
tasks, fields. Writing a parsed note, change detection, and every read of note metadata."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from vaultmem.memory.facts import Fact
from vaultmem.model import BlockId, Field, Heading, ParsedNote
from vaultmem.resolver import fold, heading_key, name_key
from vaultmem.store import links, memory, text, vectors
from vaultmem.store.schema import NOTE_TABLES, Connection, marks, rows_in, scalar

# --------------------------------------------------------------------------- rows


@dataclass(frozen=True, slots=True)
class FileState:
    """The stored row of a file that looks changed since the last reindex."""

    id: int
    kind: str
    size: int
    mtime_ns: int
    hash: str | None


@dataclass(frozen=True)
class NoteRow:
    """A note's (or attachment's) own row, JSON columns decoded."""

    path: str
    title: str
    kind: str
    size: int
    line_count: int
    date: str | None
    aliases: tuple[str, ...]
    frontmatter: dict[str, object]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class HeadingInfo:
    level: int
    text: str
    line: int
    end_line: int


@dataclass(frozen=True)
class TaskInfo:
    line: int
    status: str
    text: str
    due: str | None
    priority: str | None


@dataclass(frozen=True)
class TagCount:
    tag: str
    notes: int  # a nested tag `a/b` also counts for `a`


@dataclass(frozen=True)
class NoteSummary:
    path: str
    title: str
    date: str | None
    mtime: float
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class FolderNote:
    """A note directly inside a folder (personas are listed this way)."""

    path: str
    title: str
    frontmatter: dict[str, object]
    aliases: tuple[str, ...]


class NoteFacts(NamedTuple):
    """What ranking and personas know about a note besides its text.

    A NamedTuple, not a frozen dataclass: a search reads the facts of every candidate note (a
    few hundred), and a frozen dataclass cost ~4 us each against ~1 us.
    """

    date: str | None
    mtime_ns: int
    tags: tuple[str, ...]  # lower-cased, with the parents of nested tags
    frontmatter_json: str
    names: tuple[str, ...] = ()  # title, aliases, then its other names (text.other_names)

    @property
    def frontmatter(self) -> dict[str, object]:
        """The front matter, decoded here on each use (callers read it once): a search needs
        it only for the few notes with a `decay:` property."""
        decoded: dict[str, object] = json.loads(self.frontmatter_json)
        return decoded

    @property
    def may_decay(self) -> bool:
        """False when the front matter certainly has no `decay:` property (no decoding)."""
        return "decay" in self.frontmatter_json


@dataclass(frozen=True)
class FieldRow:
    """An inline `key:: value` field or a front matter property, as indexed."""

    key: str
    value: str
    line: int
    source: str  # inline | property


@dataclass(frozen=True)
class PropertyValue:
    path: str
    value: str  # a string as written, anything else as JSON

    @property
    def items(self) -> list[object]:
        """The value as a list: a list property's items, else the one value."""
        if self.value.startswith("["):
            try:
                decoded = json.loads(self.value)
            except json.JSONDecodeError:  # a string that starts with "[", e.g. a "[[link]]"
                return [self.value]
            return decoded if isinstance(decoded, list) else [decoded]
        return [self.value]


@dataclass(frozen=True)
class DecayingNote:
    path: str
    frontmatter: dict[str, object]
    mtime_ns: int

    @property
    def file_time(self) -> dt.datetime:
        """The file's modification time (a decay clock's start when the note has no date)."""
        return dt.datetime.fromtimestamp(self.mtime_ns / 1e9, dt.UTC)


# --------------------------------------------------------------------------- change detection


def file_stats(conn: Connection) -> dict[str, str]:
    """path -> "kind:size:mtime_ns" of every indexed file: what change detection compares.

    One string per file, built by SQLite: on every reindex this loads the whole vault's rows.
    """
    return dict(conn.execute("SELECT path, kind || ':' || size || ':' || mtime_ns FROM notes"))


def file_paths(conn: Connection) -> list[str]:
    """The path of every indexed file, notes and attachments (what links may resolve to)."""
    return [p for (p,) in conn.execute("SELECT path FROM notes")]


def file_states(conn: Connection, paths: Sequence[str]) -> dict[str, FileState]:
    """The stored rows of some files (those that look changed)."""
    rows = rows_in(
        conn,
        "SELECT path, id, kind, size, mtime_ns, hash FROM notes WHERE path IN ({marks})",
        paths,
    )
    return {path: FileState(*rest) for path, *rest in rows}


# --------------------------------------------------------------------------- writing


def delete_files(conn: Connection, ids: Sequence[int]) -> None:
    """Forget files and every row derived from them (chunks, vectors, links, metadata)."""
    has_vectors = vectors.has_vectors(conn)
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        text.delete_chunks(conn, part, has_vectors)
        in_list = marks(part)
        for table in NOTE_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE note_id IN ({in_list})", part)
        links.delete_links_from(conn, part)
        conn.execute(f"DELETE FROM notes WHERE id IN ({in_list})", part)


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
    resolutions: Sequence[links.LinkResolution],
    facts: Sequence[Fact] = (),
    details: Mapping[int, str] | None = None,
) -> int:
    """Insert a parsed note with its chunks, links, metadata and facts; returns its id."""
    cur = conn.execute(
        "INSERT INTO notes(path, kind, key, title, folded_title, size, mtime_ns, hash, date,"
        " frontmatter, aliases, names, warnings, line_count)"
        " VALUES (?, 'note', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            json.dumps(list(text.other_names(note)), ensure_ascii=False),
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
        "INSERT INTO tasks(note_id, line, status, checked, text, due, priority, done, detail)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                note_id,
                t.line,
                t.status,
                int(t.checked),
                t.text,
                t.due,
                t.priority,
                t.done,
                (details or {}).get(t.line, ""),
            )
            for t in note.tasks
        ],
    )
    conn.executemany(
        "INSERT INTO fields(note_id, key, value, line, source) VALUES (?, ?, ?, ?, ?)",
        [(note_id, f.key, f.value, f.line, f.source) for f in note.fields],
    )
    memory.insert_facts(conn, note_id, facts)
    text.insert_chunks(conn, note_id, note)
    links.insert_links(conn, note_id, note, resolutions)
    return note_id


# --------------------------------------------------------------------------- finding notes


def paths_spelled(conn: Connection, folded: str, stem: str) -> list[str]:
    """Files whose lower-cased path is `folded`, `stem` or `stem` + ".md"."""
    # each such path's last part is `folded`'s: its name key narrows the search to the few
    # files of that name through an index (lower(path) alone reads every row: 15-30 ms on
    # 14k files, most of a `fact set` on MDN)
    rows = conn.execute(
        "SELECT path FROM notes WHERE key = ?"
        " AND (lower(path) IN (?, ?) OR lower(path) = ? || '.md')",
        (name_key(folded), folded, stem, stem),
    )
    return [r[0] for r in rows]


def note_paths_titled(conn: Connection, folded_title: str, kind: str = "note") -> list[str]:
    """Files of `kind` (note | attachment) whose folded title is `folded_title`."""
    rows = conn.execute(
        "SELECT path FROM notes WHERE folded_title = ? AND kind = ?", (folded_title, kind)
    )
    return [r[0] for r in rows]


def note_paths_aliased(conn: Connection, alias: str) -> list[str]:
    """Notes listing an alias whose lower-cased spelling is `alias`."""
    rows = conn.execute(
        "SELECT n.path FROM aliases a JOIN notes n ON n.id = a.note_id WHERE lower(a.alias) = ?",
        (alias,),
    )
    return [r[0] for r in rows]


def note_titles(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT title FROM notes WHERE kind = 'note'")]


def is_file(conn: Connection, path: str) -> bool:
    """Whether the index holds a file (note or attachment) at exactly `path`."""
    return bool(conn.execute("SELECT 1 FROM notes WHERE path = ?", (path,)).fetchone())


# --------------------------------------------------------------------------- one note


def note(conn: Connection, path: str) -> NoteRow | None:
    row = conn.execute(
        "SELECT path, title, kind, size, line_count, date, aliases, frontmatter, warnings"
        " FROM notes WHERE path = ?",
        (path,),
    ).fetchone()
    if row is None:
        return None
    return NoteRow(
        path=row[0],
        title=row[1],
        kind=row[2],
        size=row[3],
        line_count=row[4],
        date=row[5],
        aliases=tuple(json.loads(row[6])),
        frontmatter=json.loads(row[7]),
        warnings=tuple(json.loads(row[8])),
    )


def title_of(conn: Connection, path: str) -> str | None:
    found = scalar(conn, "SELECT title FROM notes WHERE path = ?", (path,))
    return None if found is None else str(found)


def direct_tags(conn: Connection, path: str) -> tuple[str, ...]:
    """The tags written in the note (not their nested parents), in order."""
    rows = conn.execute(
        "SELECT t.tag FROM tags t JOIN notes n ON n.id = t.note_id"
        " WHERE n.path = ? AND t.direct = 1 ORDER BY t.rowid",
        (path,),
    )
    return tuple(r[0] for r in rows)


def headings_of(conn: Connection, path: str) -> tuple[HeadingInfo, ...]:
    """The note's headings with the last line of each one's section, in order."""
    rows = conn.execute(
        "SELECT h.level, h.text, h.line, h.end_line FROM headings h"
        " JOIN notes n ON n.id = h.note_id WHERE n.path = ? ORDER BY h.line",
        (path,),
    )
    return tuple(HeadingInfo(*r) for r in rows)


def tasks_of(conn: Connection, path: str) -> tuple[TaskInfo, ...]:
    rows = conn.execute(
        "SELECT t.line, t.status, t.text, t.due, t.priority FROM tasks t"
        " JOIN notes n ON n.id = t.note_id WHERE n.path = ? ORDER BY t.line",
        (path,),
    )
    return tuple(TaskInfo(*r) for r in rows)


def note_digest(conn: Connection, path: str) -> str | None:
    """The digest of the note's bytes when it was indexed."""
    found = scalar(conn, "SELECT hash FROM notes WHERE path = ?", (path,))
    return None if found is None else str(found)


def indexed_structure(conn: Connection, path: str, digest: str) -> ParsedNote | None:
    """The front matter, headings, block ids and fields the index holds for note `path`, as
    a ParsedNote (nothing else filled in), when it was indexed at revision `digest` and read
    without a warning; else None (parse the note). A write planned against the revision the
    index holds needs no second parse of it."""
    row = conn.execute(
        "SELECT id, title, frontmatter, warnings, line_count FROM notes"
        " WHERE path = ? AND hash = ? AND kind = 'note'",
        (path, digest),
    ).fetchone()
    if row is None or json.loads(row[3]):
        return None
    note_id = row[0]
    return ParsedNote(
        path,
        row[1],
        frontmatter=json.loads(row[2]),
        headings=tuple(
            Heading(*r)
            for r in conn.execute(
                "SELECT level, text, line, end_line FROM headings WHERE note_id = ? ORDER BY rowid",
                (note_id,),
            )
        ),
        blocks=tuple(
            BlockId(*r)
            for r in conn.execute(
                "SELECT block_id, line FROM blocks WHERE note_id = ? ORDER BY rowid", (note_id,)
            )
        ),
        fields=tuple(
            Field(*r)
            for r in conn.execute(
                "SELECT key, value, line, source FROM fields WHERE note_id = ? ORDER BY rowid",
                (note_id,),
            )
        ),
        line_count=row[4],
    )


# --------------------------------------------------------------------------- many notes


def note_paths(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM notes WHERE kind = 'note'")]


def persona_paths(conn: Connection) -> frozenset[str]:
    """The notes whose front matter says `type: persona` (any case), wherever they are."""
    rows = conn.execute(
        "SELECT n.path FROM fields f JOIN notes n ON n.id = f.note_id WHERE f.key = 'type'"
        " AND f.source = 'property' AND lower(trim(f.value)) = 'persona'"
    )
    return frozenset(r[0] for r in rows)


def tag_counts(conn: Connection) -> list[TagCount]:
    """Tags with the notes carrying them (nested parents counted), spelled as most notes do."""
    rows = conn.execute(
        "SELECT min(tag), count(DISTINCT note_id) FROM tags GROUP BY lower(tag) ORDER BY lower(tag)"
    )
    return [TagCount(r[0], r[1]) for r in rows]


def note_summaries(conn: Connection, limit: int | None = None) -> list[NoteSummary]:
    """Notes newest file first, with their titles, dates and aliases."""
    sql = (
        "SELECT path, title, date, mtime_ns, aliases FROM notes WHERE kind = 'note'"
        " ORDER BY mtime_ns DESC, path"
    )
    rows = conn.execute(sql + " LIMIT ?", (limit,)) if limit is not None else conn.execute(sql)
    return [
        NoteSummary(path, title, date, mtime_ns / 1e9, tuple(json.loads(aliases)))
        for path, title, date, mtime_ns, aliases in rows
    ]


def notes_in_folder(conn: Connection, folder: str) -> list[FolderNote]:
    """The notes directly inside `folder` ("" is the vault root), by path."""
    prefix = f"{folder}/" if folder else ""
    # A range over the unique path index: every path that starts with "folder/".
    upper = prefix[:-1] + chr(ord("/") + 1) if prefix else "\U0010ffff"
    rows = conn.execute(
        "SELECT path, title, frontmatter, aliases FROM notes"
        " WHERE kind = 'note' AND path >= ? AND path < ? ORDER BY path",
        (prefix, upper),
    )
    return [
        FolderNote(path, title, json.loads(fm), tuple(json.loads(aliases)))
        for path, title, fm, aliases in rows
        if "/" not in path[len(prefix) :]
    ]


def note_facts(conn: Connection, paths: Sequence[str]) -> dict[str, NoteFacts]:
    """path -> its date, file time, tags and front matter."""
    rows = rows_in(
        conn,
        "SELECT n.path, n.date, n.frontmatter, n.mtime_ns,"
        " (SELECT group_concat(lower(tag), char(10)) FROM tags t WHERE t.note_id = n.id),"
        " n.title, n.aliases, n.names FROM notes n WHERE n.path IN ({marks})",
        paths,
    )
    return {
        path: NoteFacts(
            date,
            mtime_ns,
            tuple(tags.split("\n")) if tags else (),
            fm,
            (title, *_json_list(aliases), *_json_list(names)),
        )
        for path, date, fm, mtime_ns, tags, title, aliases, names in rows
    }


def _json_list(value: str) -> list[str]:
    """A JSON list column; most notes' aliases and other names are `[]`: not decoded (a
    search reads a few hundred notes' facts, and json.loads was a quarter of that)."""
    return [] if value == "[]" else list(json.loads(value))


def fields_of(conn: Connection, paths: Sequence[str]) -> dict[str, list[FieldRow]]:
    """path -> its fields and properties, in line order."""
    out: dict[str, list[FieldRow]] = {p: [] for p in paths}
    rows = rows_in(
        conn,
        "SELECT n.path, f.key, f.value, f.line, f.source FROM fields f"
        " JOIN notes n ON n.id = f.note_id WHERE n.path IN ({marks}) ORDER BY f.line, f.rowid",
        paths,
    )
    for path, *rest in rows:
        out[path].append(FieldRow(*rest))
    return out


def task_lines(conn: Connection, paths: Sequence[str]) -> dict[str, set[int]]:
    """path -> the lines holding its tasks."""
    out: dict[str, set[int]] = {p: set() for p in paths}
    rows = rows_in(
        conn,
        "SELECT n.path, t.line FROM tasks t JOIN notes n ON n.id = t.note_id"
        " WHERE n.path IN ({marks})",
        paths,
    )
    for path, line in rows:
        out[path].add(line)
    return out


def property_values(conn: Connection, key: str) -> list[PropertyValue]:
    """Every front matter property named `key`, by path."""
    rows = conn.execute(
        "SELECT n.path, f.value FROM fields f JOIN notes n ON n.id = f.note_id"
        " WHERE f.key = ? AND f.source = 'property' ORDER BY n.path",
        (key,),
    )
    return [PropertyValue(*r) for r in rows]


def decaying_notes(conn: Connection) -> list[DecayingNote]:
    """Notes with a `decay:` property, by path."""
    rows = conn.execute(
        "SELECT path, frontmatter, mtime_ns FROM notes WHERE kind = 'note'"
        " AND json_extract(frontmatter, '$.decay') IS NOT NULL ORDER BY path"
    )
    return [DecayingNote(path, json.loads(fm), mtime_ns) for path, fm, mtime_ns in rows]
