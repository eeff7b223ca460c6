"""The core API every front-end calls: one `Vault` façade over the services that do the work.

`Vault` owns one vault's services and delegates to them: `Index` (connections, reindexing,
vectors in memory), `Notes` (finding, showing and reading notes, browsing), `LinkGraph` (the
graph and its communities), `health` (stats, doctor), `search`, `persona` and `gaps`. Caches
live in these instances, so two vaults in one process never share or evict each other's. The
result types front-ends render are importable from here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import inspect
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from vaultmem import edit, health, store
from vaultmem.config import Config, load_config, write_default_config
from vaultmem.embed_upgrade import Calls
from vaultmem.errors import IndexDamaged, SchemaMismatch, VaultmemError, VaultNotFound
from vaultmem.health import DoctorReport, LinkProblem, Stats
from vaultmem.index import Index
from vaultmem.indexer import Progress, ReindexReport
from vaultmem.linkgraph import WANTED_PREFIX, LinkGraph
from vaultmem.memories import Memory
from vaultmem.notes import (
    Backlink,
    FolderCount,
    HeadingInfo,
    NoteInfo,
    Notes,
    NoteSummary,
    NoteText,
    OutLink,
    TagCount,
    TaskInfo,
)
from vaultmem.persona import PersonaContext, PersonaInfo, find_persona, list_personas, load_persona
from vaultmem.query import loosened
from vaultmem.related import Related
from vaultmem.related import related as related_notes
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
from vaultmem.writer import Applied, Restored, Trashed, Writer

if TYPE_CHECKING:
    import networkx as nx  # loaded by the graph's own code paths: 0.2 s of a CLI start

    from vaultmem import embed_choice
    from vaultmem import graph as link_graph
    from vaultmem.capturing import Captures
    from vaultmem.embed import Embedder
    from vaultmem.embed_upgrade import Upgrade
    from vaultmem.gaps import GapsReport
    from vaultmem.llm import LLM
    from vaultmem.rerank import Reranker

__all__ = [
    "HIGHLIGHT_END",
    "HIGHLIGHT_START",
    "WANTED_PREFIX",
    "Applied",
    "Backlink",
    "DoctorReport",
    "FolderCount",
    "HeadingInfo",
    "Hit",
    "LinkProblem",
    "NoteInfo",
    "NoteSummary",
    "NoteText",
    "OutLink",
    "Restored",
    "SearchResult",
    "Stats",
    "TagCount",
    "TaskInfo",
    "Trashed",
    "Vault",
    "fts_queries",
    "locate_vault",
    "plain",
]


def locate_vault(given: str | None, cwd: Path | None = None) -> Path:
    """--vault, else $VAULTMEM_VAULT, else the current folder when it looks like a vault."""
    raw = given or os.environ.get("VAULTMEM_VAULT")
    if raw:
        path = Path(raw).expanduser()
        if not path.exists():
            raise VaultNotFound(f"vault folder {path} does not exist")
        if not path.is_dir():
            raise VaultNotFound(f"vault path {path} is not a folder")
        _readable_folder(path)
        return path.resolve()
    here = (cwd or Path.cwd()).resolve()
    if (here / ".obsidian").is_dir() or (here / ".vaultmem").is_dir():
        _readable_folder(here)
        return here
    raise VaultNotFound(
        "no vault given: pass --vault PATH, set VAULTMEM_VAULT, or run inside a vault "
        "(a folder holding .obsidian or .vaultmem; `vaultmem init` makes one)"
    )


def _readable_folder(path: Path) -> None:
    """Refuse a vault folder this account cannot list (`chmod 000`, another user's), with
    the reason, before anything reads it (its config, its notes) and fails without one."""
    try:
        with os.scandir(path):
            pass
        (path / ".vaultmem").exists()  # raises too when the folder cannot be searched
    except PermissionError as exc:
        raise VaultNotFound(
            f"cannot read the vault folder {path} ({exc.strerror}): check its permissions "
            f"(`ls -ld {path}`), or run vaultmem as the account that owns it"
        ) from exc


_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _storable(value: Any) -> Any:
    """Text as SQLite, the models and a UTF-8 file can take it: a lone surrogate (a byte of a
    command-line argument that is not UTF-8, or an escape in an agent's JSON) as U+FFFD, as
    the index names files whose names hold such bytes. Anything else as it is."""
    if isinstance(value, str) and not value.isascii() and _SURROGATE_RE.search(value):
        return _SURROGATE_RE.sub("\ufffd", value)
    return value


def _front_door(method: _F) -> _F:
    """`method`, with its text arguments made storable, and SQLite's errors about the index
    file (damaged pages, a busy file) raised as vaultmem's own, which every front-end shows
    as a message, not a traceback."""

    @functools.wraps(method)
    def said(self: Vault, *args: Any, **kwargs: Any) -> Any:
        args = tuple(map(_storable, args))
        kwargs = {k: _storable(v) for k, v in kwargs.items()}
        try:
            with self.calls:  # the upgrade's background thread waits while any is under way
                return method(self, *args, **kwargs)
        except store.Error as exc:
            error = store.index_error(exc, self.index_path)
            if error is None:
                raise  # vaultmem's own SQL is wrong: a bug, shown as one
            raise error from exc

    return cast(_F, said)


def _front_doors(cls: type[_T]) -> type[_T]:
    """Every public method of `cls` through `_front_door`: the one place front-ends' input
    and the index's failures are made safe, so no front-end needs to remember either."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, _front_door(member))
    return cls


# $VAULTMEM_RERANK, between --rerank/--no-rerank and the config's `rerank`
_RERANK_ENV: dict[str, bool | None] = {
    "1": True,
    "on": True,
    "true": True,
    "0": False,
    "off": False,
    "false": False,
}


@_front_doors
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
        self.calls = Calls()  # the calls under way, which the upgrade yields to
        self.config: Config = config if config is not None else load_config(root)
        self.index_path = index_path or self.config.index_path(root)
        self.embedder_spec: str | None = None  # set by front-ends from --embedder
        self.llm_spec: str | None = None
        self._embedder: Embedder | None = None
        self._embedder_for: str | None = None  # the index's model when auto chose _embedder
        self._embedder_lock = threading.Lock()
        self.rerank_choice: bool | None = None  # set by front-ends from --rerank/--no-rerank
        self._reranker: Reranker | None = None
        # the services, each holding its own caches
        self.index = Index(root, self.index_path, self.config)
        self.notes = Notes(root, self.index)
        self.linkgraph = LinkGraph(self.index, self.notes)
        self.writer = Writer(root, self.index, self.config, self.embedder)
        self.memory = Memory(self)

    @functools.cached_property
    def captures(self) -> Captures:
        """The capture service, made on first use: its modules (transcripts, extraction, the
        model client) are not loaded by the commands that never capture."""
        from vaultmem.capturing import Captures

        return Captures(self)

    @functools.cached_property
    def embed_upgrade(self) -> Upgrade:
        """The move of a vault past auto's limit to all-MiniLM-L6-v2 (vaultmem/embed_upgrade.py):
        `status()`, `step()`, `run()`; long-running front-ends run it in a `Background`."""
        from vaultmem.embed_upgrade import Upgrade

        return Upgrade(self)

    # ---- lifecycle

    def init(self) -> bool:
        """Write a default config (never overwriting one); True when it was created. Also
        `.vaultmem/.gitignore`, so Git keeps the config and never the derived index."""
        return write_default_config(self.root)

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
        return self.index.reindex(
            full=full,
            progress=progress,
            wait=wait,
            on_wait=on_wait,
            embedder=self._pick_embedder if embed else None,
            redo_embeddings=redo_embeddings,
        )

    @property
    def conn(self) -> store.Connection:
        """This thread's connection to the index (opened on first use)."""
        return self.index.conn

    def close(self) -> None:
        """Close every thread's connection; the next use opens a fresh one."""
        self.index.close()

    def reopen(self) -> None:
        """Open the index afresh in every thread on its next use: after another process's
        `reindex --full` replaced a damaged index or one of another schema, the connections
        still open would keep reading the old file."""
        self.index.reopen()

    def warm(self, background: bool = True) -> threading.Thread | None:
        """Load the vectors into memory so meaning search skips sqlite-vec's full scan; for
        long-running front-ends. Search works as before until the load finishes."""
        return self.index.warm(background)

    # ---- models

    def embedder(self) -> Embedder:
        """The embedding model (--embedder, $VAULTMEM_EMBEDDER, config), else `auto`'s choice
        for the index as it is (vaultmem/embed_choice.py: MiniLM for small vaults, wordllama
        beyond; a switch waits for the next reindex, or the upgrade's swap, which another
        process may make: auto's model follows the index's vectors)."""
        with self._embedder_lock:  # loading a model twice from two threads wastes seconds
            spec = self._wanted_embedder()
            if self._embedder is None or (spec is None and self._vectors_moved()):
                from vaultmem import embed_choice
                from vaultmem.embed import make_embedder

                if spec is None:
                    sections, model, previous = self._index_facts()
                    spec = embed_choice.for_search(
                        sections, model, previous, _minilm_installed(), self.auto_limit()
                    ).spec
                    self._embedder_for = model
                current = self._embedder
                if current is None or embed_choice.model_spec(current.name) != spec:
                    current = self._embedder = make_embedder(spec)
                return current
            return self._embedder

    def _vectors_moved(self) -> bool:
        """Whether the index's vectors are another model's than when auto chose the model."""
        try:
            return store.get_meta(self.conn, "embed_model") != self._embedder_for
        except VaultmemError:
            return False

    def named_embedder(self) -> str | None:
        """The model someone named (--embedder, $VAULTMEM_EMBEDDER, the config), or None for
        `auto`."""
        return self._wanted_embedder()

    def auto_limit(self) -> int:
        """The sections up to which `auto` takes MiniLM: the config's `embed_auto_limit`, else
        embed_choice.AUTO_LIMIT."""
        from vaultmem import embed_choice

        limit = self.config.embed_auto_limit
        return embed_choice.AUTO_LIMIT if limit is None else limit

    def _wanted_embedder(self) -> str | None:
        """The model someone named (--embedder, $VAULTMEM_EMBEDDER, the config), or None for
        `auto`."""
        from vaultmem import embed_choice

        spec = self.embedder_spec or self.config.embedder or os.environ.get("VAULTMEM_EMBEDDER")
        return None if embed_choice.is_auto(spec) else str(spec).strip()

    def _index_facts(self) -> tuple[int, str | None, embed_choice.Choice | None]:
        """The index's sections, its vectors' model and the choice recorded for it (0, None,
        None when there is no index yet)."""
        from vaultmem import embed_choice

        try:
            conn = self.conn
            return (
                store.section_count(conn),
                store.get_meta(conn, "embed_model"),
                embed_choice.recorded(conn),
            )
        except VaultmemError:
            return 0, None, None

    def _pick_embedder(
        self,
        sections: int,
        model: str | None,
        previous: embed_choice.Choice | None,
        again: bool,
    ) -> tuple[Embedder, embed_choice.Choice]:
        """The reindex's model, once the vault's size is known: the one named, else auto's
        (which may switch models, once, with a notice). Searches in this process then use it."""
        from vaultmem import embed_choice
        from vaultmem.embed import make_embedder

        spec = self._wanted_embedder()
        if spec is not None:
            choice = embed_choice.explicit(spec)
        else:
            installed = _minilm_installed()
            choice = embed_choice.decide(
                sections, model, previous, installed, self.auto_limit(), again=again
            )
        with self._embedder_lock:
            current = self._embedder
            if current is None or (
                spec is None and embed_choice.model_spec(current.name) != choice.spec
            ):
                current = self._embedder = make_embedder(choice.spec)
            if spec is None:
                self._embedder_for = current.name  # the model of the vectors about to be made
            return current, choice

    def reranker(self, wanted: bool | None = None) -> tuple[Reranker | None, str | None]:
        """The re-ranking step for a search, and a notice when it was asked for but cannot
        run. `wanted` (a search's own choice), else --rerank/--no-rerank, else
        $VAULTMEM_RERANK (on/off), else the config's `rerank` (off by default: it costs ~1.4 s
        of CPU a search, docs/BENCHMARKS.md)."""
        if wanted is None:
            wanted = self.rerank_choice
        if wanted is None:
            wanted = _RERANK_ENV.get(os.environ.get("VAULTMEM_RERANK", "").strip().lower())
        if wanted is None:
            wanted = self.config.rerank
        if not wanted:
            return None, None
        with self._embedder_lock:
            if self._reranker is None:
                from vaultmem.encoder import INSTALL_HINT, find_minilm

                if find_minilm() is None:
                    return None, f"re-ranking skipped: {INSTALL_HINT}"
                from vaultmem.rerank import Reranker

                self._reranker = Reranker()
            return self._reranker, None

    def llm(self) -> LLM | None:
        """The text model for HyDE (--llm, $VAULTMEM_LLM, config), or None."""
        from vaultmem.llm import make_llm

        return make_llm(self.llm_spec or self.config.llm)

    # ---- searching

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
        mtime: bool = False,
        personas: bool = False,
        rerank: bool | None = None,
        include_expired: bool = False,
        count_expired: bool = False,
    ) -> SearchResult:
        """Hybrid search by default (keywords and meaning fused), best section per note.

        `since` keeps the notes dated on or after a day (their `date` property, or a date in
        their path); with `mtime`, the files modified on or after it. Persona notes are left
        out unless `personas`, and notes past their decay tier's lifetime unless
        `include_expired`; with `count_expired`, the result says how many of those it left
        out that would be hits (`SearchResult.expired_hidden`, counted from the candidates
        the search ranked: no second search). `rerank`: read the best hits again with
        all-MiniLM-L6-v2 (None: as configured, see `reranker`)."""
        filters = Filters(tag, path, since, mtime, personas, include_expired)
        q = Query(query, limit, mode, filters, hyde, now, count_expired=count_expired)
        matrix = self.index.current_matrix()
        reranker, notice = self.reranker(rerank) if mode != "keyword" else (None, None)
        # one state of the index for the whole search: a swap of models (the upgrade,
        # vaultmem/embed_upgrade.py) commits before it or after it, never in between
        with store.snapshot(self.conn):
            result = search_run(
                self.conn,
                q,
                _once(self.embedder),  # as this snapshot sees it, on the worker thread too
                self.llm,
                matrix,
                reranker,
                beside=lambda: self.index.conn,
            )
        if notice:
            result = dataclasses.replace(result, notices=(*result.notices, notice))
        narrowed = tag is not None or path is not None or since is not None
        if not result.hits and not narrowed and (loose := loosened(query)) is not None:
            # a question quoting a title no note holds word for word: its words answer (not
            # with --tag/--path/--since, which, like an operator, keep the phrase exact)
            text, phrases = loose
            again = self.search(
                text, limit, mode, tag, path, since, hyde, now, mtime, personas, rerank,
                include_expired, count_expired,
            )  # fmt: skip
            if again.hits:
                quoted = ", ".join(f'"{p}"' for p in phrases)
                said = f"no note holds the exact phrase {quoted}: searched for its words instead"
                result = dataclasses.replace(
                    again, query=query, notices=(*result.notices, said, *again.notices)
                )
        return result

    # ---- reading notes

    def find_note(self, ref: str) -> str:
        """A note's path from a path, title or alias (case-insensitive)."""
        return self.notes.find_note(ref)

    def show(self, ref: str) -> NoteInfo:
        """What the index knows about a note: metadata, headings, links both ways, tasks."""
        return self.notes.show(ref)

    def read_note(self, ref: str, heading: str | None = None) -> NoteText:
        """A note's current text from disk, or one section of it (the heading matched the way
        Obsidian matches `[[Note#Heading]]`). Only indexed notes inside the vault are read."""
        return self.notes.read_note(ref, heading)

    def note_lines(self, path: str) -> list[str]:
        """The current lines of an indexed note, numbered as the index numbers them."""
        return self.notes.note_lines(path)

    def note_file(self, path: str) -> Path:
        """An indexed note's file as named on disk (NFD, odd bytes), e.g. for an editor."""
        return self.notes.note_file(path)

    def backlinks(self, ref_or_path: str) -> tuple[Backlink, ...]:
        """Links into a note from other files, each with its line's text as context."""
        return self.notes.backlinks(ref_or_path)

    # ---- browsing

    def folders(self) -> tuple[FolderCount, ...]:
        """Every folder holding notes, with how many notes it holds (subfolders included)."""
        return self.notes.folders()

    def tag_counts(self) -> tuple[TagCount, ...]:
        """Every tag with how many notes carry it (a nested tag counts for its parents)."""
        return self.notes.tag_counts()

    def recent(self, limit: int = 50) -> tuple[NoteSummary, ...]:
        """The most recently modified notes, newest first."""
        return self.notes.recent(limit)

    def note_names(self) -> tuple[NoteSummary, ...]:
        """Every note (title, path, aliases), for completion and pickers."""
        return self.notes.note_names()

    def related(self, ref: str, limit: int = 10) -> tuple[Related, ...]:
        """The notes most like a note (by meaning, shared links, co-citation, rare shared
        tags), best first, each with why."""
        path = self.find_note(ref)
        matrix = self.index.current_matrix()
        # one state of the index for the note's vector and the vectors it is compared with:
        # the upgrade's swap of models (vaultmem/embed_upgrade.py) lands before or after
        with store.snapshot(self.conn):
            return related_notes(self.conn, path, limit, matrix)

    # ---- the link graph

    def graph(self) -> nx.DiGraph:
        """The link graph of the current index, built once per index generation."""
        return self.linkgraph.graph()

    def node(self, ref: str) -> str:
        """A graph node id from a note's path, title or alias, or a wanted note's name."""
        return self.linkgraph.node(ref)

    def clusters(self, min_size: int = 3) -> list[link_graph.Cluster]:
        """Louvain communities (fixed seed), computed once per index generation and cached."""
        return self.linkgraph.clusters(min_size)

    def gaps(self, now: dt.datetime | None = None) -> GapsReport:
        """Every knowledge-gap class: orphans, dead ends, wanted notes, fragile links, ..."""
        from vaultmem.gaps import gaps_report

        return gaps_report(self, now)

    # ---- personas

    def personas(self) -> tuple[PersonaInfo, ...]:
        """Every persona note in the personas folder, by slug."""
        return list_personas(self)

    def find_persona(self, ref: str) -> PersonaInfo:
        """A persona by slug or alias (case-insensitive)."""
        return find_persona(self, ref)

    def load_persona(
        self, slug: str, budget: int | None = None, *, include_expired: bool = False
    ) -> PersonaContext:
        """A persona's note, facts and working set, ranked and cut to the budget (notes past
        their decay tier left out unless `include_expired`)."""
        return load_persona(self, slug, budget, include_expired=include_expired)

    # ---- health

    def stats(self) -> Stats:
        """How much the index holds, and how big its files are."""
        return health.stats(self.conn, self.index_path)

    def alias_fixable(self) -> tuple[LinkProblem, ...]:
        """Wanted links naming another note's alias, each with its `[[Note|Alias]]` rewrite."""
        return health.alias_fixable(self.conn)

    def skipped_files(self) -> tuple[tuple[str, str], ...]:
        """The files the last reindex skipped, by path, each with why."""
        return tuple((s.path, s.reason) for s in store.skipped_files(self.conn))

    def doctor(self) -> DoctorReport:
        """Parser warnings, skipped files, link problems, and problems of the index itself
        (an index that cannot even be opened is one of them, not an error)."""
        try:
            conn = self.conn
        except (SchemaMismatch, IndexDamaged) as exc:
            return health.unreadable(str(exc))
        return health.doctor(conn)

    # ---- changing notes
    #
    # Every write goes through here to the writer service (vaultmem/writer.py): it takes the
    # index lock, writes atomically with the note editor (vaultmem/edit/), refusing a note
    # changed since it was read, and reindexes exactly what it touched. Front-ends never
    # write files or call the reindex after a write themselves (tests/test_architecture.py).

    def read_for_edit(self, path: str) -> edit.NoteSource:
        """A note (vault path) read for editing: bytes once, digest, encoding, lines."""
        return self.writer.read_for_edit(path)

    def apply(
        self,
        change: edit.Change,
        *,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        embed: bool = True,
    ) -> Applied:
        """Write a planned change under the index lock, then reindex what it touched.

        ChangedOnDisk (exit 6) when the note changed since it was read; IndexBusy (exit 4)
        when the lock is held past `wait`; nothing is written in either case.
        """
        return self.writer.apply(change, wait=wait, on_wait=on_wait, embed=embed)

    def trash(
        self,
        path: str,
        *,
        expected_digest: str | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        now: dt.datetime | None = None,
    ) -> Trashed:
        """Move a note or attachment (vault path) to `.trash/` and drop it from the index."""
        return self.writer.trash(
            path, expected_digest=expected_digest, wait=wait, on_wait=on_wait, now=now
        )

    def list_trash(self) -> tuple[edit.TrashEntry, ...]:
        """Every file in `.trash/`, most recently trashed first."""
        return self.writer.list_trash()

    def restore(
        self,
        entry: str,
        *,
        to: str | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> Restored:
        """Move a trash entry back (never over an existing file) and index it again."""
        return self.writer.restore(entry, to=to, wait=wait, on_wait=on_wait)

    def purge(
        self,
        *,
        older_than: dt.timedelta | None = None,
        entries: tuple[str, ...] | None = None,
        now: dt.datetime | None = None,
    ) -> tuple[edit.TrashEntry, ...]:
        """Delete trash entries for good: the named ones, else those older than `older_than`
        (30 days by default)."""
        if older_than is None:
            return self.writer.purge(entries=entries, now=now)
        return self.writer.purge(older_than=older_than, entries=entries, now=now)


def _once(make: Callable[[], _T]) -> Callable[[], _T]:
    """`make`, called at most once (from any thread), its answer kept."""
    made: list[_T] = []
    lock = threading.Lock()

    def once() -> _T:
        with lock:
            if not made:
                made.append(make())
            return made[0]

    return once


def _minilm_installed() -> bool:
    """Whether a package that ships all-MiniLM-L6-v2 is installed (found without loading it)."""
    from vaultmem.encoder import find_minilm

    return find_minilm() is not None
