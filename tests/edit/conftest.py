"""Helpers for the editor's tests: snapshots of a folder, child processes, dropped privileges."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vaultmem.edit import disk

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 240.0  # generous: a nice-19 child among nice-0 work gets ~1.5 % of a core
REAL_LOCK = disk.lock  # as it is before any test replaces it


# The middle of a racing child's script (`go` and `ready` are paths it was given): it says it
# is ready, then waits for the go, so that every child starts its write at once.
READY_THEN_GO = """
ready.write_text("ready")
give_up = time.monotonic() + 600  # never spin on after the test is gone
while not go.exists():
    if time.monotonic() > give_up:
        sys.exit(99)
    time.sleep(0.001)
"""


def snapshot(folder: Path) -> dict[str, tuple[bytes | str, int, int]]:
    """Every entry below `folder`: content (or link target), mode and inode."""
    out: dict[str, tuple[bytes | str, int, int]] = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = (os.readlink(path), st.st_mode, st.st_ino)
            elif path.is_file():
                out[rel] = (path.read_bytes(), st.st_mode, st.st_ino)
            else:
                out[rel] = ("<dir>", st.st_mode, st.st_ino)
    return out


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def child(code: str, *args: str, prefix: list[str] | None = None) -> subprocess.Popen[str]:
    """Start a Python child running `code` with the repository importable."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [*(prefix or []), sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def without_override() -> list[str]:
    """A command prefix that runs a child as root without the capabilities that bypass file
    permissions, so that a read-only file or folder means something; skips when impossible."""
    if os.geteuid() != 0:
        return []  # an ordinary user: permissions already apply
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is missing: permissions cannot be tested")
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.decode().strip()}")
    return prefix


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every editor test runs in its own empty working folder: a path the code wrongly took
    relative to the working folder then finds nothing there (and writes nothing into the
    checkout), whatever earlier tests or mutation runs left in it."""
    monkeypatch.chdir(tmp_path)


def locked_then(meanwhile: Callable[[], None]) -> Callable[[int, str], None]:
    """`disk.lock` that takes the lock, then lets whoever held it before act (`meanwhile`):
    the note replaced, deleted or moved between the writer's look and its lock."""

    def lock(fd: int, path: str) -> None:
        REAL_LOCK(fd, path)
        meanwhile()

    return lock


@contextlib.contextmanager
def lock_held(note: Path) -> Iterator[int]:
    """`note` locked as another vaultmem process locks it (flock on a file of its own) for
    the block; yields that file's descriptor, closed at the end."""
    holder = os.open(note, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        yield holder
    finally:
        os.close(holder)


def release_once_waited_for(
    monkeypatch: pytest.MonkeyPatch, holder: int
) -> Callable[[], list[float]]:
    """Let go of the lock held on `holder` from another thread as soon as a writer waits for
    it (its first sleep between polls), the writer's patience made long; returns what waits
    for that thread and gives the writer's sleeps (empty: it never waited)."""
    monkeypatch.setattr(disk, "LOCK_WAIT_S", 600.0)
    waiting = threading.Event()
    slept: list[float] = []
    real_sleep = disk.time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        waiting.set()
        real_sleep(seconds)

    monkeypatch.setattr(disk.time, "sleep", sleep)
    release = threading.Thread(  # a daemon: a write failing early never hangs the run
        target=lambda: (waiting.wait(), fcntl.flock(holder, fcntl.LOCK_UN)), daemon=True
    )
    release.start()

    def released() -> list[float]:
        waiting.set()  # a writer that never waited: the thread ends all the same
        release.join()
        return list(slept)

    return released
