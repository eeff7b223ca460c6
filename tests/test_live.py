"""Freshness: a long-running front-end notices edits on disk and reindexes only when needed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultmem.errors import IndexBusy
from vaultmem.live import Freshness
from vaultmem.vault import Vault


def _wait(event: threading.Event | None, condition: object = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if event is not None and event.is_set():
            return
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def test_edit_on_disk_is_seen_by_the_next_search(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "# A\nalpha\n"})
    vault.reindex()
    seen: list[frozenset[str]] = []
    fresh = Freshness(vault, on_change=seen.append, debounce=0.05)
    fresh.start(check_now=False)
    try:
        _wait(fresh.ready)
        assert fresh.ensure_fresh() is None  # nothing changed: no reindex at all
        (vault.root / "b.md").write_text("# B\nzebrafish\n", encoding="utf-8")
        _wait(None, lambda: fresh.pending)
        report = fresh.ensure_fresh()
        assert report is not None and report.changed == 1
        assert [h.path for h in vault.search("zebrafish", mode="keyword").hits] == ["b.md"]
        assert frozenset({"b.md"}) in seen
        assert not fresh.pending
    finally:
        fresh.stop()


def test_dot_folders_and_the_index_itself_do_not_count(tmp_path: Path) -> None:
    """Writes to dot-folders and to the index's own files (here inside the vault, where only the
    own-files filter keeps them out) never count; an edit to a note written after them does.

    The note edit is the sentinel: events arrive in order, so once the watcher has reported it,
    it has reported everything written before it, and what it reported is all there was.
    """
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "a.md").write_text("alpha\n", encoding="utf-8")
    vault = Vault(root, root / "vaultmem.db")  # `--index` inside the vault, not in a dot-folder
    vault.reindex()
    seen: list[frozenset[str]] = []
    fresh = Freshness(vault, on_change=seen.append, debounce=0.05)
    fresh.start(check_now=False)
    try:
        _wait(fresh.ready)
        (root / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")
        vault.reindex(full=True)  # rewrites vaultmem.db, its -wal, -shm and .lock
        assert (root / "vaultmem.db").exists() and (root / "vaultmem.db.lock").exists()
        (root / "a.md").write_text("beta\n", encoding="utf-8")
        _wait(None, lambda: any("a.md" in batch for batch in seen))
        assert frozenset().union(*seen) == {"a.md"}
        assert fresh.pending
    finally:
        fresh.stop()
        vault.close()


def test_start_checks_once_for_edits_made_while_closed(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    (vault.root / "a.md").write_text("gamma ray\n", encoding="utf-8")
    fresh = Freshness(vault)
    fresh.start()
    try:
        report = fresh.ensure_fresh()
        assert report is not None and report.changed == 1
        assert fresh.ensure_fresh() is None
    finally:
        fresh.stop()


def test_a_failed_refresh_stays_pending(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    fresh = Freshness(vault, wait=0.0)
    fresh.mark_changed()
    lock = Path(str(vault.index_path) + ".lock")
    import fcntl

    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process is reindexing
        with pytest.raises(IndexBusy, match="another reindex is running"):
            fresh.ensure_fresh()
    assert fresh.pending
    assert fresh.ensure_fresh() is not None


def test_concurrent_callers_refresh_once(make_vault: MakeVault) -> None:
    vault = make_vault({f"n{i}.md": f"note {i}\n" for i in range(30)})
    vault.reindex()
    fresh = Freshness(vault)
    fresh.mark_changed()
    (vault.root / "n0.md").write_text("changed\n", encoding="utf-8")
    reports: list[object] = []
    threads = [
        threading.Thread(target=lambda: reports.append(fresh.ensure_fresh())) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in reports) == 1


def test_settle_heap_freezes_what_is_there_and_spaces_full_collections() -> None:
    import gc

    from vaultmem.live import FULL_GC_EVERY, settle_heap

    threshold = gc.get_threshold()
    try:
        kept = [object() for _ in range(1000)]
        settle_heap()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold()[2] >= FULL_GC_EVERY
        assert gc.get_threshold()[:2] == threshold[:2]
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
