"""The memory tables and reads: facts with their history, open tasks, episode notes, names.

Facts are read from each note at index time (`memory.facts.parse_facts`) into `facts`, one row
per current fact with its `was::` history as JSON, decoded here into the memory core's values.
Open loops, episodes and the names a message can use are reads over the note tables.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.memory.facts import Fact, HistoryEntry
from vaultmem.memory.values import key_id
from vaultmem.model import Task
from vaultmem.store.schema import Connection, rows_in


@dataclass(frozen=True)
class FactRow:
    """A current fact and the note it lives in."""

    path: str
    title: str
    fact: Fact


@dataclass(frozen=True)
class OpenTask:
    """An unchecked task as indexed, with its note's date (the loop's age when it has none)."""

    path: str
    date: str | None
    task: Task
    detail: str  # the non-task lines nested under it, on one line


@dataclass(frozen=True)
class EpisodeRow:
    """A note whose front matter says `type: episode`, with the start of its text."""

    path: str
    frontmatter: dict[str, object]
    body: str  # the text of its first section, for a summary


@dataclass(frozen=True)
class NamedNote:
    """A note and the names a message can call it by (title, aliases)."""

    path: str
    title: str
    aliases: tuple[str, ...]


# --------------------------------------------------------------------------- writing


def insert_facts(conn: Connection, note_id: int, facts: Sequence[Fact]) -> None:
    """A note's current facts, each with its history (newest first) as JSON."""
    conn.executemany(
        "INSERT INTO facts(note_id, key, key_id, value, line, form, block, source, changed,"
        " history) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                note_id,
                f.key,
                f.key_id,
                f.value,
                f.line,
                f.form,
                f.block,
                f.source,
                f.changed.isoformat() if f.changed else None,
                json.dumps(
                    [
                        [h.value, h.until.isoformat() if h.until else None, h.source, h.line]
                        for h in f.history
                    ],
                    ensure_ascii=False,
                ),
            )
            for f in facts
        ],
    )


# --------------------------------------------------------------------------- reading facts


def _fact(row: Sequence[object]) -> FactRow:
    path, title, key, value, line, form, block, source, history = row
    entries = tuple(
        HistoryEntry(v, dt.date.fromisoformat(u) if u else None, s, ln)
        for v, u, s, ln in json.loads(str(history))
    )
    fact = Fact(str(key), str(value), int(str(line)), form, block, source, entries)  # type: ignore[arg-type]
    return FactRow(str(path), str(title), fact)


_FACT_COLUMNS = (
    "SELECT n.path, n.title, f.key, f.value, f.line, f.form, f.block, f.source, f.history"
    " FROM facts f JOIN notes n ON n.id = f.note_id"
)


def facts_of(conn: Connection, paths: Sequence[str], key: str | None = None) -> list[FactRow]:
    """The current facts of some notes (only `key`'s, given one), by path and line."""
    if key is None:
        rows = rows_in(conn, _FACT_COLUMNS + " WHERE n.path IN ({marks})", paths)
    else:
        rows = rows_in(
            conn,
            _FACT_COLUMNS + " WHERE f.key_id = ? AND n.path IN ({marks})",
            paths,
            before=(key_id(key),),
        )
    return sorted((_fact(r) for r in rows), key=lambda r: (r.path, r.fact.line))


def all_facts(
    conn: Connection,
    key: str | None = None,
    since: dt.date | None = None,
    body_only: bool = False,
) -> list[FactRow]:
    """Every current fact in the vault (of `key`; set on or after `since`: its newest `until`,
    else its note's file time; `body_only`: not front matter properties), newest change first."""
    sql = _FACT_COLUMNS + " WHERE 1"
    params: list[object] = []
    if body_only:
        sql += " AND f.form != 'property'"
    if key is not None:
        sql += " AND f.key_id = ?"
        params.append(key_id(key))
    if since is not None:
        # a fact without history changed when its note last did (as far as the index knows)
        sql += " AND coalesce(f.changed, date(n.mtime_ns / 1000000000, 'unixepoch')) >= ?"
        params.append(since.isoformat())
    sql += (
        " ORDER BY coalesce(f.changed, date(n.mtime_ns / 1000000000, 'unixepoch')) DESC,"
        " n.path, f.line"
    )
    return [_fact(r) for r in conn.execute(sql, params)]


def fact_changed_days(conn: Connection) -> dict[tuple[str, int], str]:
    """(path, line) -> the day a fact was last set, as its history or its note's time says."""
    rows = conn.execute(
        "SELECT n.path, f.line, coalesce(f.changed, date(n.mtime_ns / 1000000000, 'unixepoch'))"
        " FROM facts f JOIN notes n ON n.id = f.note_id"
    )
    return {(p, line): day for p, line, day in rows}


# --------------------------------------------------------------------------- loops, episodes


def open_tasks(conn: Connection, paths: Sequence[str] | None = None) -> list[OpenTask]:
    """Every unchecked task (`- [ ]`) in the vault, or in some notes, by path and line; none
    of a capture note (`type: capture`), whose items are candidates a review decides."""
    sql = (
        "SELECT n.path, n.date, t.detail, t.line, t.status, t.text, t.due, t.priority, t.done"
        " FROM tasks t JOIN notes n ON n.id = t.note_id WHERE t.status = ' '"
        " AND coalesce(lower(trim(json_extract(n.frontmatter, '$.type'))), '') != 'capture'"
    )
    if paths is None:
        rows = list(conn.execute(sql + " ORDER BY n.path, t.line"))
    else:
        rows = list(rows_in(conn, sql + " AND n.path IN ({marks})", paths))
        rows.sort(key=lambda r: (r[0], r[3]))
    return [OpenTask(p, d, Task(*rest), detail) for p, d, detail, *rest in rows]


def episode_rows(conn: Connection) -> list[EpisodeRow]:
    """Notes whose front matter `type` is `episode` (any case), with their first chunk's text."""
    rows = conn.execute(
        "SELECT n.path, n.frontmatter, (SELECT f.body FROM chunks c JOIN chunks_fts f"
        " ON f.rowid = c.id WHERE c.note_id = n.id ORDER BY c.seq LIMIT 1)"
        " FROM notes n WHERE n.kind = 'note'"
        " AND lower(trim(json_extract(n.frontmatter, '$.type'))) = 'episode' ORDER BY n.path"
    )
    return [EpisodeRow(p, json.loads(fm), body or "") for p, fm, body in rows]


# --------------------------------------------------------------------------- names


def named_notes(conn: Connection) -> list[NamedNote]:
    """Every note with its title and aliases, by path."""
    rows = conn.execute("SELECT path, title, aliases FROM notes WHERE kind = 'note' ORDER BY path")
    return [NamedNote(p, t, tuple(json.loads(a))) for p, t, a in rows]


def wanted_targets(conn: Connection) -> list[str]:
    """The distinct targets of links that resolve to no file (notes people mean to write)."""
    rows = conn.execute(
        "SELECT target, min(rowid) FROM links WHERE dst_path IS NULL AND target != ''"
        " GROUP BY target_key ORDER BY target_key"
    )
    return [t for t, _ in rows]
