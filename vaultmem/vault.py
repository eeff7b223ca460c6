"""The core API every front-end calls: open a vault, reindex, search, show, stats, doctor."""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

from vaultmem import graph as link_graph
from vaultmem import store
from vaultmem.config import CONFIG_TEMPLATE, GITIGNORE, Config, config_path, load_config
from vaultmem.errors import NoteNotFound, UsageError, VaultmemError, VaultNotFound
from vaultmem.indexer import Progress, ReindexReport, reindex
from vaultmem.parser import split_front_matter
from vaultmem.resolver import fold, heading_key, name_key
from vaultmem.scan import Unreadable
from vaultmem.scan import read_note as read_text
from vaultmem.search import (
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    Filters,
    Hit,
    Mode,
    Query,
    SearchResult,
    fts_queries,
    plain,
)
from vaultmem.search import run as search_run

if TYPE_CHECKING:
    from vaultmem.embed import Embedder
    from vaultmem.llm import LLM
    from vaultmem.vectors import VectorMatrix

__all__ = [
    "HIGHLIGHT_END",
    "HIGHLIGHT_START",
    "Hit",
    "SearchResult",
    "Vault",
    "fts_queries",
    "plain",
]

WANTED_PREFIX = "wanted:"
_GRAPHS: dict[tuple[str, int], nx.DiGraph] = {}


def _build_graph(rows: store.GraphRows) -> nx.DiGraph:
    tags: dict[str, list[str]] = {}
    for path, tag in rows.tags:
        tags.setdefault(path, []).append(tag)
    nodes = [
        link_graph.GraphNode(
            path, "note" if kind == "note" else "attachment", title, tuple(tags.get(path, ()))
        )
        for path, kind, title in rows.files
    ]
    wanted: dict[str, str] = {}
    edges: list[link_graph.GraphEdge] = []
    for src, dst, key, target, relation, embed in rows.links:
        if dst is None:
            dst = WANTED_PREFIX + key
            wanted.setdefault(dst, target)
        edges.append(link_graph.GraphEdge(src, dst, relation, bool(embed)))
    nodes += [link_graph.GraphNode(node, "wanted", title) for node, title in wanted.items()]
    return link_graph.build_graph(nodes, edges)


def locate_vault(given: str | None, cwd: Path | None = None) -> Path:
    """--vault, else $VAULTMEM_VAULT, else the current folder when it looks like a vault."""
    raw = given or os.environ.get("VAULTMEM_VAULT")
    if raw:
        path = Path(raw).expanduser()
        if not path.exists():
            raise VaultNotFound(f"vault folder {path} does not exist")
        if not path.is_dir():
            raise VaultNotFound(f"vault path {path} is not a folder")
        return path.resolve()
    here = (cwd or Path.cwd()).resolve()
    if (here / ".obsidian").is_dir() or (here / ".vaultmem").is_dir():
        return here
    raise VaultNotFound(
        "no vault given: pass --vault PATH, set VAULTMEM_VAULT, or run inside a vault "
        "(a folder holding .obsidian or .vaultmem; `vaultmem init` makes one)"
    )


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class OutLink:
    line: int
    written: str
    target: str
    relation: str
    kind: str
    embed: bool
    heading: str | None
    block: str | None
    display: str | None
    dst_path: str | None
    candidates: tuple[str, ...]
    anchor_ok: bool | None
    alias_fix: str | None

    @property
    def status(self) -> str:
        if self.dst_path is None:
            return "alias-fixable" if self.alias_fix else "wanted"
        if self.anchor_ok is False:
            return "missing-anchor"
        return "ambiguous" if len(self.candidates) > 1 else "resolved"


@dataclass(frozen=True)
class Backlink:
    src_path: str
    line: int
    relation: str
    anchor: str | None
    context: str


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
class NoteInfo:
    path: str
    title: str
    kind: str
    size: int
    line_count: int
    date: str | None
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    frontmatter: dict[str, object]
    warnings: tuple[str, ...]
    headings: tuple[HeadingInfo, ...]
    links: tuple[OutLink, ...]
    backlinks: tuple[Backlink, ...]
    tasks: tuple[TaskInfo, ...]


@dataclass(frozen=True)
class Stats:
    notes: int
    attachments: int
    chunks: int
    links: int
    resolved_links: int
    wanted_links: int
    wanted_notes: int
    ambiguous_links: int
    tags: int
    open_tasks: int
    done_tasks: int
    skipped: int
    notes_with_warnings: int
    index_path: str
    index_bytes: int
    schema_version: int
    last_reindex: float | None
    vectors: int = 0
    embed_model: str | None = None


