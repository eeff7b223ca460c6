"""Reindexing: bring the derived index in line with the vault, touching only what changed."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import multiprocessing
import os
import re
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from vaultmem import store
from vaultmem.config import Config, FrontMatterLimits
from vaultmem.errors import IndexBusy, SchemaMismatch, UsageError, VaultmemError
from vaultmem.memory.facts import Fact, parse_facts
from vaultmem.memory.loops import detail_of
from vaultmem.model import ParsedNote
from vaultmem.parser import parse_note, plain_note
from vaultmem.resolver import FileSet, fold, heading_key, name_key
from vaultmem.scan import Unreadable, VaultFile, name_problem, read_note, scan, scan_paths

if TYPE_CHECKING:
    from vaultmem.embed import Embedder
    from vaultmem.embed_choice import Choice

BATCH_FILES = 400
BATCH_SECONDS = 2.0
PARALLEL_MIN = 300  # below this many notes to parse, starting worker processes costs more
MAX_WORKERS = 4
_LINE_END_RE = re.compile(r"\r\n|\r|\n")  # the line ends the parser counts lines by

# progress(phase, done, total): phase is "scan", "parse", "links" or "embed"
Progress = Callable[[str, int, int], None]
# pick(sections, model, previous, again): the embedder for a vault of `sections` sections whose
# index holds vectors of `model` chosen as `previous` (`again`: every vector is made anew), and
# the choice to record beside its vectors; called once the text index is up to date
PickEmbedder = Callable[[int, "str | None", "Choice | None", bool], "tuple[Embedder, Choice]"]


@dataclass(frozen=True)
class EmbedReport:
    model: str | None = None
    embedded: int = 0  # chunks sent to the model
    reused: int = 0  # chunks whose text was embedded before (cache hits)
    seconds: float = 0.0
    notice: str | None = None  # why vectors were not (all) made, fit to show a person


@dataclass(frozen=True)
class ReindexReport:
    notes: int
    attachments: int
    changed: int
    removed: int
    links: int
    wanted: int
    skipped: int
    seconds: float
    full: bool
    embeddings: EmbedReport = EmbedReport()

    def summary(self) -> str:
        text = (
            f"{self.notes} notes, {self.attachments} attachments: {self.changed} changed, "
            f"{self.removed} removed; {self.links} links ({self.wanted} wanted); "
            f"{self.skipped} skipped; {self.seconds:.2f}s"
        )
        e = self.embeddings
        if e.embedded or e.reused:
            text += f"; vectors: {e.embedded} embedded, {e.reused} reused ({e.model})"
        return text


def _cannot_create(index_path: Path, exc: BaseException) -> UsageError:
    reason = getattr(exc, "strerror", None) or str(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        reason = "a file stands where a folder on its path should be"
    return UsageError(
        f"cannot create the index at {index_path} ({reason}): pass --index PATH in a folder"
        " you can write, or set `index` in .vaultmem/config.toml"
    )


def _open_for_reindex(index_path: Path, full: bool) -> store.Connection:
    """The index to reindex into, made when there is none (for a full reindex, one that may
    be emptied: see `_fresh`)."""
    try:
        if full:
            return _fresh(index_path)  # not emptied yet: see reindex
        if index_path.exists():
            conn = store.connect(index_path)
            try:
                store.check_schema(conn, index_path)
            except BaseException:
                conn.close()
                raise
            return conn
        return store.create(index_path)
    except OSError as exc:
        raise _cannot_create(index_path, exc) from exc
    except store.OperationalError as exc:  # SQLite could not open or write the file
        if store.index_error(exc, index_path) is None:
            raise
        raise _cannot_create(index_path, exc) from exc


@contextlib.contextmanager
def lock(index_path: Path, wait: float, on_wait: Callable[[str], None] | None) -> Iterator[None]:
    """An exclusive advisory lock beside the index, so two reindexes (or a reindex and a write
    with its own reindex) never interleave; IndexBusy (exit 4) when held past `wait` seconds."""
    if not 0 <= wait < math.inf:  # nan or inf: a deadline never reached, a wait for ever
        raise UsageError(f"wait {wait} is not a number of seconds to wait for another reindex")
    lock_path = index_path.with_name(index_path.name + ".lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+")  # noqa: SIM115 - held for the whole block
    except OSError as exc:
        raise _cannot_create(index_path, exc) from exc
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: SQLite's own locking still protects
            yield
            return
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"another reindex is running on {index_path} (lock {lock_path}); "
                        "wait for it to finish, or pass --wait SECONDS"
                    ) from None
                if on_wait and not told:
                    on_wait("another reindex is running; waiting for it to finish…")
                    told = True
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


_lock = lock  # the name tests and older callers know


def _fresh(index_path: Path) -> store.Connection:
    """The index for a full rebuild: a readable index of this schema as it is (the rebuild
    empties it in its own transaction, so searches meanwhile never find it missing or
    empty), else one made anew in place of a damaged one or one of another schema.

    Only a file vaultmem made is ever emptied or replaced (its id in the SQLite header, or
    its own tables): whatever else --index names, in whatever folder, is refused untouched.
    """
    if index_path.is_dir():
        raise UsageError(f"the index path {index_path} is a folder: pass --index FILE")
    closed = store.closed_to_us(index_path)
    if closed is not None:  # a rebuild would fail the same way (or refuse a file it cannot read)
        raise closed
    if index_path.exists():
        if not store.is_index(index_path):
            raise UsageError(
                f"{index_path} is not a vaultmem index, so a full reindex will not replace it:"
                " move it away or pass another --index PATH"
            )
        try:
            conn = store.connect(index_path)
        except SchemaMismatch:
            pass  # damaged past opening: replaced below
        else:
            try:
                store.check_schema(conn, index_path)
                store.cache_readable(conn)  # a damaged embedding cache: a new file
                return conn  # emptied by the caller, in the rebuild's own transaction
            except (store.DatabaseError, SchemaMismatch):  # another schema, a damaged file
                conn.close()
    _remove_index(index_path)
    return store.create(index_path)


def _remove_index(index_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(str(index_path) + suffix)


class _Resolver:
    """Resolves stored or parsed links against the final file set, with anchor checks."""

    def __init__(
        self,
        conn: store.Connection,
        paths: Iterable[str],
        url_prefixes: dict[str, str],
        files: FileSet | None = None,
    ) -> None:
        self.conn = conn
        self._paths = paths
        self._url_prefixes = url_prefixes
        self.folder_notes = bool(url_prefixes)
        self._files: FileSet | None = files
        self._anchors: dict[str, store.Anchors] = {}
        self._aliases: dict[str, str] | None = None

    @property
    def built_files(self) -> FileSet | None:
        """The file set, if it was needed (and so built) at all."""
        return self._files

    @property
    def files(self) -> FileSet:
        # built on first use: a reindex with nothing to resolve never pays for it
        if self._files is None:
            self._files = FileSet(self._paths, self._url_prefixes)
        return self._files

    def forget(self, path: str, aliases_changed: bool) -> None:
        """Drop what was cached about `path` before it is stored again."""
        self._anchors.pop(path, None)
        if aliases_changed:
            self._aliases = None

    def forget_aliases(self) -> None:
        self._aliases = None

    def resolve(
        self,
        source: str,
        target: str,
        heading: str | None,
        block: str | None,
        check_late: bool = True,
    ) -> store.LinkResolution:
        res = self.files.resolve(source, target)
        anchor_ok: bool | None = None
        alias_fix: str | None = None
        if res.path is not None and (heading or block) and res.path.lower().endswith(".md"):
            if not check_late:
                return store.LinkResolution(res.path, res.candidates, None, None)
            if res.path not in self._anchors:
                self._anchors[res.path] = store.anchors_of(self.conn, res.path)
            anchors = self._anchors[res.path]
            if block:
                anchor_ok = fold(block) in anchors.blocks
            else:
                assert heading is not None
                anchor_ok = heading_key(heading.split("#")[-1]) in anchors.headings
        elif res.path is None and target and check_late:
            if self._aliases is None:
                self._aliases = store.alias_owners(self.conn)
            alias_fix = self._aliases.get(name_key(target))
        return store.LinkResolution(res.path, res.candidates, anchor_ok, alias_fix)

    def for_note(self, note: ParsedNote, check_late: bool) -> list[store.LinkResolution]:
        """Resolve a note's links; anchors and aliases only when `check_late` (see _final_pass)."""
        # Same-note links ([[#Heading]]) check against this version of the note.
        self._anchors[note.path] = store.Anchors(
            frozenset(heading_key(h.text) for h in note.headings),
            frozenset(fold(b.id) for b in note.blocks),
        )
        return [
            self.resolve(note.path, lk.target, lk.heading, lk.block, check_late)
            for lk in note.links
        ]


