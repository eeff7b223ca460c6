"""vaultmem's own record of its moves to the trash: `.vaultmem/trash.jsonl`, one JSON object a line.

Obsidian records nothing about its trash. This log is a convenience, never a requirement: a record
counts only while the file it names is still the very file it describes (same device, inode and
size), unreadable lines are skipped, and a log that cannot be written is only a warning.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from vaultmem.edit import disk
from vaultmem.edit.reading import read_regular
from vaultmem.errors import CannotEdit

log = logging.getLogger(__name__)

LOG = (".vaultmem", "trash.jsonl")
_LOG_MAX_BYTES = 64 << 20  # a log this large is not vaultmem's: ignored, never read whole


@dataclass(frozen=True)
class Move:
    """One move to the trash as the log records it."""

    trashed: str  # vault-relative path in the trash
    original: str  # vault-relative path it came from
    at: dt.datetime  # UTC
    dev: int  # the file's identity, so a later file under the same name is not taken for it
    ino: int
    size: int
    digest: str

    def describes(self, st: os.stat_result) -> bool:
        return (self.dev, self.ino, self.size) == (st.st_dev, st.st_ino, st.st_size)

    def line(self) -> bytes:
        fields = {
            "trashed": self.trashed,
            "from": self.original,
            "at": self.at.isoformat(),
            "dev": self.dev,
            "ino": self.ino,
            "size": self.size,
            "digest": self.digest,
        }
        return (json.dumps(fields, ensure_ascii=False) + "\n").encode("utf-8")


def read_log(root: Path) -> dict[str, Move]:
    """The logged moves by trash path (the latest wins); unreadable lines are skipped."""
    moves: dict[str, Move] = {}
    try:
        with disk.open_root(root) as root_fd:
            fd = disk.open_folder(root_fd, LOG[:1])
            try:
                log_fd = os.open(LOG[1], disk.FILE_FLAGS, dir_fd=fd)
            finally:
                os.close(fd)
        try:
            data = read_regular(log_fd, "/".join(LOG), _LOG_MAX_BYTES)
        finally:
            os.close(log_fd)
    except (OSError, CannotEdit):
        return moves
    for raw in data.splitlines():
        move = _move(raw)
        if move is not None:
            moves[move.trashed] = move
    return moves


def _move(raw: bytes) -> Move | None:
    try:
        fields = json.loads(raw)
        at = dt.datetime.fromisoformat(fields["at"])
        strings = [fields[k] for k in ("trashed", "from", "digest")]
        numbers = [fields[k] for k in ("dev", "ino", "size")]
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    if at.tzinfo is None or not all(isinstance(v, str) for v in strings):
        return None
    if not all(type(v) is int for v in numbers):
        return None
    trashed, original, digest = strings
    dev, ino, size = numbers
    return Move(trashed, original, at.astimezone(dt.UTC), dev, ino, size, digest)


def append_log(root_fd: int, move: Move) -> None:
    """Add one line to the log; a log that cannot be written is a warning, never a failure."""
    line = move.line()
    try:
        fd = disk.open_folder(root_fd, LOG[:1], create=True)
        try:
            log_fd = os.open(
                LOG[1],
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o644,
                dir_fd=fd,
            )
        finally:
            os.close(fd)
        try:
            os.write(log_fd, line)  # one short append: never interleaved with another writer's
        finally:
            os.close(log_fd)
    except OSError as exc:
        log.warning(
            "vaultmem: could not record the move in %s (%s); the trash still works, but will"
            " guess where %s came from",
            "/".join(LOG),
            exc.strerror or exc,
            move.trashed,
        )


def compact_log(root: Path, root_fd: int) -> None:
    """Rewrite the log keeping only the records of files still in the trash."""
    keep = []
    for path, move in read_log(root).items():
        parts = tuple(path.split("/"))
        try:
            fd = disk.open_folder(root_fd, parts[:-1])
            try:
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            finally:
                os.close(fd)
        except (OSError, CannotEdit):
            continue
        if move.describes(st):
            keep.append(move)
    data = b"".join(move.line() for move in keep)
    tmp = disk.temporary_name(LOG[1])
    try:
        fd = disk.open_folder(root_fd, LOG[:1])
        try:
            out = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=fd
            )
            try:
                os.write(out, data)
                os.fsync(out)
            finally:
                os.close(out)
            os.rename(tmp, LOG[1], src_dir_fd=fd, dst_dir_fd=fd)
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("vaultmem: could not tidy %s (%s)", "/".join(LOG), exc.strerror or exc)