@dataclass(frozen=True)
class LinkProblem:
    src_path: str
    line: int
    written: str
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class DoctorReport:
    warnings: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...]
    ambiguous: tuple[LinkProblem, ...]
    alias_fixable: tuple[LinkProblem, ...]
    missing_anchors: tuple[LinkProblem, ...]
    index_problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def healthy(self) -> bool:
        return not self.index_problems


def _written(
    target: str,
    heading: str | None,
    block: str | None,
    display: str | None,
    embed: bool,
    kind: str = "wiki",
) -> str:
    """A link as it reads in the note (normalised), for messages."""
    anchor = f"#^{block}" if block else (f"#{heading}" if heading else "")
    bang = "!" if embed else ""
    if kind == "markdown":
        return f"{bang}[{display or ''}]({target}{anchor})"
    shown = f"|{display}" if display else ""
    return f"{bang}[[{target}{anchor}{shown}]]"


@dataclass(frozen=True)
class NoteText:
    """A note's current text on disk: all of it, or the section under one heading."""

    path: str
    title: str
    heading: str | None
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    headings: tuple[str, ...] = ()
    body_line: int = 1  # the note's first line after its front matter (1: it has none)


@dataclass(frozen=True)
class FolderCount:
    path: str  # "" is the vault root
    notes: int  # including every subfolder's


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


def _summary(row: tuple[Any, ...]) -> NoteSummary:
    path, title, date, mtime_ns, aliases = row
    return NoteSummary(path, title, date, mtime_ns / 1e9, tuple(json.loads(aliases)))


# --------------------------------------------------------------------------- the vault