def reindex(
    vault: Path,
    index_path: Path,
    config: Config,
    full: bool = False,
    progress: Progress | None = None,
    wait: float = 60.0,
    on_wait: Callable[[str], None] | None = None,
    embedder: Embedder | PickEmbedder | None = None,
    redo_embeddings: bool = False,
) -> ReindexReport:
    """Index `vault` into `index_path`; incremental unless `full` (or no index exists).

    With an `embedder`, chunks without a vector get one afterwards (`redo_embeddings` first
    drops every vector, e.g. to switch models). Given a `PickEmbedder` instead, it chooses
    the model once the vault's size is known, and its choice is kept in the index.
    """
    from vaultmem import embed_choice

    started = time.perf_counter()
    if index_path.is_dir():
        raise UsageError(f"the index path {index_path} is a folder, not a file: pass --index FILE")
    with lock(index_path, wait, on_wait):
        conn = _open_for_reindex(index_path, full)
        try:
            # what a full rebuild's reset forgets: the model and why it was chosen
            model_before = store.get_meta(conn, "embed_model")
            previous = embed_choice.recorded(conn)
            # A full rebuild is one transaction: searches meanwhile (other threads, the MCP
            # server, the TUI) keep the whole old index, vectors too, until the whole new
            # one commits; never an empty or half-built one. (A killed one leaves the old.)
            with store.transaction(conn) if full else contextlib.nullcontext():
                if full:
                    store.reset(conn)
                report = _reindex(conn, vault, config, full, progress, started)
                if embedder is not None:
                    vectors = _embed_picked(
                        conn, embedder, model_before, previous, redo_embeddings, progress
                    )
                    report = replace(
                        report,
                        embeddings=vectors,
                        seconds=round(time.perf_counter() - started, 3),
                    )
            store.checkpoint(conn)
            return report
        finally:
            conn.close()


