"""Keeping a running server current (`Live`, `serving`: catch-up, watcher, warm-up); its logs."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.errors import IndexDamaged, NoIndex, SchemaMismatch, VaultmemError

if TYPE_CHECKING:
    from vaultmem.embed_upgrade import Background
    from vaultmem.indexer import ReindexReport
    from vaultmem.live import Freshness
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

STARTUP_WAIT = 120.0  # seconds a first call waits for the start-up catch-up reindex
FIRST_CALL_GRACE = 2.0  # the watcher starts after the first answer, or after this many seconds


# What makes the index unusable until a person fixes it (`vaultmem reindex --full`, the
# permissions): the server keeps running, says it on every call, and recovers by itself.
UNUSABLE = (SchemaMismatch, IndexDamaged, NoIndex)
NO_RESTART = (
    " (vaultmem mcp keeps running and uses the index again as soon as it reads: no restart needed)"
)


@dataclass
class Live:
    """What keeps a running server's answers current: the start-up catch-up, then the watcher;
    and, while the index cannot be used (another schema version, damaged, closed to this
    account), why not, said by every call and checked again by each."""

    vault: Vault
    freshness: Freshness
    ready: threading.Event = field(default_factory=threading.Event)  # caught up with edits
    answered: threading.Event = field(default_factory=threading.Event)  # a first call is done
    watching: threading.Event = field(default_factory=threading.Event)  # the watcher runs
    closed: threading.Event = field(default_factory=threading.Event)  # the server is stopping
    usable: threading.Event = field(default_factory=threading.Event)  # the index opened once

    caught_up_at: float = 0.0  # time.monotonic() of the last catch-up
    problem: VaultmemError | None = None  # why the index cannot be used now, else None
    said: str | None = None  # the problem last logged, until a call works again
    checking: threading.Lock = field(default_factory=threading.Lock)

    def refresh(self) -> ReindexReport | None:
        """Reindex if notes changed (a first call waits for the start-up catch-up); raise
        what keeps the index from being used, when something does."""
        self.check()
        self.ready.wait(STARTUP_WAIT)
        if not self.watching.is_set() and time.monotonic() - self.caught_up_at > 1.0:
            self.freshness.mark_changed()  # no watcher yet to say whether anything changed
        return self.freshness.ensure_fresh()

    def check(self) -> None:
        """While the index could not be used, try it again (a person may have run `vaultmem
        reindex --full` or fixed the permissions meanwhile): the problem as it is now is
        raised, else the server goes on as after a good start. Free once the index works."""
        if self.problem is None:
            return
        with self.checking:  # one try at a time: the second thread finds it done
            if self.problem is None:
                return
            self.vault.reopen()  # another process may have replaced the file
            problem = open_index(self.vault)
            if problem is not None:
                self.lost(problem)
                raise problem
            self.problem = None
            self.usable.set()

    def lost(self, problem: VaultmemError) -> None:
        """The index cannot be used (found at start, by a check, or by a call): every call
        checks it again until one works. Logged once, not on every call."""
        self.problem = problem
        if self.said != str(problem):
            self.said = str(problem)
            log.error("%s%s", problem, NO_RESTART)

    def worked(self) -> None:
        """A call was answered: after a problem, say on stderr that it is over."""
        if self.said is not None:
            self.said = None
            log.info("the index at %s works again: serving it", self.vault.index_path)


def open_index(vault: Vault) -> VaultmemError | None:
    """Open the vault's index, building it when there is none yet; what keeps it from being
    used (another schema version, damaged, closed to this account), else None."""
    try:
        vault.conn  # noqa: B018 - opening the index checks that it exists and its schema
    except NoIndex:
        log.info("no index for %s yet: building it once (text and vectors)", vault.root)
        try:
            report = vault.reindex()
        except VaultmemError as exc:
            return exc
        log.info("indexed: %s", report.summary())
    except VaultmemError as exc:
        return exc
    return None


@contextlib.contextmanager
def serving(vault: Vault) -> Iterator[Live]:
    """Ready a vault for a long-running server: an index, a file watcher, and in the
    background the catch-up on edits made while no server ran, the embedding model and the
    vectors in memory (a first call waits for the catch-up only). An index that cannot be
    used does not stop the server: every call says why and what to run, and the first call
    after the fix finds it and starts all this."""
    from vaultmem.live import Freshness, settle_heap, start_upgrade

    freshness = Freshness(vault)
    live = Live(vault, freshness)
    problem = open_index(vault)
    if problem is None:
        live.usable.set()
    else:
        live.lost(problem)
    upgrading: list[Background | None] = []  # the upgrade's thread, once started

    def prepare() -> None:
        live.usable.wait()  # at once, unless the index could not be used at start
        if live.closed.is_set():
            return
        # One thread, one step after another, and only the catch-up before the first answer:
        # on two cores, threads fighting for the GIL (setting up inotify watches on every
        # folder, loading the vectors) made the first answer wait for all of them.
        freshness.mark_changed()  # catch up with edits made while no server ran
        catch_up()
        live.ready.set()
        try:
            vault.embedder().embed(["vaultmem"])  # loads the model (it loads on first use)
        except VaultmemError as exc:  # search says so itself, and falls back to keywords
            log.warning("embedding model not ready: %s", exc)
        if live.answered.wait(FIRST_CALL_GRACE):
            # The answer is still being serialised and written: setting up the watches holds
            # the GIL for a while, and would hold the first answer back with it.
            live.closed.wait(0.5)
        if live.closed.is_set():
            return
        freshness.start(check_now=True)
        freshness.ready.wait(STARTUP_WAIT)
        catch_up()  # what changed between the first catch-up and the watcher's start
        live.watching.set()
        if not live.closed.is_set():
            vault.warm(background=False)
            settle_heap()
        if not live.closed.is_set():
            # a vault past auto's limit moves to all-MiniLM-L6-v2 at idle priority
            upgrading.append(start_upgrade(vault))

    def catch_up() -> None:
        try:
            report = freshness.ensure_fresh()
            live.caught_up_at = time.monotonic()
            if report is not None and report.changed + report.removed:
                log.info("caught up with edits: %s", report.summary())
        except VaultmemError as exc:  # the next call retries and reports it
            log.warning("could not catch up with edits yet: %s", exc)

    preparing = threading.Thread(target=prepare, name="vaultmem-prepare", daemon=True)
    preparing.start()
    try:
        yield live
    finally:
        live.closed.set()
        live.answered.set()  # no first call is coming: let the preparation finish
        live.usable.set()  # nor a fixed index: the preparation sees `closed` and stops
        preparing.join(timeout=STARTUP_WAIT)
        for background in upgrading:
            if background is not None:
                background.stop()
        freshness.stop()


def configure_logging() -> None:
    """Plain records on stderr (stdout is the stdio transport): ours from INFO, the SDK's from
    WARNING (it would log every request)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vaultmem mcp: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("vaultmem").setLevel(logging.INFO)
