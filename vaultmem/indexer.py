"""Reindexing: bring the derived index in line with the vault, touching only what changed."""

from __future__ import annotations

import contextlib
import functools
import json
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

BATCH_FILES = 400
BATCH_SECONDS = 2.0
PARALLEL_MIN = 300  # below this many notes to parse, starting worker processes costs more
MAX_WORKERS = 4
_LINE_END_RE = re.compile(r"\r\n|\r|\n")  # the line ends the parser counts lines by

# progress(phase, done, total): phase is "scan", "parse" or "links"
Progress = Callable[[str, int, int], None]


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


@contextlib.contextmanager
def lock(index_path: Path, wait: float, on_wait: Callable[[str], None] | None) -> Iterator[None]:
    """An exclusive advisory lock beside the index, so two reindexes (or a reindex and a write
    with its own reindex) never interleave; IndexBusy (exit 4) when held past `wait` seconds."""
    lock_path = index_path.with_name(index_path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_path, "a+")  # noqa: SIM115 - held for the whole block
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
    """An empty index for a full rebuild: emptied in place when it is a readable index of this
    schema (so searches running meanwhile never find it missing), else made anew."""
    if index_path.exists():
        try:
            conn = store.connect(index_path)
        except SchemaMismatch:
            pass  # not SQLite: below
        else:
            try:
                store.check_schema(conn, index_path)
                store.reset(conn)
                return conn
            except (store.DatabaseError, SchemaMismatch):  # another schema, a damaged file
                conn.close()
        # Replace only what is vaultmem's: its own folder, or an index of another version.
        # A file of someone else's that --index happens to name is never deleted.
        if index_path.parent.name != ".vaultmem" and not store.is_index(index_path):
            raise UsageError(
                f"{index_path} is not a vaultmem index, so a full reindex will not replace it:"
                " move it away or pass another --index PATH"
            )
    _remove_index(index_path)
    return store.create(index_path)


def _remove_index(index_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(str(index_path) + suffix)


class _Resolver:
    """Resolves stored or parsed links against the final file set, with anchor checks."""

    def __init__(
        self, conn: store.Connection, paths: Iterable[str], url_prefixes: dict[str, str]
    ) -> None:
        self.conn = conn
        self._paths = paths
        self._url_prefixes = url_prefixes
        self.folder_notes = bool(url_prefixes)
        self._files: FileSet | None = None
        self._anchors: dict[str, store.Anchors] = {}
        self._aliases: dict[str, str] | None = None

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
    embedder: Embedder | None = None,
    redo_embeddings: bool = False,
) -> ReindexReport:
    """Index `vault` into `index_path`; incremental unless `full` (or no index exists).

    With an `embedder`, chunks without a vector get one afterwards (`redo_embeddings` first
    drops every vector, e.g. to switch models).
    """
    started = time.perf_counter()
    with lock(index_path, wait, on_wait):
        conn = _fresh(index_path) if full else None
        if conn is None and index_path.exists():
            conn = store.connect(index_path)
            store.check_schema(conn, index_path)
        elif conn is None:
            conn = store.create(index_path)
        try:
            report = _reindex(conn, vault, config, full, progress, started)
            if embedder is not None:
                vectors = embed_chunks(conn, embedder, redo_embeddings, progress)
                report = replace(
                    report,
                    embeddings=vectors,
                    seconds=round(time.perf_counter() - started, 3),
                )
            return report
        finally:
            conn.close()


EMBED_BATCH = 512
# A section over this many characters (one giant line: a table, minified code; sections are
# otherwise cut near 1,500) is embedded by its start: models pad a batch to its longest text.
EMBED_MAX_CHARS = 4000


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
    embedded = 0
    try:
        if reused:
            with store.transaction(conn):
                store.ensure_vectors(conn, embedder.name, len(reused[0][2]) // 4)
                store.store_vectors(conn, embedder.name, reused, cache=False)
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            texts = store.chunk_texts(conn, [i for i, _ in batch])
            vectors = embedder.embed(
                [
                    f"{texts[i].headings}\n{texts[i].body}".strip()[:EMBED_MAX_CHARS]
                    for i, _ in batch
                ]
            )
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


def reindex_paths(
    conn: store.Connection, vault: Path, config: Config, paths: Iterable[str]
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

    resolver = _Resolver(conn, _Lazy(every_path), config.url_prefixes)
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
        relinked = _final_pass(conn, resolver, False, False, None)
        if changed or removed or relinked:
            store.set_meta(conn, "generation", str(store.generation(conn) + 1))
        store.update_skipped(conn, wanted, skipped)
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
        full=False,
    )


def reindex_touched(
    conn: store.Connection, vault: Path, config: Config, paths: Iterable[str]
) -> ReindexReport:
    """`reindex_paths`, else (when the paths cannot be judged alone) the whole incremental
    reindex; the caller holds the index lock."""
    report = reindex_paths(conn, vault, config, paths)
    if report is None:
        report = _reindex(conn, vault, config, False, None, time.perf_counter())
    return report


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
                    changed += _store_one(
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
        if progress and i % 5000 == 0:
            progress("links", i, len(links))
    if progress and links:
        progress("links", len(links), len(links))
    store.update_resolutions(conn, updates)
    store.clear_dirty(conn)
    return len(updates)
