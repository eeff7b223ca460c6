"""What `related` reads: a note's links both ways, the notes sharing its link targets, sources
or tags, and how common each of those is."""

from __future__ import annotations

from collections.abc import Sequence

from vaultmem.store.schema import Connection, rows_in


def link_targets(conn: Connection, path: str) -> list[str]:
    """The notes a note links to (resolved, itself left out)."""
    rows = conn.execute(
        "SELECT DISTINCT l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
        " JOIN notes d ON d.path = l.dst_path AND d.kind = 'note'"
        " WHERE n.path = ? AND l.dst_path != n.path",
        (path,),
    )
    return [r[0] for r in rows]


def link_sources(conn: Connection, path: str) -> list[str]:
    """The notes linking to a note (itself left out)."""
    rows = conn.execute(
        "SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE l.dst_path = ? AND n.path != ?",
        (path, path),
    )
    return [r[0] for r in rows]


def in_degrees(conn: Connection, paths: Sequence[str]) -> dict[str, int]:
    """path -> how many notes link to it."""
    rows = rows_in(
        conn,
        "SELECT dst_path, count(DISTINCT src_id) FROM links WHERE dst_path IN ({marks})"
        " GROUP BY dst_path",
        list(paths),
    )
    return {r[0]: r[1] for r in rows}


def out_degrees(conn: Connection, paths: Sequence[str]) -> dict[str, int]:
    """path -> how many notes it links to."""
    rows = rows_in(
        conn,
        "SELECT n.path, count(DISTINCT l.dst_path) FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE n.path IN ({marks}) AND l.dst_path IS NOT NULL GROUP BY n.path",
        list(paths),
    )
    return {r[0]: r[1] for r in rows}


def linking_to(conn: Connection, targets: Sequence[str]) -> list[tuple[str, str]]:
    """(source, target) for every note linking to one of the targets."""
    return list(
        rows_in(
            conn,
            "SELECT DISTINCT n.path, l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
            " WHERE l.dst_path != n.path AND l.dst_path IN ({marks})",
            list(targets),
        )
    )


def linked_from(conn: Connection, sources: Sequence[str]) -> list[tuple[str, str]]:
    """(source, target) for every note one of the sources links to."""
    return list(
        rows_in(
            conn,
            "SELECT DISTINCT n.path, l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
            " JOIN notes d ON d.path = l.dst_path AND d.kind = 'note'"
            " WHERE l.dst_path != n.path AND n.path IN ({marks})",
            list(sources),
        )
    )


def tags_with_counts(conn: Connection, path: str) -> list[tuple[str, int]]:
    """A note's own tags (lower-cased), each with how many notes carry it."""
    rows = conn.execute(
        "SELECT lower(t.tag), (SELECT count(DISTINCT o.note_id) FROM tags o"
        "  WHERE lower(o.tag) = lower(t.tag) AND o.direct = 1)"
        " FROM tags t JOIN notes n ON n.id = t.note_id WHERE n.path = ? AND t.direct = 1",
        (path,),
    )
    return list(dict.fromkeys((r[0], r[1]) for r in rows))


def tagged(conn: Connection, tags: Sequence[str]) -> list[tuple[str, str]]:
    """(path, tag) for the notes carrying one of the tags (lower-cased)."""
    return list(
        rows_in(
            conn,
            "SELECT DISTINCT n.path, lower(t.tag) FROM tags t JOIN notes n ON n.id = t.note_id"
            " WHERE t.direct = 1 AND lower(t.tag) IN ({marks})",
            list(tags),
        )
    )


def note_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM notes WHERE kind = 'note'").fetchone()[0])
