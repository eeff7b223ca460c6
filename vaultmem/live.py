"""Keeping a long-running front-end's index fresh: watch the vault, reindex what changed.

The TUI and the MCP server stay open for hours while people edit notes in Obsidian. A watcher
thread (inotify/FSEvents through watchfiles: no CPU while nothing changes) notes that files
changed; `ensure_fresh()` then runs the ordinary incremental reindex, so there is one way of
indexing and the watcher never needs to be exact about what changed.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultmem.errors import NoIndex
from vaultmem.indexer import ReindexReport
from vaultmem.scan import excluded
from vaultmem.vault import Vault

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

    from vaultmem.embed_upgrade import Background, Report

log = logging.getLogger(__name__)

OnChange = Callable[[frozenset[str]], None]
STEP_MS = 100
POLL_MS = 1_000  # how often a vault is scanned when the system cannot watch it
READY_WAIT = 120.0  # seconds the catch-up waits for the watcher to be in place
FULL_GC_EVERY = 100  # middle-generation collections between full ones (Python's default: 10)


def settle_heap() -> None:
    """Tell the garbage collector that what is in memory now stays (call once the start-up
    work is done, and again after a reindex rebuilt the caches).

    A long-running front-end holds hundreds of thousands of long-lived objects (the index's
    caches, the link graph, Textual's widgets); each full collection walked them all, 40-140 ms
    landing at random inside a keystroke or a tool call on a 14k-note vault. Frozen, they are
    skipped; what becomes garbage later is still freed by reference counting, and full
    collections of what is new come every 100 younger collections instead of 10.
    """
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, max(old, FULL_GC_EVERY))


def start_upgrade(
    vault: Vault, listener: Callable[[Report], None] | None = None
) -> Background | None:
    """The move of a vault past auto's limit to all-MiniLM-L6-v2 (vaultmem/embed_upgrade.py),
    in a background thread at idle priority, unless the config says `embed_upgrade =
    "manual"`; None then. `listener` is told how it goes after every step (from that
    thread). The caller stops it (`stop()`) when it closes."""
    if vault.config.embed_upgrade != "background":
        return None
    from vaultmem.embed_upgrade import Background

    background = Background(vault, listener=listener)
    background.start()
    return background


class Freshness:
    """Watches one vault's files and reindexes incrementally when asked, if anything changed."""

    def __init__(
        self,
        vault: Vault,
        on_change: OnChange | None = None,
        debounce: float = 0.4,
        wait: float = 30.0,
    ) -> None:
        self.vault = vault
        self.on_change = on_change
        self.debounce = debounce
        self.wait = wait  # how long ensure_fresh waits for another process's reindex
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._refresh = threading.Lock()
        self._thread: threading.Thread | None = None
        self._root = os.path.realpath(vault.root)
        index = os.path.realpath(vault.index_path)
        self._own_files = {index + s for s in ("", "-wal", "-shm", "-journal", ".lock")}
        self.ready = threading.Event()  # set once the watcher runs (or failed to start)
        self.polling = False  # the system could not watch: the vault is scanned every POLL_MS
        self.failure: str | None = None  # why nothing watches the vault (set with `ready`)
        self._catch_up = False  # the first refresh after start(check_now=True) is due

    def start(self, check_now: bool = True) -> None:
        """Start watching; with `check_now`, the first `ensure_fresh()` reindexes (edits made
        while nothing was watching are caught that way)."""
        if self._thread is not None:
            return
        if check_now:
            self._catch_up = True
            self._pending.set()
        self._thread = threading.Thread(target=self._watch, name="vaultmem-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def pending(self) -> bool:
        """Files changed on disk since the last refresh."""
        return self._pending.is_set()

    def mark_changed(self) -> None:
        """Treat the vault as changed (a front-end that wrote a file itself)."""
        self._pending.set()

    def ensure_fresh(self) -> ReindexReport | None:
        """Reindex incrementally when files changed since the last refresh; else None.
        One refresh at a time: a caller arriving during one waits for it, then finds nothing
        left to do (unless more changed meanwhile)."""
        if not self._pending.is_set():
            return None
        if self._catch_up:
            # The catch-up scans the disk once the watcher is in place: what changed before it
            # watched is in the scan, what changes after is its to report. A catch-up done
            # first missed an edit made between its scan and the watcher's start.
            self.ready.wait(READY_WAIT)
            self._catch_up = False
        with self._refresh:
            if not self._pending.is_set():
                return None
            self._pending.clear()  # before: a change during the reindex sets it again
            try:
                return self.vault.reindex(wait=self.wait)
            except BaseException:
                self._pending.set()
                raise

    # ---- the watcher thread

    def _relevant(self, path: str) -> str | None:
        """The vault-relative path of a change worth a reindex, else None."""
        if path in self._own_files:
            return None
        real = os.path.realpath(path) if not path.startswith(self._root) else path
        if not real.startswith(self._root + os.sep):
            return None
        rel = real[len(self._root) + 1 :].replace(os.sep, "/")
        if any(part.startswith(".") for part in rel.split("/")):
            return None  # .obsidian, .trash, .git, .vaultmem, editors' swap files
        if excluded(rel, self.vault.config.exclude):
            return None
        return rel

    def _notifier(self) -> RustNotify:
        """inotify/FSEvents on the vault; when the system refuses (on Linux, a limit on inotify
        instances or watches, shared by every program of the user), polling, said once."""
        from watchfiles._rust_notify import RustNotify

        root = [str(self.vault.root)]
        try:
            return RustNotify(root, False, False, POLL_MS, True, True)
        except FileNotFoundError:
            raise
        except Exception as exc:  # the Rust side raises several kinds
            log.warning(
                "vaultmem: the system cannot watch %s for changes (%s); looking for changes "
                "every %g s instead (on Linux, raising fs.inotify.max_user_instances or "
                "fs.inotify.max_user_watches with sysctl lets it watch)",
                self.vault.root,
                exc,
                POLL_MS / 1000,
            )
        self.polling = True
        return RustNotify(root, False, True, POLL_MS, True, True)

    def _watch(self) -> None:
        try:
            with self._notifier() as notify:
                self.ready.set()
                while not self._stop.is_set():
                    # wakes every `STEP_MS` to look at the stop event: ~0 CPU while idle
                    raw = notify.watch(int(self.debounce * 1000), STEP_MS, 5_000, self._stop)
                    if raw in ("timeout", "signal"):
                        continue
                    if raw == "stop" or isinstance(raw, str):
                        return
                    paths = frozenset(
                        rel for _, path in raw if (rel := self._relevant(path)) is not None
                    )
                    if not paths:
                        continue
                    self._pending.set()
                    if self.on_change is not None:
                        self.on_change(paths)
        except Exception as exc:  # the watcher is a convenience: say so, keep serving
            self.failure = str(exc) or type(exc).__name__
            log.warning(
                "vaultmem: cannot watch %s for changes (%s); run `vaultmem reindex` after edits",
                self.vault.root,
                exc,
            )
        finally:
            self.ready.set()  # nobody waits forever for a watcher that failed to start


@dataclass(frozen=True)
class Refresh:
    """One refresh as `vaultmem watch` tells it: the notes it added, saw edited and dropped."""

    at: float  # when it finished (epoch seconds)
    notes: int  # notes in the index after it
    new: tuple[str, ...]
    edited: tuple[str, ...]
    gone: tuple[str, ...]
    report: ReindexReport

    @property
    def changed(self) -> bool:
        """Whether it changed the index: a note new, edited or gone, or an attachment. Events
        that changed nothing (a chmod, the tail of a write the reindex had already read) make
        refreshes that did nothing."""
        return bool(
            self.new or self.edited or self.gone or self.report.changed or self.report.removed
        )


def note_times(vault: Vault) -> dict[str, float]:
    """Each indexed note's file time as the index has it; empty before the first reindex."""
    try:
        return {n.path: n.mtime for n in vault.note_names()}
    except NoIndex:
        return {}


def refresh(freshness: Freshness) -> Refresh | None:
    """`ensure_fresh()`, and which notes it changed (the index's file times before and after:
    a note touched without a change in its text counts as edited); None when nothing changed
    on disk since the last refresh."""
    if not freshness.pending:
        return None
    before = note_times(freshness.vault)
    report = freshness.ensure_fresh()
    if report is None:
        return None
    after = note_times(freshness.vault)
    return Refresh(
        at=time.time(),
        notes=len(after),
        new=tuple(sorted(after.keys() - before.keys())),
        edited=tuple(sorted(p for p, t in after.items() if p in before and before[p] != t)),
        gone=tuple(sorted(before.keys() - after.keys())),
        report=report,
    )
