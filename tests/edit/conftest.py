"""Helpers for the editor's tests: snapshots of a folder, child processes, dropped privileges."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 240.0  # generous: a nice-19 child among nice-0 work gets ~1.5 % of a core


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
