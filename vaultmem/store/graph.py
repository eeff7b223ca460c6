"""What the link graph and the gap report read: every file, tag and link in bulk, and labels
(rare tags and fields) that notes share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from vaultmem.store.schema import Connection, snapshot


class GraphRows(NamedTuple):
    # Plain tuples, unlike the store's other rows: on MDN (14k files, 52k links) a frozen
    # dataclass per row took 0.29 s more, as long as reading the rows (0.30 s) and a fifth of
    # building the graph from them (1.5 s; measured on a loaded machine, target 1 s idle).
    files: list[tuple[str, str, str]]  # path, kind, title
    tags: list[tuple[str, str]]  # path, tag (as written)
    # src, dst (None: wanted), target key, target as written, relation, embed
    links: list[tuple[str, str | None, str, str, str, int]]


@dataclass(frozen=True)
class SharedLabel:
    label: str  # `#tag` or `key:: value`
    path: str


def graph_rows(conn: Connection) -> GraphRows:
    """Everything the link graph is built from, in three queries that see one state of the
    index (a reindex committing between them gave links from notes not yet read)."""
    with snapshot(conn):
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


def shared_labels(conn: Connection, max_notes: int) -> list[SharedLabel]:
    """Tags and `key:: value` fields that at least 2 and at most `max_notes` notes share,
    by label and path: rare ones are evidence that two notes belong together."""
    rows = conn.execute(
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
    )
    return [SharedLabel(*r) for r in rows]
