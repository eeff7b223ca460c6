"""Shared fixtures: small vaults written into tmp_path, the committed sample vault, and
stand-ins for os calls that fail (a disk without hard links, a full disk, a refused open…)."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NoReturn

import pytest

from vaultmem.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = ROOT / "sample-vault"
SHARED_DATA = ROOT.parent / "shared" / "data"

MakeVault = Callable[[dict[str, str | bytes]], Vault]


def fake_model_env() -> dict[str, str]:
    """This process's environment for a vaultmem subprocess: no VAULTMEM_ setting of the
    caller's, and the deterministic fake embedder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env["VAULTMEM_EMBEDDER"] = "fake"
    return env


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


@pytest.fixture
def make_vault(tmp_path: Path) -> MakeVault:
    """Write files into a fresh vault folder and return an (unindexed) Vault for it."""

    def make(files: dict[str, str | bytes]) -> Vault:
        root = tmp_path / "vault"
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        write_files(root, files)
        return Vault(root)

    return make


@pytest.fixture
def sample_vault(tmp_path: Path) -> Vault:
    """The committed sample vault, indexed into tmp_path (the repo copy is never written)."""
    vault = Vault(SAMPLE_VAULT, tmp_path / "sample-index.db")
    vault.reindex()
    return vault


@pytest.fixture(autouse=True)
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests embed with the deterministic fake unless they ask for a real model."""
    monkeypatch.setenv("VAULTMEM_EMBEDDER", "fake")
    # and without re-ranking, whatever a developer's environment says (tests/test_rerank.py
    # turns it on)
    monkeypatch.setenv("VAULTMEM_RERANK", "off")


def bind_socket(path: Path) -> None:
    """A real AF_UNIX socket file at `path` (bound through its folder's descriptor: socket paths
    are limited to 108 bytes, tmp paths can be longer)."""
    sock = socket.socket(socket.AF_UNIX)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock.bind(f"/proc/self/fd/{fd}/{path.name}")
    finally:
        os.close(fd)
        sock.close()


# --------------------------------------------------------------------------- failing os calls
# Stand-ins a test puts in place of an os call (monkeypatch.setattr(os, "link", failing(…))) to
# play what a disk, a share or another program does at that step. Each passes every call it
# does not fail on to the real function, as it was before any test replaced it.

REAL_OPEN, REAL_LINK, REAL_WRITE = os.open, os.link, os.write
REAL_FSYNC, REAL_UNLINK, REAL_RENAME = os.fsync, os.unlink, os.rename
_REAL: dict[str, Callable[..., Any]] = {"open": REAL_OPEN, "unlink": REAL_UNLINK}


def fd_path(fd: int) -> str:
    """The path an open file descriptor stands for."""
    return os.readlink(f"/proc/self/fd/{fd}")


def failing(error: int | str) -> Callable[..., NoReturn]:
    """A call that always fails: with errno `error` (OSError picks the subclass, so EPERM and
    EACCES give a PermissionError), or, given a message, with no errno at all (a driver or a
    share that gives no reason)."""

    def fail(*args: object, **kwargs: object) -> NoReturn:
        if isinstance(error, str):
            raise OSError(error)
        raise OSError(error, os.strerror(error))

    return fail


def refusing(
    call: str, error: int, *, names: Collection[str] = (), ending: str = ""
) -> Callable[..., Any]:
    """`os.<call>` (open or unlink) failing with errno `error` for a path given whole in
    `names` or ending in `ending`, as the call is asked (a name beside its folder's
    descriptor, or a whole path); the real call for any other path."""
    real = _REAL[call]

    def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
        name = os.fspath(path)
        if name in names or (ending and name.endswith(ending)):
            raise OSError(error, os.strerror(error))
        return real(path, *args, **kwargs)

    return refuse


def full_disk(
    ending: str, *, short: int = 0, first: Callable[[], None] | None = None
) -> Callable[[int, bytes | memoryview], int]:
    """`os.write` onto a disk that is full for the files whose names end in `ending` (any
    other write goes through): `first` runs before (another program acting just then), each
    call writes `short` bytes while it is asked for more (a short write), then ENOSPC."""

    def write(fd: int, data: bytes | memoryview) -> int:
        if not fd_path(fd).endswith(ending):
            return REAL_WRITE(fd, data)
        if first is not None:
            first()
        if short and len(data) > short:
            return REAL_WRITE(fd, bytes(data)[:short])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write


def synced_then(ending: str, meanwhile: Callable[[], None]) -> Callable[[int], None]:
    """`os.fsync` that syncs, then, for a file whose name ends in `ending`, lets another
    program act (`meanwhile`: the note saved or deleted while its new version is written)."""

    def fsync(fd: int) -> None:
        REAL_FSYNC(fd)
        if fd_path(fd).endswith(ending):
            meanwhile()

    return fsync


def linked_after(meanwhile: Callable[[], None], *, links: bool = True) -> Callable[..., None]:
    """`os.link` with another program acting (`meanwhile`) just before the link is made;
    without `links`, the disk then refuses hard links (EPERM) as FAT and some shares do."""

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        meanwhile()
        if not links:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        REAL_LINK(src, dst, **kwargs)

    return link


def renamed_once(meanwhile: Callable[[], None], then: int = errno.EIO) -> Callable[..., None]:
    """`os.rename` that works once, with another program acting (`meanwhile`) just before,
    and fails with errno `then` every time after (a move that cannot be taken back)."""
    calls = 0

    def rename(src: Any, dst: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError(then, os.strerror(then))
        meanwhile()
        REAL_RENAME(src, dst, **kwargs)

    return rename
