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

from vaultmem.errors import NoIndex, VaultmemError

if TYPE_CHECKING:
    from vaultmem.embed_upgrade import Background
    from vaultmem.indexer import ReindexReport
    from vaultmem.live import Freshness
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

STARTUP_WAIT = 120.0  # seconds a first call waits for the start-up catch-up reindex
FIRST_CALL_GRACE = 2.0  # the watcher starts after the first answer, or after this many seconds


@dataclass
class Live:
    """What keeps a running server's answers current: the start-up catch-up, then the watcher."""

    freshness: Freshness
    ready: threading.Event = field(default_factory=threading.Event)  # caught up with edits
    answered: threading.Event = field(default_factory=threading.Event)  # a first call is done
    watching: threading.Event = field(default_factory=threading.Event)  # the watcher runs
    closed: threading.Event = field(default_factory=threading.Event)  # the server is stopping

    caught_up_at: float = 0.0  # time.monotonic() of the last catch-up

    def refresh(self) -> ReindexReport | None:
        """Reindex if notes changed (a first call waits for the start-up catch-up)."""
        self.ready.wait(STARTUP_WAIT)
        if not self.watching.is_set() and time.monotonic() - self.caught_up_at > 1.0:
            self.freshness.mark_changed()  # no watcher yet to say whether anything changed
        return self.freshness.ensure_fresh()


@contextlib.contextmanager
def serving(vault: Vault) -> Iterator[Live]:
    """Ready a vault for a long-running server: an index, a file watcher, and in the
    background the catch-up on edits made while no server ran, the embedding model and the
    vectors in memory (a first call waits for the catch-up only)."""
    from vaultmem.live import Freshness, settle_heap, start_upgrade

    try:
        vault.conn  # noqa: B018 - opening the index checks that it exists and its schema
    except NoIndex:
        log.info("no index for %s yet: building it once (text and vectors)", vault.root)
        report = vault.reindex()
        log.info("indexed: %s", report.summary())
    freshness = Freshness(vault)
    live = Live(freshness)
    upgrading: list[Background | None] = []  # the upgrade's thread, once started

    def prepare() -> None:
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