def _embed_picked(
    conn: store.Connection,
    embedder: Embedder | PickEmbedder,
    model_before: str | None,
    previous: Choice | None,
    redo: bool,
    progress: Progress | None,
) -> EmbedReport:
    """embed_chunks with the embedder given, or the one `embedder` picks (and its choice
    recorded beside the vectors it made, its notice in the report)."""
    from vaultmem import embed_choice
    from vaultmem.embed import Embedder

    if isinstance(embedder, Embedder):
        return embed_chunks(conn, embedder, redo, progress)
    model, choice = embedder(store.section_count(conn), model_before, previous, redo)
    report = embed_chunks(conn, model, redo or choice.redo, progress)
    if store.get_meta(conn, "embed_model") == model.name:
        with store.transaction(conn):
            embed_choice.record(conn, choice, model.name)
    notices = [n for n in (choice.notice, report.notice) if n]
    return replace(report, notice="; ".join(notices) or None)


EMBED_BATCH = 512
# A section over this many characters (one giant line: a table, minified code; sections are
# otherwise cut near 1,500) is embedded by its start: models pad a batch to its longest text.
EMBED_MAX_CHARS = 4000


def embedded_text(embedder: Embedder, text: store.ChunkText) -> str:
    """What `embedder` is given of a section (its vector cached under the section's hash)."""
    return embedder.section_text(text.headings, text.body, EMBED_MAX_CHARS)