class Vault:
    """One vault and its index; every front-end goes through this."""

    def __init__(
        self, root: Path, index_path: Path | None = None, config: Config | None = None
    ) -> None:
        if not root.exists():
            raise VaultNotFound(f"vault folder {root} does not exist")
        if not root.is_dir():
            raise VaultNotFound(f"vault path {root} is not a folder")
        self.root = root
        self.config: Config = config if config is not None else load_config(root)
        self.index_path = index_path or self.config.index_path(root)
        self.embedder_spec: str | None = None  # set by front-ends from --embedder
        self.llm_spec: str | None = None
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        # One connection per thread: front-ends search from worker threads while another
        # thread reindexes, and a sqlite3 connection must not be shared between threads.
        self._local = threading.local()
        self._conns: list[store.Connection] = []
        self._conns_lock = threading.Lock()
        self._epoch = 0  # bumped when the index file may have been replaced
        self._matrix: VectorMatrix | None = None
        self._matrix_lock = threading.Lock()

    # ---- lifecycle

    def init(self) -> bool:
        """Write a default config (never overwriting one); True when it was created. Also
        `.vaultmem/.gitignore`, so Git keeps the config and never the derived index."""
        path = config_path(self.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        created = False
        for file, text in ((path, CONFIG_TEMPLATE), (path.parent / ".gitignore", GITIGNORE)):
            if not file.exists():
                tmp = file.with_name(file.name + ".tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, file)
                created = created or file == path
        return created

    def reindex(
        self,
        full: bool = False,
        progress: Progress | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        embed: bool = True,
        redo_embeddings: bool = False,
    ) -> ReindexReport:
        """Bring the index up to date, then give new chunks vectors (unless `embed` is off).
        Other threads may keep searching meanwhile (WAL readers see the last commit)."""
        report = reindex(
            self.root,
            self.index_path,
            self.config,
            full=full,
            progress=progress,
            wait=wait,
            on_wait=on_wait,
            embedder=self.embedder() if embed else None,
            redo_embeddings=redo_embeddings,
        )
        if full:
            # A full reindex empties a readable index in place, but replaces a damaged file
            # or one of another schema: every thread reopens its connection on next use.
            # (Other reindexes keep the file, and warm connections are worth keeping.)
            self._epoch += 1
        if self._matrix is not None:
            self._refresh_matrix()
        return report

    @property
    def conn(self) -> store.Connection:
        """This thread's connection to the index (opened on first use)."""
        conn: store.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.epoch != self._epoch:
            self._drop(conn)  # the index file was replaced (a full reindex) since it opened
            conn = None
        if conn is None:
            conn = store.open_existing(self.index_path)
            self._local.conn = conn
            self._local.epoch = self._epoch
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def _drop(self, conn: store.Connection) -> None:
        with self._conns_lock:
            if conn in self._conns:
                self._conns.remove(conn)
        with contextlib.suppress(store.Error):
            conn.close()

    def close(self) -> None:
        """Close every thread's connection; the next use opens a fresh one."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
            self._local = threading.local()
        for conn in conns:
            with contextlib.suppress(store.Error):
                conn.close()

    def warm(self, background: bool = True) -> threading.Thread | None:
        """Load the vectors into memory so meaning search skips sqlite-vec's full scan; for
        long-running front-ends. Search works as before until the load finishes."""
        if not background:
            self._refresh_matrix()
            return None
        thread = threading.Thread(target=self._refresh_matrix, name="vaultmem-warm", daemon=True)
        thread.start()
        return thread

    def _refresh_matrix(self) -> None:
        from vaultmem.vectors import VectorMatrix

        with self._matrix_lock:
            try:
                conn = self.conn
                old = self._matrix
                self._matrix = old.refresh(conn) if old else VectorMatrix.load(conn)
            except VaultmemError:
                self._matrix = None  # no index yet: search reports that itself

    # ---- finding notes

    def find_note(self, ref: str) -> str:
        """A note's path from a path, title or alias, or an attachment's from its file name
        (case-insensitive)."""
        ref = ref.strip()
        if not ref:
            raise UsageError("empty note name")
        conn = self.conn
        want = fold(ref.removesuffix(".md"))
        rows = conn.execute(
            "SELECT path FROM notes WHERE lower(path) IN (?, ?) OR lower(path) = ? || '.md'",
            (fold(ref), want, want),
        ).fetchall()
        rows = [r for r in rows if fold(r[0]).removesuffix(".md") == want] or rows
        if not rows:
            rows = conn.execute(
                "SELECT path FROM notes WHERE folded_title = ? AND kind = 'note'", (want,)
            ).fetchall()
        if not rows:
            rows = conn.execute(
                "SELECT n.path FROM aliases a JOIN notes n ON n.id = a.note_id"
                " WHERE lower(a.alias) = ?",
                (fold(ref),),
            ).fetchall()
        if not rows:  # an attachment by its file name ("Engelbart.jpg")
            rows = conn.execute(
                "SELECT path FROM notes WHERE folded_title = ? AND kind = 'attachment'",
                (fold(ref),),
            ).fetchall()
        paths = sorted({r[0] for r in rows}, key=lambda p: (len(p), p))
        if len(paths) == 1:
            return str(paths[0])
        if len(paths) > 1:
            raise NoteNotFound(
                f"'{ref}' names {len(paths)} notes: {', '.join(paths)}; give the path instead"
            )
        titles = [r[0] for r in conn.execute("SELECT title FROM notes WHERE kind = 'note'")]
        close = difflib.get_close_matches(ref, titles, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise NoteNotFound(
            f"no note named '{ref}'{hint} (`vaultmem search {json.dumps(ref)}` searches the text)"
        )

    # ---- the link graph

    def graph(self) -> nx.DiGraph:
        """The link graph of the current index, built once per index generation."""
        generation = store.generation(self.conn)
        key = (str(self.index_path), generation)
        cached = _GRAPHS.get(key)
        if cached is None:
            cached = _build_graph(store.graph_rows(self.conn))
            _GRAPHS.clear()  # one vault's graph at a time: they can be large
            _GRAPHS[key] = cached
        return cached

    def node(self, ref: str) -> str:
        """A graph node id from a note's path, title or alias, or a wanted note's name."""
        try:
            return self.find_note(ref)
        except NoteNotFound:
            wanted = WANTED_PREFIX + name_key(ref)
            if wanted in self.graph():
                return wanted
            raise

    def clusters(self, min_size: int = 3) -> list[link_graph.Cluster]:
        """Louvain communities (fixed seed), computed once per index generation and cached."""
        conn = self.conn
        generation = store.generation(conn)
        cached = store.get_meta(conn, "clusters")
        found: list[link_graph.Cluster] | None = None
        if cached:
            data = json.loads(cached)
            if data.get("generation") == generation:
                found = [link_graph.Cluster(tuple(m), h, tuple(t)) for m, h, t in data["clusters"]]
        if found is None:
            found = link_graph.clusters(self.graph(), min_size=1)
            payload = {
                "generation": generation,
                "clusters": [[c.members, c.hub, c.top_tags] for c in found],
            }
            with contextlib.suppress(store.OperationalError):  # a read-only index: no cache
                store.set_meta(conn, "clusters", json.dumps(payload, ensure_ascii=False))
        return [c for c in found if c.size >= min_size]

    # ---- reading

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: Mode = "hybrid",
        tag: str | None = None,
        path: str | None = None,
        since: dt.date | None = None,
        hyde: bool = False,
        now: dt.datetime | None = None,
    ) -> SearchResult:
        """Hybrid search by default (keywords and meaning fused), best section per note."""
        q = Query(query, limit, mode, Filters(tag, path, since), hyde, now)
        matrix = self._matrix
        if matrix is not None and matrix.generation != store.generation(self.conn):
            # the index changed (a reindex, maybe by another process): catch up on the
            # changed sections only; cheap, and never a full reload unless the model changed
            self._refresh_matrix()
            matrix = self._matrix
        return search_run(self.conn, q, self.embedder, self.llm, matrix)

    def embedder(self) -> Embedder:
        """The embedding model (--embedder, $VAULTMEM_EMBEDDER, config, else wordllama)."""
        with self._embedder_lock:  # loading a model twice from two threads wastes seconds
            if self._embedder is None:
                from vaultmem.embed import make_embedder

                self._embedder = make_embedder(self.embedder_spec or self.config.embedder)
            return self._embedder

    def llm(self) -> LLM | None:
        """The text model for HyDE (--llm, $VAULTMEM_LLM, config), or None."""
        from vaultmem.llm import make_llm

        return make_llm(self.llm_spec or self.config.llm)

    def show(self, ref: str) -> NoteInfo:
        path = self.find_note(ref)
        conn = self.conn
        row = conn.execute(
            "SELECT id, title, kind, size, line_count, date, aliases, frontmatter, warnings"
            " FROM notes WHERE path = ?",
            (path,),
        ).fetchone()
        note_id = row[0]
        tags = tuple(
            r[0]
            for r in conn.execute(
                "SELECT tag FROM tags WHERE note_id = ? AND direct = 1 ORDER BY rowid", (note_id,)
            )
        )
        headings = tuple(
            HeadingInfo(*r)
            for r in conn.execute(
                "SELECT level, text, line, end_line FROM headings WHERE note_id = ? ORDER BY line",
                (note_id,),
            )
        )
        tasks = tuple(
            TaskInfo(*r)
            for r in conn.execute(
                "SELECT line, status, text, due, priority FROM tasks WHERE note_id = ?"
                " ORDER BY line",
                (note_id,),
            )
        )
        return NoteInfo(
            path=path,
            title=row[1],
            kind=row[2],
            size=row[3],
            line_count=row[4],
            date=row[5],
            aliases=tuple(json.loads(row[6])),
            tags=tags,
            frontmatter=json.loads(row[7]),
            warnings=tuple(json.loads(row[8])),
            headings=headings,
            links=self._outgoing(note_id),
            backlinks=self.backlinks(path),
            tasks=tasks,
        )

    def read_note(self, ref: str, heading: str | None = None) -> NoteText:
        """A note's current text from disk, or one section of it (the heading matched the way
        Obsidian matches `[[Note#Heading]]`). Only indexed notes inside the vault are read."""
        if "\x00" in ref or (heading and "\x00" in heading):
            raise UsageError("a note name cannot contain a NUL byte")
        path = self.find_note(ref)
        lines = self.note_lines(path)
        title = str(store.scalar(self.conn, "SELECT title FROM notes WHERE path = ?", (path,)))
        ranges = store.heading_ranges(self.conn, path)
        headings = tuple(text for _, text, _, _ in ranges)
        whole = "\n".join(lines)
        body = split_front_matter(whole)[1] + 1
        if heading is None or not heading.strip():
            return NoteText(path, title, None, 1, len(lines), whole, headings, body)
        want = heading_key(heading.lstrip("#"))
        found = next((r for r in ranges if heading_key(r[1]) == want), None)
        if found is None:
            known = "; ".join(headings[:20]) or "it has no headings"
            raise NoteNotFound(f"{path} has no heading '{heading}' (headings: {known})")
        _, text, start, end = found
        end = min(end, len(lines))
        section = "\n".join(lines[start - 1 : end])
        return NoteText(path, title, text, start, end, section, headings, body)

    def note_lines(self, path: str) -> list[str]:
        """The current lines of an indexed note (`path` as the index has it), numbered as the
        index numbers them; a file that now leads outside the vault (a symlink swapped in
        since the last reindex) is refused."""
        file = self._inside(path)
        try:
            text = read_text(file).text
        except FileNotFoundError:
            raise NoteNotFound(
                f"{path} was deleted or moved since the last reindex; run `vaultmem reindex`"
            ) from None
        except Unreadable as exc:
            raise NoteNotFound(f"{path}: {exc}") from None
        # split on line ends only, as the parser counts lines (str.splitlines also splits on
        # form feeds and U+2028, which would shift every line number after them)
        lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()  # the final line end
        return lines

    def _inside(self, path: str) -> Path:
        """The file of an indexed note, refusing one that now leads outside the vault (a file
        replaced by a symlink since the last reindex)."""
        root = os.path.realpath(self.root)
        file = os.path.realpath(self.root / path)
        if not file.startswith(root.rstrip(os.sep) + os.sep):
            raise NoteNotFound(f"{path} leads outside the vault; vaultmem reads only inside it")
        return Path(file)

    # ---- browsing

    def folders(self) -> tuple[FolderCount, ...]:
        """Every folder holding notes, with how many notes it holds (subfolders included)."""
        counts: dict[str, int] = {}
        for path in store.note_paths(self.conn):
            parts = path.split("/")[:-1]
            counts[""] = counts.get("", 0) + 1
            for i in range(1, len(parts) + 1):
                folder = "/".join(parts[:i])
                counts[folder] = counts.get(folder, 0) + 1
        return tuple(FolderCount(p, n) for p, n in sorted(counts.items()))

    def tag_counts(self) -> tuple[TagCount, ...]:
        """Every tag with how many notes carry it (a nested tag counts for its parents)."""
        return tuple(TagCount(t, n) for t, n in store.tag_counts(self.conn))

    def recent(self, limit: int = 50) -> tuple[NoteSummary, ...]:
        """The most recently modified notes, newest first."""
        return tuple(_summary(r) for r in store.note_summaries(self.conn, limit))

    def note_names(self) -> tuple[NoteSummary, ...]:
        """Every note (title, path, aliases), for completion and pickers."""
        return tuple(_summary(r) for r in store.note_summaries(self.conn))

    def _outgoing(self, note_id: int) -> tuple[OutLink, ...]:
        rows = self.conn.execute(
            "SELECT line, target, relation, kind, embed, heading, block, display, dst_path,"
            " candidates, anchor_ok, alias_fix FROM links WHERE src_id = ? ORDER BY line, id",
            (note_id,),
        )
        return tuple(
            OutLink(
                line=r[0],
                written=_written(r[1], r[5], r[6], r[7], bool(r[4]), r[3]),
                target=r[1],
                relation=r[2],
                kind=r[3],
                embed=bool(r[4]),
                heading=r[5],
                block=r[6],
                display=r[7],
                dst_path=r[8],
                candidates=tuple(json.loads(r[9])) if r[9] else (),
                anchor_ok=None if r[10] is None else bool(r[10]),
                alias_fix=r[11],
            )
            for r in rows
        )

    def backlinks(self, ref_or_path: str) -> tuple[Backlink, ...]:
        path = ref_or_path if self._is_path(ref_or_path) else self.find_note(ref_or_path)
        rows = self.conn.execute(
            "SELECT n.path, l.line, l.relation, l.heading, l.block FROM links l"
            " JOIN notes n ON n.id = l.src_id WHERE l.dst_path = ? AND n.path != ?"
            " ORDER BY n.path, l.line",
            (path, path),
        ).fetchall()
        lines_of: dict[str, list[str]] = {}
        out: list[Backlink] = []
        for src, line, relation, heading, block in rows:
            if src not in lines_of:
                lines_of[src] = self._read_lines(src)
            text = lines_of[src]
            context = text[line - 1].strip() if 0 < line <= len(text) else ""
            anchor = f"^{block}" if block else heading
            out.append(Backlink(src, line, relation, anchor, context))
        return tuple(out)

    def _is_path(self, ref: str) -> bool:
        return bool(self.conn.execute("SELECT 1 FROM notes WHERE path = ?", (ref,)).fetchone())

    def _read_lines(self, path: str) -> list[str]:
        try:
            return self.note_lines(path)
        except NoteNotFound:
            return []  # a backlink's context is a courtesy: the link itself is from the index

    def stats(self) -> Stats:
        conn = self.conn

        def q(sql: str) -> int:
            return int(store.scalar(conn, sql) or 0)

        kinds = dict(conn.execute("SELECT kind, count(*) FROM notes GROUP BY kind").fetchall())
        last = store.get_meta(conn, "last_reindex")
        size = sum(
            os.path.getsize(str(self.index_path) + s)
            for s in ("", "-wal")
            if os.path.exists(str(self.index_path) + s)
        )
        return Stats(
            notes=kinds.get("note", 0),
            attachments=kinds.get("attachment", 0),
            chunks=q("SELECT count(*) FROM chunks"),
            links=q("SELECT count(*) FROM links"),
            resolved_links=q("SELECT count(*) FROM links WHERE dst_path IS NOT NULL"),
            wanted_links=q("SELECT count(*) FROM links WHERE dst_path IS NULL"),
            wanted_notes=q("SELECT count(DISTINCT target_key) FROM links WHERE dst_path IS NULL"),
            ambiguous_links=q("SELECT count(*) FROM links WHERE candidates IS NOT NULL"),
            tags=q("SELECT count(DISTINCT lower(tag)) FROM tags"),
            open_tasks=q("SELECT count(*) FROM tasks WHERE status = ' '"),
            done_tasks=q("SELECT count(*) FROM tasks WHERE checked = 1"),
            skipped=q("SELECT count(*) FROM skipped"),
            notes_with_warnings=q("SELECT count(*) FROM notes WHERE warnings != '[]'"),
            index_path=str(self.index_path),
            index_bytes=size,
            schema_version=store.SCHEMA_VERSION,
            last_reindex=float(last) if last else None,
            vectors=q("SELECT count(*) FROM chunk_vectors") if store.has_vectors(conn) else 0,
            embed_model=store.get_meta(conn, "embed_model"),
        )

    def alias_fixable(self) -> tuple[LinkProblem, ...]:
        """Wanted links naming another note's alias, each with its `[[Note|Alias]]` rewrite."""
        rows = store.alias_fix_links(self.conn)
        ambiguous_names = store.shared_note_keys(self.conn, {fix for *_, fix in rows})
        out = []
        for src, line, target, heading, block, embed, display, fix in rows:
            name = fix.removesuffix(".md")  # a vault path when several files share the name
            if name_key(fix) not in ambiguous_names:
                name = name.rsplit("/", 1)[-1]  # the bare title is unique: Obsidian's short form
            out.append(
                LinkProblem(
                    src,
                    line,
                    _written(target, heading, block, display, bool(embed)),
                    f"'{target}' is an alias of {fix}",
                    _written(name, heading, block, display or target, bool(embed)),
                )
            )
        return tuple(out)

    def doctor(self) -> DoctorReport:
        conn = self.conn
        warnings = tuple(
            (path, w)
            for path, ws in conn.execute(
                "SELECT path, warnings FROM notes WHERE warnings != '[]' ORDER BY path"
            )
            for w in json.loads(ws)
        )
        skipped = tuple(conn.execute("SELECT path, reason FROM skipped ORDER BY path").fetchall())

        def problems(where: str) -> list[Any]:
            return conn.execute(
                "SELECT n.path, l.line, l.target, l.heading, l.block, l.embed, l.display,"
                f" l.dst_path, l.candidates, l.kind FROM links l JOIN notes n ON n.id = l.src_id"
                f" WHERE {where} ORDER BY n.path, l.line"
            ).fetchall()

        ambiguous = tuple(
            LinkProblem(
                src,
                line,
                _written(t, h, b, d, bool(e), k),
                f"matches {', '.join(json.loads(c))}; resolved to {dst}",
            )
            for src, line, t, h, b, e, d, dst, c, k in problems("l.candidates IS NOT NULL")
        )
        alias_fixable = self.alias_fixable()
        missing = tuple(
            LinkProblem(
                src,
                line,
                _written(t, h, b, d, bool(e), k),
                f"{dst} has no {'block ^' + b if b else 'heading ' + repr(h)}",
            )
            for src, line, t, h, b, e, d, dst, c, k in problems("l.anchor_ok = 0")
        )
        index_problems: list[str] = []
        check = store.scalar(conn, "PRAGMA quick_check")
        if check != "ok":
            index_problems.append(f"SQLite quick_check: {check}; run `vaultmem reindex --full`")
        pending = int(store.scalar(conn, "SELECT count(*) FROM dirty_keys") or 0)
        if pending or store.get_meta(conn, "resolve_all") == "1":
            index_problems.append(
                "a reindex was interrupted before it re-resolved links; run `vaultmem reindex`"
            )
        return DoctorReport(
            warnings, skipped, ambiguous, alias_fixable, missing, tuple(index_problems)
        )
