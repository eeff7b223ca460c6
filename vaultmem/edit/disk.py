"""Vault files on disk: paths checked and resolved inside the vault, opened without symlinks.

Every folder on the way to a file is opened relative to the one above it with O_NOFOLLOW, so a
folder swapped for a symlink between a check and a write makes the write fail instead of
following the link out of the vault.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteNotFound

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading must not wait for a writer
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
SYMLINK_ERRNOS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # what O_NOFOLLOW raises on a link
# A file system without hard links (FAT, some network shares) answers link() with one of these
NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS)
TMP_SUFFIX = ".vaultmem-tmp"
LOCK_WAIT_S = 10.0


def vault_parts(path: str) -> tuple[str, ...]:
    """The parts of a vault-relative path, refusing one that is absolute or climbs out."""
    parts = tuple(path.split("/"))
    if (
        not path
        or "\x00" in path
        or path.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise CannotEdit(
            f"{path!r} is not a path inside the vault; give it relative to the vault root,"
            " with forward slashes (for example `people/Maya Chen.md`)"
        )
    return parts


def real_root(root: Path) -> str:
    return os.path.realpath(root)


def inside(real: str, root: str) -> bool:
    return real.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: Path, path: str) -> tuple[str, ...]:
    """The parts (below the vault's real folder) of the file `path` names, after its symlinks.

    A note that is a symlink to another file inside the vault resolves to that file, so a write
    goes through the link and the link stays a link; a symlink leading outside is refused.
    """
    parts = vault_parts(path)
    top = real_root(root)
    real = os.path.realpath(os.path.join(top, *as_on_disk(top, parts)))
    if os.path.islink(real):  # realpath stops at a link it cannot follow to its end: a loop
        raise CannotEdit(
            f"{path} is a symlink that leads back to itself (a loop), not a note; nothing was"
            " changed. Remove the link, or point it at a note"
        )
    if not inside(real, top):
        raise CannotEdit(
            f"{path} leads outside the vault (a symlink to {real}); vaultmem changes only files"
            " inside the vault"
        )
    return tuple(os.path.relpath(real, top).split(os.sep))


def as_on_disk(top: str, parts: tuple[str, ...]) -> tuple[str, ...]:
    """`parts` spelled as the names on disk where only Unicode normalisation differs: the index
    keeps paths in NFC, macOS writes names in NFD. An ASCII path is no exception: NFC turns a
    few characters into ASCII ones (the KELVIN SIGN into `K`)."""
    if os.path.lexists(os.path.join(top, *parts)):
        return parts
    found: list[str] = []
    for part in parts:
        folder = os.path.join(top, *found)
        if not os.path.lexists(os.path.join(folder, part)):
            key = unicodedata.normalize("NFC", part)
            try:
                same = [n for n in os.listdir(folder) if unicodedata.normalize("NFC", n) == key]
            except OSError:
                same = []
            if len(same) == 1:
                part = same[0]
        found.append(part)
    return tuple(found)


@contextmanager
def open_root(root: Path) -> Iterator[int]:
    try:
        fd = os.open(real_root(root), _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise CannotEdit(f"cannot open the vault folder {root}: {exc.strerror}") from None
    try:
        yield fd
    finally:
        os.close(fd)


def open_folder(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> int:
    """The folder `parts` below the vault root, opened (never through a symlink); the caller
    closes it. With `create`, missing folders are made (see `made_folders`). Raises OSError."""
    return open_folders(root_fd, parts, create=create)[0]


def open_folders(
    root_fd: int, parts: tuple[str, ...], *, create: bool = False
) -> tuple[int, list[str]]:
    """`open_folder`, and the vault paths of the folders it had to make, top first."""
    fd = os.dup(root_fd)
    made: list[str] = []
    try:
        for n, part in enumerate(parts):
            try:
                below = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                if not os.fstat(fd).st_mode & 0o222:  # marked read-only: refused even for root
                    raise PermissionError(errno.EACCES, "read-only folder", part) from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    made.append("/".join(parts[: n + 1]))
                except FileExistsError:
                    pass  # made meanwhile by someone else: open it like any folder
                below = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd, made


def missing_note(path: str) -> NoteNotFound:
    return NoteNotFound(
        f"{path} does not exist (deleted or moved?); run `vaultmem reindex` if the index still"
        " lists it"
    )


def fsync_folder(fd: int) -> None:
    """Make a rename in the folder durable; some file systems cannot sync a folder."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise


def changed_on_disk(path: str, how: str = "") -> ChangedOnDisk:
    """The refusal of a write whose note is no longer the revision it was computed from."""
    return ChangedOnDisk(
        f"{path} changed on disk since it was read; nothing was written{how}. Read the note again"
        " (run `vaultmem reindex` if the index is behind) and redo the change on its current text."
    )


def exists(folder_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def temporary_name(name: str) -> str:
    """A new temporary file's name beside `name`: a dot file (hidden from Obsidian and the
    indexer) that says whose it is: `.<name>.<pid>.<token>.vaultmem-tmp`."""
    stem = name.encode("utf-8", "surrogateescape")[:80].decode("utf-8", "ignore")
    return f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"


# A file or folder without any write bit is marked read-only by its owner: refused even for root,
# who could write it anyway. Otherwise the system's own answer (access(2)) counts.


def refuse_read_only_file(
    folder_fd: int, name: str, st: os.stat_result, path: str, nothing: str
) -> None:
    """Raise CannotEdit when the file `name` is read-only; `nothing` ends the message."""
    if not st.st_mode & 0o222 or not os.access(name, os.W_OK, dir_fd=folder_fd):
        raise CannotEdit(
            f"{path} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); {nothing}."
            " Make it writable yourself if you want vaultmem to change it."
        )


def refuse_read_only_folder(folder_fd: int, path: str, nothing: str) -> None:
    """Raise CannotEdit when the folder holding `path` is read-only."""
    mode = os.fstat(folder_fd).st_mode
    if not mode & 0o222 or not os.access(".", os.W_OK, dir_fd=folder_fd):
        raise CannotEdit(
            f"the folder of {path} is read-only (mode {stat.S_IMODE(mode):04o}); {nothing}."
            " Make it writable yourself if you want vaultmem to change files in it."
        )


def lock(fd: int, path: str) -> None:
    """Take the note's exclusive lock (held until `fd` closes): vaultmem's writers and trash
    moves of one note go one at a time, each re-checking the note once it holds the lock."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise CannotEdit(
                    f"{path} is being changed by another vaultmem process; nothing was written."
                    " Try again in a moment."
                ) from None
            time.sleep(0.01)
        except OSError:  # a file system without locks: the digest checks still guard the write
            return