def embed_chunks(
    conn: store.Connection,
    embedder: Embedder,
    redo: bool = False,
    progress: Progress | None = None,
) -> EmbedReport:
    """Give every chunk without a vector one, from the cache when its text was seen before.

    Vectors from another model are never mixed in: they stay until `redo` (the CLI's
    `reindex --embeddings`) replaces them, and the report says so meanwhile.
    """
    started = time.perf_counter()
    stored = store.get_meta(conn, "embed_model")
    if redo:
        try:  # never drop working vectors for a model server that cannot replace them
            embedder.health()
        except VaultmemError as exc:
            return EmbedReport(stored, notice=f"vectors kept as they were: {exc}")
        with store.transaction(conn):
            store.drop_vectors(conn)
            store.forget_cached_vectors(conn, embedder.name)  # embedded again, not reused
    elif stored is not None and stored != embedder.name:
        return EmbedReport(
            stored,
            notice=f"the index holds vectors from {stored}, not {embedder.name}: run "
            "`vaultmem reindex --embeddings` to embed again with the new model",
        )
    missing = store.chunks_without_vectors(conn)
    if not missing:
        return EmbedReport(embedder.name)
    cached = store.cached_vectors(conn, embedder.name, sorted({h for _, h in missing}))
    reused = [(i, h, cached[h]) for i, h in missing if h in cached]
    todo = [(i, h) for i, h in missing if h not in cached]
    # The width the index's vectors have (or the cache's, reused below): new ones must match
    held = store.get_meta(conn, "embed_dim") if store.has_vectors(conn) else None
    width = int(held) if held else len(reused[0][2]) // 4 if reused else None
    if width is not None:  # a cached vector of another width is embedded again, never mixed in
        todo += [(i, h) for i, h, v in reused if len(v) != width * 4]
        reused = [r for r in reused if len(r[2]) == width * 4]
    embedded = 0
    if progress and todo:
        progress("embed", 0, len(todo))  # a slow model's bar shows before its first batch
    try:
        if reused:
            with store.transaction(conn):
                store.ensure_vectors(conn, embedder.name, len(reused[0][2]) // 4)
                store.store_vectors(conn, embedder.name, reused, cache=False)
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            texts = store.chunk_texts(conn, [i for i, _ in batch])
            vectors = embedder.embed(
                [embedded_text(embedder, texts[i]) for i, _ in batch],
                progress=_within(progress, embedded, len(todo)),
            )
            if width is not None and vectors.shape[1] != width:
                # The model behind the name changed (a server's model replaced): what it gave
                # before, in the index and the cache, cannot sit beside what it gives now.
                with store.transaction(conn):
                    store.drop_vectors(conn)
                    store.forget_cached_vectors(conn, embedder.name)
                again = embed_chunks(conn, embedder, False, progress)
                changed = (
                    f"{embedder.where} now gives {vectors.shape[1]}-dimensional vectors, the "
                    f"index held {width}: every section was embedded again"
                )
                return replace(again, notice=again.notice or changed)
            with store.transaction(conn):  # each batch kept: an interrupted run resumes here
                store.ensure_vectors(conn, embedder.name, int(vectors.shape[1]))
                store.store_vectors(
                    conn,
                    embedder.name,
                    [
                        (i, h, v.astype("float32").tobytes())
                        for (i, h), v in zip(batch, vectors, strict=True)
                    ],
                )
            embedded += len(batch)
            if progress:
                progress("embed", embedded, len(todo))
    except VaultmemError as exc:  # a model server down or misbehaving: the text index stands
        return EmbedReport(
            embedder.name,
            embedded,
            len(reused),
            round(time.perf_counter() - started, 3),
            notice=f"embeddings incomplete ({exc}); search falls back to keywords where "
            "vectors are missing",
        )
    with store.transaction(conn):
        store.prune_embedding_cache(conn, embedder.name)
    return EmbedReport(
        embedder.name, embedded, len(reused), round(time.perf_counter() - started, 3)
    )


def _within(progress: Progress | None, before: int, total: int) -> Callable[[int], None] | None:
    """Progress inside one batch of sections: a slow model (MiniLM, ~10-30 sections a
    second) moves the bar every few seconds, not once a batch of 512."""
    if progress is None:
        return None
    return lambda rows: progress("embed", before + rows, total)


def _reindex(
    conn: store.Connection,
    vault: Path,
    config: Config,
    full: bool,
    progress: Progress | None,
    started: float,
) -> ReindexReport:
    scanned = scan(vault, config.exclude, config.max_file_bytes)
    skipped = dict(scanned.skipped)
    # (kind, size, mtime) of every indexed file; the full rows only for what changed
    stats = store.file_stats(conn)
    by_path = {f.path: f for f in scanned.files}
    resolver = _Resolver(conn, by_path, config.url_prefixes)
    folder_notes = bool(config.url_prefixes)

    # A cold run (or one resuming a killed cold run) resolves every link in its final pass;
    # an incremental run only the links whose target names something that changed.
    if not stats:
        store.set_meta(conn, "resolve_all", "1")
    resolve_all = store.get_meta(conn, "resolve_all") == "1"
    link_rules = json.dumps(sorted(config.url_prefixes.items()))
    relink_all = bool(stats) and store.get_meta(conn, "link_rules") != link_rules

    removed = [
        p
        for p, signature in stats.items()
        if p not in by_path or not signature.startswith(by_path[p].kind + ":")
    ]
    # new, touched, or changed kind (then it is removed above and comes back as new)
    todo = [f for f in scanned.files if stats.get(f.path) != f"{f.kind}:{f.size}:{f.mtime_ns}"]
    todo.sort()
    known = [*removed, *(f.path for f in todo if f.path in stats)]
    states = store.file_states(conn, known)
    with store.transaction(conn):
        keys = {k for p in removed for k in _file_keys(p, folder_notes)}
        ids = [states[p].id for p in removed]
        for alias_key in store.alias_keys(conn, ids):
            keys.add(alias_key)
        store.mark_dirty(conn, keys)
        store.delete_files(conn, ids)
    for p in removed:
        del states[p]

    changed = _index_files(
        conn, vault, config, todo, states, resolver, skipped, resolve_all, progress
    )

    with store.transaction(conn):
        relinked = _final_pass(conn, resolver, resolve_all, relink_all, progress)
        store.set_meta(conn, "link_rules", link_rules)
        if changed or removed or relinked:
            # what caches of derived data (the graph, its communities) are keyed by
            store.set_meta(conn, "generation", str(store.generation(conn) + 1))
        store.replace_skipped(conn, skipped)
        store.set_meta(conn, "last_reindex", str(time.time()))
        store.set_meta(conn, "vault", str(vault))
        store.set_meta(conn, "resolve_all", "0")
    store.checkpoint(conn)

    totals = store.file_totals(conn)
    return ReindexReport(
        notes=totals.notes,
        attachments=totals.attachments,
        changed=changed,
        removed=len(removed),
        links=totals.links,
        wanted=totals.wanted_links,
        skipped=len(skipped),
        seconds=round(time.perf_counter() - started, 3),
        full=full or resolve_all,
    )


class FileSetCache:
    """The file set links resolve against and the index's totals, kept between path-limited
    reindexes by a long-running writer (building the set reads every path, counting the totals
    scans the files table: most of a small write's cost on a big vault). They are used only at
    the index generation they were kept at, so any other change to the index (a reindex,
    another process's write) makes the next write build them afresh."""

    def __init__(self) -> None:
        self._kept: tuple[int, FileSet | None, store.FileTotals] | None = None

    def take(self, generation: int) -> tuple[FileSet | None, store.FileTotals] | None:
        kept, self._kept = self._kept, None  # never reused half-updated after a failure
        return (kept[1], kept[2]) if kept is not None and kept[0] == generation else None

    def keep(self, generation: int, files: FileSet | None, totals: store.FileTotals) -> None:
        self._kept = (generation, files, totals)


def reindex_paths(
    conn: store.Connection,
    vault: Path,
    config: Config,
    paths: Iterable[str],
    cache: FileSetCache | None = None,
) -> ReindexReport | None:
    """Bring the index in line with the vault for just `paths` (the files a write touched),
    without walking the vault; the caller holds the index lock.

    Each path is read again whatever its stat says (a write within one tick of the clock keeps
    size and mtime). Links whose target names something that appeared, went, or changed its
    aliases or anchors are re-resolved, exactly as the whole incremental reindex does, so the
    index ends as a fresh rebuild of the vault would be, as long as nothing else changed.
    Returns None, having changed nothing, when the paths cannot be judged alone (a killed cold
    run to finish, new link rules, a symlinked folder on the way…): run `reindex` then.
    """
    started = time.perf_counter()
    wanted = sorted(set(paths))
    if store.get_meta(conn, "resolve_all") == "1":
        return None
    if store.get_meta(conn, "link_rules") != json.dumps(sorted(config.url_prefixes.items())):
        return None
    scanned = scan_paths(vault, wanted, config.exclude, config.max_file_bytes)
    if scanned is None:
        return None
    skipped = dict(scanned.skipped)
    by_path = {f.path: f for f in scanned.files}
    states = store.file_states(conn, wanted)
    removed = [
        p for p, state in states.items() if p not in by_path or state.kind != by_path[p].kind
    ]
    todo = sorted(scanned.files)
    folder_notes = bool(config.url_prefixes)

    def every_path() -> Iterator[str]:  # what links may resolve to (`removed` gone by then)
        return iter(set(store.file_paths(conn)) | by_path.keys())

    kept = cache.take(store.generation(conn)) if cache is not None else None
    files, base = kept if kept is not None else (None, store.file_totals(conn))
    if files is not None:  # the set as of before this reindex: bring it to after
        for p in removed:
            files.remove(p)
        for p in by_path:
            files.add(p)
    resolver = _Resolver(conn, _Lazy(every_path), config.url_prefixes, files)
    # the totals after = before, less what the touched files held, plus what they hold now
    old_links = store.link_counts(conn, [st.id for st in states.values()])
    old_kinds = [st.kind for st in states.values()]
    delta = _WantedDelta(set(wanted))
    with store.transaction(conn):
        keys = {k for p in removed for k in _file_keys(p, folder_notes)}
        ids = [states[p].id for p in removed]
        keys |= store.alias_keys(conn, ids)
        store.mark_dirty(conn, keys)
        store.delete_files(conn, ids)
    for p in removed:
        del states[p]
    changed = _index_files(conn, vault, config, todo, states, resolver, skipped, False, None)
    with store.transaction(conn):
        relinked = _final_pass(conn, resolver, False, False, None, delta)
        if changed or removed or relinked:
            store.set_meta(conn, "generation", str(store.generation(conn) + 1))
        store.update_skipped(conn, wanted, skipped)
    now = store.file_states(conn, wanted)
    new_links = store.link_counts(conn, [st.id for st in now.values()])
    new_kinds = [st.kind for st in now.values()]
    totals = store.FileTotals(
        base.notes + new_kinds.count("note") - old_kinds.count("note"),
        base.attachments + new_kinds.count("attachment") - old_kinds.count("attachment"),
        base.links + new_links.links - old_links.links,
        base.wanted_links + new_links.wanted_links - old_links.wanted_links + delta.value,
    )
    if cache is not None and not any(p in skipped for p in by_path):
        # the set (when it was needed) holds exactly the indexed files now
        cache.keep(store.generation(conn), resolver.built_files, totals)
    return ReindexReport(
        notes=totals.notes,
        attachments=totals.attachments,
        changed=changed,
        removed=len(removed),
        links=totals.links,
        wanted=totals.wanted_links,
        skipped=len(skipped),
        seconds=round(time.perf_counter() - started, 3),
        full=False,
    )


def reindex_touched(
    conn: store.Connection,
    vault: Path,
    config: Config,
    paths: Iterable[str],
    cache: FileSetCache | None = None,
) -> ReindexReport:
    """`reindex_paths`, else (when the paths cannot be judged alone) the whole incremental
    reindex; the caller holds the index lock."""
    report = reindex_paths(conn, vault, config, paths, cache)
    if report is None:
        report = _reindex(conn, vault, config, False, None, time.perf_counter())
    return report


class _WantedDelta:
    """How many links the final pass turned wanted (+) or resolved (-), outside `skip` (the
    notes whose links are counted whole afterwards)."""

    def __init__(self, skip: set[str]) -> None:
        self.skip = skip
        self.value = 0

    def moved(self, link: store.StoredLink, res: store.LinkResolution) -> None:
        if link.src_path not in self.skip:
            self.value += (res.dst_path is None) - (link.resolution.dst_path is None)


class _Lazy:
    """An iterable made only when first iterated (the resolver's file set is built on use)."""

    def __init__(self, make: Callable[[], Iterator[str]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[str]:
        return self._make()


def _file_keys(path: str, folder_notes: bool) -> set[str]:
    """The link-target keys a file answers to: its name, and its folder's for a folder note."""
    keys = {name_key(path)}
    parts = path.rsplit("/", 2)
    if folder_notes and len(parts) >= 2 and parts[-1].lower() in ("index.md", "readme.md"):
        keys.add(name_key(parts[-2]))
    return keys


def _index_files(
    conn: store.Connection,
    vault: Path,
    config: Config,
    todo: list[VaultFile],
    states: dict[str, store.FileState],
    resolver: _Resolver,
    skipped: dict[str, str],
    resolve_all: bool,
    progress: Progress | None,
) -> int:
    """Parse and store every new or touched file, in batched transactions; returns #changed."""
    changed = 0
    done = 0
    loads = _load_all(vault, config, todo, states)
    try:
        while done < len(todo):
            batch_started = time.monotonic()
            with store.transaction(conn):
                while done < len(todo):
                    vf = todo[done]
                    loaded = next(loads) if vf.kind == "note" else None
                    changed += _store_safely(
                        conn, vf, loaded, states.get(vf.path), resolver, skipped, resolve_all
                    )
                    done += 1
                    if progress and done % 50 == 0:
                        progress("parse", done, len(todo))
                    if done % BATCH_FILES == 0 or time.monotonic() - batch_started > BATCH_SECONDS:
                        break
    finally:
        loads.close()
    if progress:
        progress("parse", len(todo), len(todo))
    return changed


@dataclass(frozen=True)
class _Loaded:
    """What reading and parsing one note gave; crosses process boundaries, so plain data."""

    outcome: Literal["parsed", "unchanged", "vanished", "unreadable"]
    digest: str | None = None
    note: ParsedNote | None = None
    error: str | None = None
    facts: tuple[Fact, ...] = ()
    details: dict[int, str] | None = None  # open task line -> the lines nested under it


@dataclass(frozen=True)
class _Reading:
    """How notes are read in this run (pickled with each batch of notes sent to a worker)."""

    root: str
    real_root: str  # the vault's real path: no note is read from outside it
    max_bytes: int
    limits: FrontMatterLimits


def _load(how: _Reading, path: str, disk: str, old_hash: str | None) -> _Loaded:
    """Read and parse one note (runs in a worker process on big runs)."""
    try:
        text = read_note(os.path.join(how.root, disk), how.real_root, how.max_bytes)
    except FileNotFoundError:
        return _Loaded("vanished")
    except Unreadable as exc:
        return _Loaded("unreadable", error=str(exc))
    if text.digest == old_hash:
        return _Loaded("unchanged", text.digest)
    try:
        note = parse_note(text.text, path, how.limits)
    except Exception as exc:  # a parser bug costs one note its structure, never the reindex
        problem = f"{type(exc).__name__}: {str(exc)[:200]}"
        note = plain_note(text.text, path, f"could not be parsed ({problem}); indexed as text")
    found = tuple(w for w in (name_problem(disk), text.warning) if w)
    if found:
        note = replace(note, warnings=(*found, *note.warnings))
    facts: tuple[Fact, ...] = ()
    details: dict[int, str] = {}
    if note.fields or note.tasks:  # most notes have neither and skip the line split
        lines = _LINE_END_RE.split(text.text)
        try:
            facts = parse_facts(lines, note) if note.fields else ()
            details = {
                t.line: d
                for t in note.tasks
                if t.status == " " and (d := detail_of(lines, t.line - 1))
            }
        except Exception as exc:  # a memory reader bug costs one note its facts, never the reindex
            problem = f"facts could not be read ({type(exc).__name__}: {str(exc)[:200]})"
            note = replace(note, warnings=(*note.warnings, problem))
    return _Loaded("parsed", text.digest, note, facts=facts, details=details or None)


def _load_all(
    vault: Path, config: Config, todo: list[VaultFile], states: dict[str, store.FileState]
) -> Generator[_Loaded, None, None]:
    """Loaded notes in `todo` order; parsed on every core when there are many."""
    notes = [vf.path for vf in todo if vf.kind == "note"]
    disks = [vf.disk_path for vf in todo if vf.kind == "note"]
    hashes = [states[p].hash if p in states else None for p in notes]
    how = _Reading(str(vault), os.path.realpath(vault), config.max_file_bytes, config.limits)
    load = functools.partial(_load, how)
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(notes) < PARALLEL_MIN or workers < 2:
        yield from map(load, notes, disks, hashes)
        return
    # spawn, not fork: the parent holds an open SQLite connection and maybe threads
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield from pool.map(load, notes, disks, hashes, chunksize=32)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


# What storing one note's rows can raise because of what the note holds (a number SQLite
# cannot hold, text it cannot take, a clash of keys), as against a full disk or a bug.
_NOTE_STORE_ERRORS = (
    store.IntegrityError,
    store.InterfaceError,
    store.DataError,
    OverflowError,
    ValueError,
)


def _store_safely(
    conn: store.Connection,
    vf: VaultFile,
    loaded: _Loaded | None,
    old: store.FileState | None,
    resolver: _Resolver,
    skipped: dict[str, str],
    resolve_all: bool,
) -> int:
    """`_store_one` in a savepoint of its own: a note whose rows cannot be stored is skipped
    with the reason (doctor shows it), its old rows kept out, and the batch goes on."""
    try:
        with store.transaction(conn):  # a savepoint: the batch's transaction is under way
            return _store_one(conn, vf, loaded, old, resolver, skipped, resolve_all)
    except _NOTE_STORE_ERRORS as exc:
        skipped[vf.path] = (
            f"could not be stored in the index ({type(exc).__name__}: {str(exc)[:200]});"
            " please report it with the note's front matter"
        )
        keys = _file_keys(vf.path, resolver.folder_notes)
        if old is not None:
            keys |= store.alias_keys(conn, [old.id])
            store.delete_files(conn, [old.id])
        store.mark_dirty(conn, keys)
        resolver.files.remove(vf.path)
        resolver.forget(vf.path, aliases_changed=True)
        return 0


def _store_one(
    conn: store.Connection,
    vf: VaultFile,
    loaded: _Loaded | None,
    old: store.FileState | None,
    resolver: _Resolver,
    skipped: dict[str, str],
    resolve_all: bool,
) -> int:
    """Bring one file's rows in line with what was loaded; returns 1 when it changed."""
    dirty: set[str] = set() if resolve_all else _file_keys(vf.path, resolver.folder_notes)
    if loaded is None:  # an attachment: only its name and stat matter
        if old is None:
            store.insert_attachment(conn, vf.path, vf.size, vf.mtime_ns)
            store.mark_dirty(conn, dirty)
            return 1
        store.update_stat(conn, old.id, vf.size, vf.mtime_ns)
        return 0
    if loaded.outcome == "vanished":  # since the scan: links already resolved to it must move
        keys = _file_keys(vf.path, resolver.folder_notes)
        if old is not None:
            keys |= store.alias_keys(conn, [old.id])
            store.delete_files(conn, [old.id])
        store.mark_dirty(conn, keys)
        resolver.files.remove(vf.path)
        return 0
    if loaded.outcome == "unreadable":
        skipped[vf.path] = loaded.error or "cannot read"
        if old is not None:
            store.delete_files(conn, [old.id])
            store.mark_dirty(conn, dirty)
        return 0
    if loaded.outcome == "unchanged":
        assert old is not None
        store.update_stat(conn, old.id, vf.size, vf.mtime_ns)
        return 0
    note = loaded.note
    assert note is not None and loaded.digest is not None
    alias_keys = {name_key(a) for a in note.aliases}
    if old is not None:
        alias_keys |= store.alias_keys(conn, [old.id])
        store.delete_files(conn, [old.id])
    if not resolve_all:
        dirty |= alias_keys
    resolver.forget(vf.path, aliases_changed=bool(alias_keys))
    # In a cold run the anchors and aliases a link needs may belong to notes not stored yet,
    # so the final pass checks them; an incremental run marks such targets dirty instead.
    resolutions = resolver.for_note(note, check_late=not resolve_all)
    store.insert_note(
        conn,
        note,
        vf.size,
        vf.mtime_ns,
        loaded.digest,
        resolutions,
        loaded.facts,
        loaded.details,
    )
    store.mark_dirty(conn, dirty)
    return 1


def _final_pass(
    conn: store.Connection,
    resolver: _Resolver,
    resolve_all: bool,
    relink_all: bool,
    progress: Progress | None,
    wanted_delta: _WantedDelta | None = None,
) -> int:
    """Re-resolve every link whose target set changed; check anchors and alias fixes.

    `relink_all` (the link rules in the config changed) re-resolves every link. Returns how
    many links changed their resolution.
    """
    if relink_all:
        links = store.all_links(conn)
    elif resolve_all:
        # a cold run resolved names as it stored notes; anchors and alias fixes wait for now
        links = store.links_to_check(conn)
        seen = {link.id for link in links}
        links += [
            x for x in store.links_with_keys(conn, store.dirty_keys(conn)) if x.id not in seen
        ]
    else:
        links = store.links_with_keys(conn, store.dirty_keys(conn))
    # alias owners looked up while notes were stored missed the aliases of notes stored later
    # (and a note's own, stored after its links were resolved): look again now all are in
    resolver.forget_aliases()
    updates: list[tuple[int, store.LinkResolution]] = []
    for i, link in enumerate(links):
        res = resolver.resolve(link.src_path, link.target, link.heading, link.block)
        if res != link.resolution:
            updates.append((link.id, res))
            if wanted_delta is not None:
                wanted_delta.moved(link, res)
        if progress and i % 5000 == 0:
            progress("links", i, len(links))
    if progress and links:
        progress("links", len(links), len(links))
    store.update_resolutions(conn, updates)
    store.clear_dirty(conn)
    return len(updates)
