"""The index file: its schema and version, connections, transactions."""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3  # one driver for every connection: it can load sqlite-vec anywhere

from vaultmem.errors import IndexBusy, IndexDamaged, NoIndex, SchemaMismatch, VaultmemError

SCHEMA_VERSION = 4  # 3: facts, tasks.detail, chunks_fts.history; 4: notes.names and notes_fts
# In the SQLite header of every index vaultmem makes ("vmem"): how a full reindex knows a
# file is its own to replace, even when its pages are damaged past reading.
APPLICATION_ID = 0x766D656D
_HEADER = b"SQLite format 3\x00"
OperationalError = sqlite3.OperationalError
IntegrityError = sqlite3.IntegrityError
InterfaceError = sqlite3.InterfaceError
DataError = sqlite3.DataError
Error = sqlite3.Error
DatabaseError = sqlite3.DatabaseError
if TYPE_CHECKING:  # sqlean mirrors the stdlib API, whose types mypy knows
    from sqlite3 import Connection as Connection
else:
    Connection = sqlite3.Connection

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
    names TEXT NOT NULL DEFAULT '[]',  -- other names it goes by: H1, front matter title, folder
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
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
CREATE INDEX chunks_note ON chunks(note_id);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, aliases, headings, tags, path, body,
    history,                           -- a fact's `was::` lines: findable, weighing less
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- One row per note (rowid = notes.id): its names, and its whole text with its front matter
-- values, for the whole-note keyword match (words spread over sections). Contentless: only
-- bm25 is read from it, the text is in chunks_fts.
CREATE VIRTUAL TABLE notes_fts USING fts5(
    names, body, content = '', contentless_delete = 1,
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
    text TEXT NOT NULL, due TEXT, priority TEXT, done TEXT,
    detail TEXT NOT NULL DEFAULT ''     -- an open task's nested non-task lines, on one line
);
CREATE INDEX tasks_note ON tasks(note_id);
CREATE TABLE fields (
    note_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, line INTEGER NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX fields_note ON fields(note_id);
CREATE INDEX fields_key ON fields(key);
-- A note's current facts (memory.facts.parse_facts at index time); history: JSON
-- [[value, until, source, line], ...] newest first; changed: the newest `until`.
CREATE TABLE facts (
    note_id INTEGER NOT NULL, key TEXT NOT NULL, key_id TEXT NOT NULL, value TEXT NOT NULL,
    line INTEGER NOT NULL, form TEXT NOT NULL, block TEXT, source TEXT, changed TEXT,
    history TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX facts_note ON facts(note_id);
CREATE INDEX facts_key ON facts(key_id);
CREATE TABLE dirty_keys (key TEXT PRIMARY KEY);  -- link targets to re-resolve
CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""

# The tables holding one note's rows by note_id (chunks and links are deleted apart).
NOTE_TABLES = ("aliases", "headings", "blocks", "tags", "tasks", "fields", "facts")


def connect(path: Path, new: bool = False) -> Connection:
    """A connection to the index at `path` (`new`: a file being created)."""
    try:
        conn: Connection = sqlite3.connect(
            str(path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:  # the file or its folder closed to this account
        raise (closed_to_us(path, exc) or IndexDamaged(f"cannot open {path} ({exc})")) from exc
    try:
        if not new:  # before anything writes (WAL mode does): is this an index at all?
            conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:  # not SQLite, someone else's database, damaged
        conn.close()
        closed = closed_to_us(path, exc)
        if closed is not None:
            raise closed from exc
        if not new and not is_index(path):  # a full reindex would refuse to replace it
            raise SchemaMismatch(
                f"{path} is not a vaultmem index ({exc}), and vaultmem replaces only its own:"
                " move it away or pass another --index PATH, then run `vaultmem reindex`"
            ) from exc
        raise SchemaMismatch(
            f"{path} cannot be read as a vaultmem index ({exc}): run `vaultmem reindex --full`"
        ) from exc
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-65536")
    # sqlite-vec on every connection: any statement touching chunk_vectors needs it
    conn.enable_load_extension(True)
    conn.load_extension(_sqlite_vec_path())
    conn.enable_load_extension(False)
    return conn


def _sqlite_vec_path() -> str:
    """sqlite-vec's loadable extension, as `sqlite_vec.loadable_path()` names it, found without
    importing the package: its `__init__` imports numpy and the standard sqlite3 (0.15 s of a
    CLI start)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise VaultmemError("sqlite-vec is not installed: run `pip install sqlite-vec`")
    return os.path.normpath(os.path.join(os.path.dirname(spec.origin), "vec0"))


def create(path: Path) -> Connection:
    """Create an empty index at `path` (which must not exist)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path, new=True)
    # One script in one transaction: a crash leaves no half-made schema behind.
    conn.executescript(
        "BEGIN;"
        + f"PRAGMA application_id = {APPLICATION_ID};"
        + _SCHEMA
        + f"INSERT INTO meta(key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'),"
        + f" ('created_at', '{time.time()}');"
        + "COMMIT;"
    )
    return conn


def is_index(path: Path) -> bool:
    """Whether `path` holds an index vaultmem made, of any schema version, readable or not
    (then it is safe to replace): vaultmem's id in its SQLite header, or, for an index made
    before the id, vaultmem's own tables. An empty file counts (nothing is lost)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    if not header:
        return True
    if not header.startswith(_HEADER):
        return False
    if len(header) == 100 and int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return True
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not {"meta", "notes", "links", "dirty_keys"} <= tables:
                return False
            return bool(conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone())
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def reset(conn: Connection) -> None:
    """Empty the index in place, in the transaction under way (a full reindex runs in one,
    so readers keep the whole old index until the whole new one commits, never an empty or
    half-made one), else in one of its own. The generation counter carries on, so caches
    keyed by it (vector matrix, clusters) never mistake the new index for old.

    The embedding cache (vectors by model and text hash) is kept when it reads back whole: a
    section whose text is unchanged gets its vector back without being embedded again (what
    `reindex --full` is spared). It is read through first (`cache_readable`), so a damaged
    cache raises DatabaseError instead of passing damage on; a model whose cached vectors
    differ in size is dropped from it."""
    with transaction(conn):
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        after = int(row[0] if row else 0) + 1
        keep = cache_readable(conn)
        objects = conn.execute(
            "SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master"
            " WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 2 DESC, name"
        ).fetchall()
        for name, _ in objects:
            if not (keep and name == "embeddings"):
                conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        if keep:
            conn.execute(
                "DELETE FROM embeddings WHERE model IN (SELECT model FROM embeddings GROUP BY"
                " model HAVING min(length(vector)) != max(length(vector))"
                " OR min(length(vector)) = 0 OR min(length(vector)) % 4 != 0)"
            )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [
                ("schema_version", str(SCHEMA_VERSION)),
                ("created_at", str(time.time())),
                ("generation", str(after)),
            ],
        )


def _statements(script: str) -> list[str]:
    """The statements of a script of ours (no `;` inside a statement or a comment)."""
    lines = (line.split("--", 1)[0] for line in script.splitlines())
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


# What SQLite says when the index file, not the statement, is at fault.
_FILE_TROUBLE = (
    "malformed",
    "not a database",
    "no such table",
    "no such column",
    "disk i/o",
    "unable to open",
    "readonly",
    "database or disk is full",
    "corrupt",
)


def closed_to_us(path: Path, exc: Exception | None = None) -> IndexDamaged | None:
    """The error to show when SQLite failed on the index at `path` because this account may
    not read or write it or its folder (the permissions, a read-only disk), else None: a
    rebuild would fail the same way, so the message says what to change instead."""
    folder = path.parent
    journal = all(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
    if path.exists() and not os.access(path, os.R_OK):
        why = "this account may not read it"
    elif path.exists() and not os.access(path, os.W_OK):
        why = "it is read-only for this account"
    elif not os.access(folder, os.W_OK | os.X_OK) and not (path.exists() and journal):
        why = f"its folder {folder} is read-only for this account"
    else:
        return None
    said = f" ({exc})" if exc is not None else ""
    return IndexDamaged(
        f"cannot use the index at {path}{said}: {why}, and vaultmem writes to its index even"
        " to search it (SQLite's journal lives beside it). Fix the permissions"
        f" (`ls -ld {folder} {path}`), or keep the index where you can write with"
        " --index PATH (then run `vaultmem reindex`); your notes are untouched"
    )


def index_error(exc: Exception, path: Path) -> VaultmemError | None:
    """What a person is told when SQLite fails on the index at `path` (damaged pages, a busy
    file, a full disk, permissions), or None when the error is a bug of vaultmem's own SQL."""
    text = str(exc)
    lowered = text.lower()
    if "unable to open" in lowered or "readonly" in lowered:
        closed = closed_to_us(path, exc)
        if closed is not None:
            return closed
    if "locked" in lowered or "busy" in lowered:
        return IndexBusy(
            f"the index at {path} is busy ({text}): another process is writing it; try again"
        )
    if type(exc) is DatabaseError or any(t in lowered for t in _FILE_TROUBLE):
        return IndexDamaged(
            f"the index at {path} cannot be read ({text}): run `vaultmem reindex --full` to"
            " rebuild it (the notes are safe: the index is derived from them)"
        )
    return None


def probe_write(conn: Connection) -> None:
    """Raise SQLite's own error when the index cannot be written now (a read-only file or
    folder), changing nothing: a write into the vault checks this before it touches a note."""
    conn.execute("SAVEPOINT probe_write")
    try:
        # a write of the same value still takes the write lock, which a read-only file refuses
        conn.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    finally:
        conn.execute("ROLLBACK TO probe_write")
        conn.execute("RELEASE probe_write")


def cache_readable(conn: Connection) -> bool:
    """Whether the embedding cache exists and every row of it reads (a damaged page raises)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'"
    ).fetchone()
    if not exists:
        return False
    conn.execute("SELECT count(*), sum(length(vector)), max(text_hash) FROM embeddings").fetchone()
    return True


def open_existing(path: Path) -> Connection:
    """Open an index for reading, checking its schema version."""
    if path.is_dir():
        raise IndexDamaged(f"the index path {path} is a folder, not a file: pass --index FILE")
    if not path.exists():
        raise NoIndex(f"no index at {path} yet: run `vaultmem reindex`")
    conn = connect(path)
    check_schema(conn, path)
    return conn


def check_schema(conn: Connection, path: Path) -> None:
    """Refuse an index of another schema version (or none) with the command that rebuilds it."""
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
    """One write transaction (taken at once: two writers queue instead of deadlocking); a
    savepoint inside one already under way (a full reindex is one transaction)."""
    if conn.in_transaction:
        conn.execute("SAVEPOINT part")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK TO part")
            conn.execute("RELEASE part")
            raise
        conn.execute("RELEASE part")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def snapshot(conn: Connection) -> Iterator[None]:
    """Several reads that see one state of the index, even while a reindex commits between
    them (a read transaction: WAL keeps its snapshot until it ends). Inside a transaction
    already under way, that one."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def checkpoint(conn: Connection) -> None:
    """Fold the write-ahead log back into the index file, without waiting for readers (not
    inside a transaction: after the full reindex's one commits)."""
    if not conn.in_transaction:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


def scalar(conn: Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row of `sql`, or None."""
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def rows_in(
    conn: Connection, sql: str, values: Sequence[Any], before: Sequence[Any] = ()
) -> Iterator[Any]:
    """Rows of `sql`, whose `{marks}` is an IN list, over `values` 500 at a time (SQLite caps
    the number of parameters one statement takes)."""
    for start in range(0, len(values), 500):
        part = list(values[start : start + 500])
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), (*before, *part))


def marks(values: Sequence[Any]) -> str:
    """`?,?,?`: the placeholders of an IN list over `values`."""
    return ",".join("?" * len(values))
