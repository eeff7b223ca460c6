"""Freshness: a long-running front-end notices edits on disk and reindexes only when needed."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from vaultmem.errors import IndexBusy
from vaultmem.live import Freshness, refresh
from vaultmem.vault import Vault


def _wait(event: threading.Event | None, condition: object = None, timeout: float = 120.0) -> None:
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


# ---- the watcher's start, a system that cannot watch, refreshes that change nothing


def test_the_catch_up_scans_only_once_the_watcher_is_in_place(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vaultmem watch` told its catch-up while the watcher was still starting: an edit made
    between the catch-up's scan and the watcher's start was never reported. The catch-up now
    waits for the watcher (here held back until the catch-up has had a second to run early)."""
    import watchfiles._rust_notify as rust

    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    order: list[str] = []
    held = threading.Event()
    real_notify, real_reindex = rust.RustNotify, vault.reindex

    def slow_notify(*args: Any) -> object:
        held.wait(60)
        order.append("watching")
        return real_notify(*args)

    def reindex(**kwargs: object) -> object:
        order.append("scan")
        return real_reindex(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rust, "RustNotify", slow_notify)
    monkeypatch.setattr(vault, "reindex", reindex)
    fresh = Freshness(vault)
    fresh.start(check_now=True)
    try:
        catch_up = threading.Thread(target=fresh.ensure_fresh)
        catch_up.start()
        catch_up.join(1.0)  # not a wait for a result: time for a catch-up that runs early
        held.set()
        catch_up.join(60)
        assert order == ["watching", "scan"]
    finally:
        held.set()
        fresh.stop()


def test_a_system_that_cannot_watch_is_polled(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No inotify instance left (a limit shared by every program of the user, 128 by default
    on Linux): the vault is polled, and the log says why and what to raise."""
    import watchfiles._rust_notify as rust

    real_notify = rust.RustNotify

    def no_inotify(paths: list[str], debug: bool, polling: bool, *rest: Any) -> object:
        if not polling:
            raise OSError("Error creating recommended watcher: Too many open files (os error 24)")
        return real_notify(paths, debug, polling, *rest)

    monkeypatch.setattr(rust, "RustNotify", no_inotify)
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    fresh = Freshness(vault, debounce=0.05)
    fresh.start(check_now=False)
    try:
        _wait(fresh.ready)
        assert fresh.polling and fresh.failure is None
        assert "Too many open files" in caplog.text and "max_user_instances" in caplog.text
        (vault.root / "b.md").write_text("# B\nokapi\n", encoding="utf-8")
        _wait(None, lambda: fresh.pending, timeout=60)
        report = fresh.ensure_fresh()
        assert report is not None and report.changed == 1
    finally:
        fresh.stop()


def test_a_watcher_that_cannot_start_says_why(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles._rust_notify as rust

    def broken(*_args: object) -> object:
        raise OSError("no watching here")

    monkeypatch.setattr(rust, "RustNotify", broken)
    vault = make_vault({"a.md": "alpha\n"})
    fresh = Freshness(vault)
    fresh.start()
    try:
        _wait(fresh.ready)
        assert fresh.failure == "no watching here"
    finally:
        fresh.stop()


def test_a_refresh_that_changed_nothing_says_so(make_vault: MakeVault) -> None:
    """A chmod wakes the watcher; the reindex finds nothing changed, and the refresh says so
    (`vaultmem watch` prints nothing for it)."""
    vault = make_vault({"a.md": "alpha\n", "b.md": "beta\n"})
    vault.reindex()
    fresh = Freshness(vault, debounce=0.05)
    fresh.start(check_now=False)
    try:
        _wait(fresh.ready)
        (vault.root / "a.md").chmod(0o600)
        _wait(None, lambda: fresh.pending)
        found = refresh(fresh)
        assert found is not None and not found.changed
        (vault.root / "b.md").write_text("beta, edited\n", encoding="utf-8")
        _wait(None, lambda: fresh.pending)
        found = refresh(fresh)
        assert found is not None and found.changed and found.edited == ("b.md",)
    finally:
        fresh.stop()
