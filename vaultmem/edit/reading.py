"""Reading a note for editing: its bytes once, their digest, encoding and lines as found."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem.edit import disk
from vaultmem.edit.text import Encoding, Line, Lines, Undecodable, decode, encode, join_lines
from vaultmem.edit.text import split_lines as _split_lines
from vaultmem.errors import CannotEdit
from vaultmem.model import content_digest

DEFAULT_MAX_BYTES = 10 << 20  # the config's default max_file_mb

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


@dataclass(frozen=True)
class NoteSource:
    """A note as read for editing: the revision a change is computed from and checked against."""

    path: str  # vault-relative, as asked (what the index calls the note)
    file: str  # vault-relative file the bytes came from: differs for a symlink inside the vault
    digest: str  # the same content hash the index stores for the note
    encoding: Encoding
    lines: Lines

    @property
    def ends_with_newline(self) -> bool:
        return bool(self.lines) and self.lines[-1].end != ""

    @property
    def text(self) -> str:
        """The text with its own line ends (a BOM is part of the encoding, not the text)."""
        return join_lines(self.lines)

    def render(self, lines: Sequence[Line] | None = None) -> bytes:
        """`lines` (the note's own by default) as bytes in the note's encoding.

        Raises text.Unencodable when the encoding cannot hold a character of them.
        """
        return encode(join_lines(self.lines if lines is None else lines), self.encoding)


def read_note(
    root: Path,
    path: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    expected_digest: str | None = None,
) -> NoteSource:
    """Read the note at vault path `path` for editing.

    Refuses (CannotEdit) anything but a regular file inside the vault of at most `max_bytes`;
    raises NoteNotFound when it is missing and, given the digest the index (or an earlier read)
    holds, ChangedOnDisk when the bytes differ from it.
    """
    parts = disk.resolve(root, path)
    file = "/".join(parts)
    with disk.open_root(root) as root_fd:
        try:
            folder_fd = disk.open_folder(root_fd, parts[:-1])
            try:
                # Look before opening: a socket cannot be opened at all (ENXIO) and a device
                # may act on an open, so neither is ever opened; read_regular checks the file
                # actually opened, in case one is swapped in meanwhile.
                refuse_special(os.stat(parts[-1], dir_fd=folder_fd, follow_symlinks=False), path)
                fd = os.open(parts[-1], disk.FILE_FLAGS, dir_fd=folder_fd)
            finally:
                os.close(folder_fd)
        except FileNotFoundError:
            raise disk.missing_note(path) from None
        except OSError as exc:
            if exc.errno in disk.SYMLINK_ERRNOS:  # swapped for a symlink since it was resolved
                raise CannotEdit(f"{path} changed while it was read; try again") from None
            raise CannotEdit(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = read_regular(fd, path, max_bytes)
    finally:
        os.close(fd)
    digest = content_digest(data)
    if expected_digest is not None and digest != expected_digest:
        raise disk.changed_on_disk(path, " (its content is not the revision you hold)")
    try:
        text, encoding = decode(data)
    except Undecodable as exc:
        raise CannotEdit(f"{path} {exc}; vaultmem will not edit it") from None
    return NoteSource(path, file, digest, encoding, _split_lines(text))


def read_regular(fd: int, path: str, max_bytes: int | None) -> bytes:
    """All bytes of the open file `fd` from its start, refusing anything but a regular file (of
    at most `max_bytes`, when given)."""
    st = os.fstat(fd)
    refuse_special(st, path)
    if max_bytes is not None and st.st_size > max_bytes:
        raise CannotEdit(_too_large(path, st.st_size, max_bytes))
    chunks: list[bytes] = []
    size = 0
    while chunk := os.pread(fd, 1 << 20, size):
        chunks.append(chunk)
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:  # grew while being read
            raise CannotEdit(_too_large(path, size, max_bytes))
    return b"".join(chunks)


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, as a person says it ("a socket")."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def refuse_special(st: os.stat_result, path: str) -> None:
    """CannotEdit naming what `path` is, unless it is a regular file (a symlink, swapped in
    since the path was resolved, counts as a change)."""
    if stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISLNK(st.st_mode):
        raise CannotEdit(f"{path} changed while it was read; try again")
    todo = (
        "name a note in it"
        if stat.S_ISDIR(st.st_mode)
        else "move it out of the vault, then run `vaultmem reindex`"
    )
    raise CannotEdit(
        f"{path} is {kind_of(st.st_mode)}, not a note file; vaultmem edits only regular files,"
        f" so nothing was changed ({todo})"
    )


def _too_large(path: str, size: int, max_bytes: int) -> str:
    return (
        f"{path} is larger than {max_bytes / (1 << 20):g} MB ({size / (1 << 20):.1f} MB);"
        " raise max_file_mb in .vaultmem/config.toml to edit it"
    )
