"""Writing into the vault: atomic, explicit, and never over a file that changed since read."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from vaultmem.errors import ChangedOnDisk


class FileChanged(ChangedOnDisk):
    """The file on disk is not the version the change was computed from (exit code 6, as every
    write refused for a change on disk: docs/editing.md)."""


def digest(data: bytes) -> str:
    """The content hash the index stores for every note (blake2b, 16 bytes)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def replace_file(path: Path, new: bytes, expected_digest: str) -> None:
    """Atomically replace `path` with `new`, if its content still hashes to `expected_digest`.

    The new text goes to a temporary file in the same folder, is flushed to disk, takes the old
    file's permissions and then renames over it, so a crash leaves either version, never half.
    """
    current = path.read_bytes()
    if digest(current) != expected_digest:
        raise FileChanged(
            f"{path} changed since it was indexed; nothing was written. "
            "Run `vaultmem reindex` and try again."
        )
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".vaultmem-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if digest(path.read_bytes()) != expected_digest:  # changed while we wrote
            raise FileChanged(f"{path} changed while writing; nothing was written.")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def create_file(path: Path, data: bytes) -> None:
    """Atomically create `path` holding `data`, refusing (FileExistsError) if it exists.

    The text is written and flushed to a temporary file first, then hard-linked into place: the
    link fails if the name exists, so a file created meanwhile is never overwritten and a crash
    leaves either no file or the whole one. Folders without hard links get an exclusive create.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".vaultmem-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a note is readable like its neighbours
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (some network or FAT file systems)
            with open(path, "xb") as out:
                out.write(data)
    finally:
        os.unlink(tmp)
