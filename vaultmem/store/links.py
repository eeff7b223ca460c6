"""The links table and link resolution's bookkeeping: writing a note's links, re-resolving them
(dirty target keys, anchors, aliases), and every read of links (outgoing, backlinks, problems)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from vaultmem.model import ParsedNote
from vaultmem.resolver import fold, name_key
from vaultmem.store.schema import Connection, marks, rows_in

# --------------------------------------------------------------------------- rows


# Slots on the rows a reindex holds by the tens of thousands (every link of MDN, 52k, on a cold
# run or a change of link rules): without them they took 4 MB more than tuples did.
@dataclass(frozen=True, slots=True)
class LinkResolution:
    dst_path: str | None
    candidates: tuple[str, ...]
    anchor_ok: bool | None
    alias_fix: str | None


@dataclass(frozen=True, slots=True)
class StoredLink:
    """A link as the resolver sees it: where it points and how it is resolved now."""

    id: int
    src_path: str
    target: str
    heading: str | None
    block: str | None
    resolution: LinkResolution


@dataclass(frozen=True, slots=True)  # a reindex caches one per note
class Anchors:
    """What `[[Note#Heading]]` and `[[Note#^block]]` links into a note can name."""

    headings: frozenset[str]  # heading keys
    blocks: frozenset[str]  # folded block ids


@dataclass(frozen=True)
class LinkRow:
    """One link written in a note, with its resolution (and the kind of file it reaches)."""

    line: int
    target: str
    relation: str
    kind: str  # wiki | markdown | property
    embed: bool
    heading: str | None
    block: str | None
    display: str | None
    dst_path: str | None  # None: a wanted note
    dst_kind: str | None  # note | attachment | None
    candidates: tuple[str, ...]  # every file the name matched, when several did
    anchor_ok: bool | None
    alias_fix: str | None


@dataclass(frozen=True)
class BacklinkRow:
    src_path: str
    line: int
    relation: str
    heading: str | None
    block: str | None


@dataclass(frozen=True)
class ProblemLink:
    """A link `doctor` reports: ambiguous, naming a missing anchor, or naming an alias."""

    src_path: str
    line: int
    kind: str
    target: str
    heading: str | None
    block: str | None
    display: str | None
    embed: bool
    dst_path: str | None
    candidates: tuple[str, ...]
    alias_fix: str | None


def _decoded(candidates: str | None) -> tuple[str, ...]:
    return tuple(json.loads(candidates)) if candidates else ()


def _encoded(candidates: tuple[str, ...]) -> str | None:
    return json.dumps(list(candidates), ensure_ascii=False) if candidates else None


# --------------------------------------------------------------------------- writing


def insert_links(
    conn: Connection, note_id: int, note: ParsedNote, resolutions: Sequence[LinkResolution]
) -> None:
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
                _encoded(res.candidates),
                None if res.anchor_ok is None else int(res.anchor_ok),
                res.alias_fix,
            )
            for link, res in zip(note.links, resolutions, strict=True)
        ],
    )


def delete_links_from(conn: Connection, note_ids: Sequence[int]) -> None:
    conn.execute(f"DELETE FROM links WHERE src_id IN ({marks(note_ids)})", list(note_ids))


def mark_dirty(conn: Connection, keys: Iterable[str]) -> None:
    """Remember link-target keys whose links must be resolved again."""
    conn.executemany("INSERT OR IGNORE INTO dirty_keys(key) VALUES (?)", [(k,) for k in keys])


def dirty_keys(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT key FROM dirty_keys")]


def clear_dirty(conn: Connection) -> None:
    conn.execute("DELETE FROM dirty_keys")


def dirty_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM dirty_keys").fetchone()[0])


def update_resolutions(conn: Connection, rows: Sequence[tuple[int, LinkResolution]]) -> None:
    """Store new resolutions, by link id."""
    conn.executemany(
        "UPDATE links SET dst_path = ?, candidates = ?, anchor_ok = ?, alias_fix = ? WHERE id = ?",
        [
            (
                r.dst_path,
                _encoded(r.candidates),
                None if r.anchor_ok is None else int(r.anchor_ok),
                r.alias_fix,
                link_id,
            )
            for link_id, r in rows
        ],
    )


# --------------------------------------------------------------------------- resolving

_STORED_LINKS = (
    "SELECT l.id, n.path, l.target, l.heading, l.block, l.dst_path, l.candidates,"
    " l.anchor_ok, l.alias_fix FROM links l JOIN notes n ON n.id = l.src_id"
)


def _stored(rows: Iterable[Any]) -> list[StoredLink]:
    return [
        StoredLink(
            id_,
            src,
            target,
            heading,
            block,
            LinkResolution(
                dst, _decoded(candidates), None if anchor_ok is None else bool(anchor_ok), fix
            ),
        )
        for id_, src, target, heading, block, dst, candidates, anchor_ok, fix in rows
    ]


def all_links(conn: Connection) -> list[StoredLink]:
    return _stored(conn.execute(_STORED_LINKS))


def links_to_check(conn: Connection) -> list[StoredLink]:
    """Links a cold reindex left for its final pass: wanted ones, and those with an anchor."""
    return _stored(
        conn.execute(
            _STORED_LINKS
            + " WHERE l.dst_path IS NULL OR l.heading IS NOT NULL OR l.block IS NOT NULL"
        )
    )


def links_with_keys(conn: Connection, keys: Sequence[str]) -> list[StoredLink]:
    """Links whose target names one of `keys` (or, for "", the note itself)."""
    return _stored(rows_in(conn, _STORED_LINKS + " WHERE l.target_key IN ({marks})", keys))


def anchors_of(conn: Connection, path: str) -> Anchors:
    """The heading keys and block ids of the note at `path`."""
    row = conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
    if row is None:
        return Anchors(frozenset(), frozenset())
    heads = {r[0] for r in conn.execute("SELECT norm FROM headings WHERE note_id = ?", (row[0],))}
    blocks = {
        fold(r[0]) for r in conn.execute("SELECT block_id FROM blocks WHERE note_id = ?", (row[0],))
    }
    return Anchors(frozenset(heads), frozenset(blocks))


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


def alias_keys(conn: Connection, ids: Sequence[int]) -> set[str]:
    """The name keys of the aliases notes `ids` list (links naming them may need a fix)."""
    return {
        r[0] for r in rows_in(conn, "SELECT alias_key FROM aliases WHERE note_id IN ({marks})", ids)
    }


# --------------------------------------------------------------------------- reading

_LINK_ROWS = (
    "SELECT l.line, l.target, l.relation, l.kind, l.embed, l.heading, l.block, l.display,"
    " l.dst_path, d.kind, l.candidates, l.anchor_ok, l.alias_fix FROM links l"
    " JOIN notes n ON n.id = l.src_id LEFT JOIN notes d ON d.path = l.dst_path"
)


def outgoing(conn: Connection, path: str) -> tuple[LinkRow, ...]:
    """Every link written in the note at `path`, in reading order."""
    rows = conn.execute(_LINK_ROWS + " WHERE n.path = ? ORDER BY l.line, l.id", (path,))
    return tuple(
        LinkRow(
            r[0],
            r[1],
            r[2],
            r[3],
            bool(r[4]),
            r[5],
            r[6],
            r[7],
            r[8],
            r[9],
            _decoded(r[10]),
            None if r[11] is None else bool(r[11]),
            r[12],
        )
        for r in rows
    )


def backlinks(conn: Connection, path: str) -> list[BacklinkRow]:
    """Links from other files to the file at `path`, by source path and line."""
    rows = conn.execute(
        "SELECT n.path, l.line, l.relation, l.heading, l.block FROM links l"
        " JOIN notes n ON n.id = l.src_id WHERE l.dst_path = ? AND n.path != ?"
        " ORDER BY n.path, l.line",
        (path, path),
    )
    return [BacklinkRow(*r) for r in rows]


def links_among(conn: Connection, paths: Sequence[str]) -> list[tuple[str, str]]:
    """(source, target) pairs of the links between notes of `paths`."""
    if not paths:
        return []
    in_list = marks(paths)
    return conn.execute(
        "SELECT DISTINCT n.path, l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
        f" WHERE n.path IN ({in_list}) AND l.dst_path IN ({in_list}) AND n.path != l.dst_path",
        (*paths, *paths),
    ).fetchall()


_PROBLEMS = (
    "SELECT n.path, l.line, l.kind, l.target, l.heading, l.block, l.display, l.embed,"
    " l.dst_path, l.candidates, l.alias_fix FROM links l JOIN notes n ON n.id = l.src_id"
)


def _problems(rows: Iterable[Any]) -> list[ProblemLink]:
    return [
        ProblemLink(
            src, line, kind, target, heading, block, display, bool(embed), dst, _decoded(c), fix
        )
        for src, line, kind, target, heading, block, display, embed, dst, c, fix in rows
    ]


def ambiguous_links(conn: Connection) -> list[ProblemLink]:
    """Links whose name matched several files, by source path and line."""
    return _problems(
        conn.execute(_PROBLEMS + " WHERE l.candidates IS NOT NULL ORDER BY n.path, l.line")
    )


def broken_anchor_links(conn: Connection) -> list[ProblemLink]:
    """Links to a heading or block their target does not have, by source path and line."""
    return _problems(conn.execute(_PROBLEMS + " WHERE l.anchor_ok = 0 ORDER BY n.path, l.line"))


def alias_fix_links(conn: Connection) -> list[ProblemLink]:
    """Wanted links naming another note's alias (`alias_fix` is that note's path)."""
    return _problems(
        conn.execute(_PROBLEMS + " WHERE l.alias_fix IS NOT NULL ORDER BY n.path, l.line, l.id")
    )


def shared_note_keys(conn: Connection, paths: Iterable[str]) -> set[str]:
    """The name keys of `paths` that more than one file in the vault has."""
    keys = list({name_key(p) for p in paths})
    if not keys:
        return set()
    rows = conn.execute(
        f"SELECT key FROM notes WHERE key IN ({marks(keys)}) GROUP BY key HAVING count(*) > 1",
        keys,
    )
    return {r[0] for r in rows}


@dataclass(frozen=True)
class LinkCounts:
    links: int
    wanted_links: int


def link_counts(conn: Connection, note_ids: Sequence[int]) -> LinkCounts:
    """How many links the notes `note_ids` hold, and how many of them are wanted."""
    links = wanted = 0
    for total, unresolved in rows_in(
        conn,
        "SELECT count(*), count(*) - count(dst_path) FROM links WHERE src_id IN ({marks})",
        note_ids,
    ):
        links += total
        wanted += unresolved or 0
    return LinkCounts(links, wanted)


# Front matter keys that give a note's address on a documentation site (MDN, Hugo, Jekyll,
# Docusaurus, Obsidian Publish): its pages link to each other by that address.
ADDRESS_KEYS = ("slug", "permalink")


def linking_note_counts(conn: Connection, paths: Sequence[str]) -> dict[str, int]:
    """How many other notes link to each of `paths` (notes nobody links to are left out): by
    a link that resolves to it, or by an unresolved URL-style link whose path ends with its
    front matter `slug` or `permalink` (whole path parts, case folded): MDN's pages link to
    `/en-US/docs/Web/API/Fetch_API`, the page whose slug is `Web/API/Fetch_API`, and such a
    link resolves to no file. Ranking's link authority reads this; the link graph does not."""
    if not paths:
        return {}
    ids: dict[str, int] = {}
    by_key: dict[str, list[tuple[str, str]]] = {}  # an address's last part -> (address, path)
    columns = ", ".join(f"json_extract(frontmatter, '$.{k}')" for k in ADDRESS_KEYS)
    sql = f"SELECT path, id, {columns} FROM notes WHERE path IN ({{marks}})"
    for path, note_id, *values in rows_in(conn, sql, paths):
        ids[path] = note_id
        for value in values:
            address = fold(value).strip("/") if isinstance(value, str) else ""
            if address:
                by_key.setdefault(name_key(address), []).append(("/" + address, path))
    sources: dict[str, set[int]] = {}
    for dst, src in rows_in(
        conn, "SELECT dst_path, src_id FROM links WHERE dst_path IN ({marks})", paths
    ):
        if src != ids.get(dst):
            sources.setdefault(dst, set()).add(src)
    if by_key:
        # one row per target as written (MDN's 990 links to its CSS page are a few targets)
        for key, target, linking in rows_in(
            conn,
            "SELECT target_key, target, group_concat(DISTINCT src_id) FROM links"
            " WHERE +dst_path IS NULL AND target_key IN ({marks})"  # by links_key
            " GROUP BY target_key, target",
            list(by_key),
        ):
            where = "/" + fold(target).split("#", 1)[0].split("?", 1)[0].strip("/")
            for address, path in by_key.get(key, ()):
                if where.endswith(address):
                    found = {int(n) for n in str(linking).split(",")} - {ids[path]}
                    if found:
                        sources.setdefault(path, set()).update(found)
    return {p: len(s) for p, s in sources.items()}
