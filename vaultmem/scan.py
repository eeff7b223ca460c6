"""Finding the vault's files (ignore rules, symlink loops, odd names) and reading notes safely.

`read_note` is the one reader of notes for indexing and showing them (search, read_note, the
gaps' rewrites, the TUI): lenient (another encoding is read with a warning), race-free
(never through a symlink leading out, never blocking on a FIFO). Editing reads through
`edit.reading.read_note` instead, which is strict where a write must be (the encoding kept
as found, the digest checked, every folder on the way opened without following a symlink).
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import os
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Literal, NamedTuple

from vaultmem.model import content_digest

FileKind = Literal["note", "attachment"]
_BINARY_PROBE = 8192
# open flags for reading a note: never through a symlink, never blocking (a FIFO), never
# leaked to a child process; 0 where the platform lacks one
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class VaultFile(NamedTuple):  # a tuple: made once per file on every reindex, so it must be cheap
    path: str  # vault-relative, forward slashes, NFC: how the index and links name the file
    kind: FileKind
    size: int
    mtime_ns: int
    disk: str | None = None  # the name on disk when it differs from `path` (NFD, bad bytes)

    @property
    def disk_path(self) -> str:
        return self.path if self.disk is None else self.disk


@dataclass(frozen=True)
class ScanResult:
    files: list[VaultFile]
    skipped: dict[str, str]  # path -> why


def excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for raw in patterns:
        pattern = raw.strip().strip("/")
        if not pattern:
            continue
        if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
            return True
        if "/" not in pattern and fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def vault_name(name: str) -> str:
    """How the index names a file or folder found on disk: NFC (macOS writes NFD), and bytes
    that are not UTF-8 (read by Python as lone surrogates) as U+FFFD, which SQLite can store."""
    if name.isascii():
        return name
    if any("\udc80" <= c <= "\udcff" for c in name):
        name = os.fsencode(name).decode("utf-8", "replace")
    return unicodedata.normalize("NFC", name)


def name_problem(disk: str) -> str | None:
    """A warning for a note whose on-disk name the index cannot hold as it is, or None."""
    if any("\udc80" <= c <= "\udcff" for c in disk):
        return (
            f"the file name is not valid UTF-8 ({os.fsencode(disk)!r}); indexed as"
            f" '{vault_name(disk)}': rename the file so links can reach it"
        )
    return None


def _clashes(names: list[str], prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    """For a folder listing with non-ASCII names: the index name of each name that needs a
    new one, and the names left out (name -> why) because another one reads the same."""
    renamed: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for name in names:
        shown = vault_name(name)
        if shown != name:
            renamed[name] = shown
        groups.setdefault(shown, []).append(name)
    left_out: dict[str, str] = {}
    for shown, group in groups.items():
        if len(group) < 2:
            continue
        # the name already in the index's form wins; otherwise the first in byte order
        group.sort(key=lambda n: (n != shown, os.fsencode(n)))
        keep, *others = group
        on_disk = ", ".join(repr(os.fsencode(n)) for n in group)
        for name in others:
            left_out[name] = (
                f"{len(group)} names on disk ({on_disk}) all read as '{prefix}{shown}' in the"
                " index (Unicode NFC, bytes that are not UTF-8 as U+FFFD); only"
                f" {os.fsencode(keep)!r} is indexed: rename the others"
            )
    return renamed, left_out


def scan(root: Path, exclude: tuple[str, ...] = (), max_bytes: int = 10 << 20) -> ScanResult:
    """Every note and attachment under `root`, skipping dot-folders, excludes and oversize notes."""
    files: list[VaultFile] = []
    append = files.append
    skipped: dict[str, str] = {}
    real_root = os.path.realpath(root)
    # (folder on disk, its vault-relative prefix, its on-disk prefix when that differs); plain
    # strings and few calls per entry: this loop is most of a no-op reindex
    stack: list[tuple[str, str, str | None]] = [(str(root), "", None)]
    while stack:
        folder, prefix, disk_prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            skipped[prefix.rstrip("/") or "."] = f"cannot list folder: {exc.strerror or exc}"
            continue
        renamed: dict[str, str] | None = None  # worked out at the listing's first odd name
        left_out: dict[str, str] = {}
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            if name.isascii():
                shown = name
            else:
                # An ASCII name is always kept in a clash, so working clashes out only now
                # (for the whole listing) decides nothing already passed.
                if renamed is None:
                    renamed, left_out = _clashes([e.name for e in entries], prefix)
                shown = renamed.get(name, name)
            rel = prefix + shown
            # the on-disk path, when it is not `rel`
            disk = None if disk_prefix is None and shown is name else (disk_prefix or prefix) + name
            if exclude and excluded(rel, exclude):
                continue
            if left_out and name in left_out:
                skipped[rel] = left_out[name]
                continue
            try:
                if entry.is_symlink():
                    # The vault's boundary is its real folder: a symlink leading out of it is
                    # never read, so nothing (search, an agent over MCP) can reach outside files.
                    real = os.path.realpath(entry.path)
                    if os.path.exists(real) and not _inside(real, real_root):
                        skipped[rel] = "symlink to outside the vault: vaultmem reads only inside it"
                        continue
                if entry.is_dir():  # follows symlinks; no stat call for plain folders
                    if entry.is_symlink():
                        reason = _symlinked_folder_problem(real, os.path.realpath(folder))
                        if reason:
                            skipped[rel] = reason
                            continue
                    stack.append((entry.path, rel + "/", None if disk is None else disk + "/"))
                    continue
                est = entry.stat()  # follows symlinks: a broken one raises
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    skipped[rel] = "symlink loop: it never reaches a file"
                elif entry.is_symlink() and not os.path.exists(entry.path):
                    skipped[rel] = "broken symlink"
                else:
                    skipped[rel] = f"cannot stat: {exc.strerror}"
                continue
            if not S_ISREG(est.st_mode):
                skipped[rel] = _not_a_note_file(est.st_mode)
                continue
            if name[-3:].lower() == ".md":
                if est.st_size > max_bytes:
                    skipped[rel] = _too_large(est.st_size, max_bytes)
                    continue
                append(VaultFile(rel, "note", est.st_size, est.st_mtime_ns, disk))
            else:
                append(VaultFile(rel, "attachment", est.st_size, est.st_mtime_ns, disk))
    return ScanResult(files, skipped)  # in walk order: callers sort what they need sorted


def scan_paths(
    root: Path, paths: Iterable[str], exclude: tuple[str, ...] = (), max_bytes: int = 10 << 20
) -> ScanResult | None:
    """What `scan` would report about just `paths` (vault paths), without walking the vault: a
    path that is hidden, excluded or missing is in neither `files` nor `skipped`.

    None when a path cannot be judged alone the way the walk would judge it (a symlinked or
    non-ASCII folder on its way, a folder where the file was, an unreadable folder): the caller
    then walks the whole vault.
    """
    files: list[VaultFile] = []
    skipped: dict[str, str] = {}
    real_root = os.path.realpath(root)
    for rel in paths:
        parts = rel.split("/")
        if not all(parts) or any(p[0] == "." for p in parts):
            continue  # never indexed (the walk skips dot names)
        if exclude and any(
            excluded("/".join(parts[:i]), exclude) for i in range(1, len(parts) + 1)
        ):
            continue
        folder = str(root)
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                if not part.isascii():
                    return None  # maybe there under another Unicode form
                break
            except OSError:
                return None
            if stat.S_ISLNK(st.st_mode) or not part.isascii():
                return None
            if not stat.S_ISDIR(st.st_mode):
                break
        else:
            prefix = "/".join(parts[:-1])
            prefix = prefix + "/" if prefix else ""
            judged = _judge_one(folder, prefix, parts[-1], real_root, max_bytes, files, skipped)
            if not judged:
                return None
    return ScanResult(files, skipped)


def _judge_one(
    folder: str,
    prefix: str,
    name: str,
    real_root: str,
    max_bytes: int,
    files: list[VaultFile],
    skipped: dict[str, str],
) -> bool:
    """Add what the walk would find at `prefix + name` in `folder`; False when unsure."""
    rel = prefix + name
    disk_name = name
    if not name.isascii():  # the name on disk may be another Unicode form, or clash with one
        try:
            names = os.listdir(folder)
        except OSError:
            return False
        renamed, left_out = _clashes(names, prefix)
        found = [n for n in names if n[0] != "." and renamed.get(n, n) == name]
        if not found:
            return True  # gone
        disk_name = next((n for n in found if n not in left_out), found[0])
        if disk_name in left_out:
            skipped[rel] = left_out[disk_name]
            return True
    where = os.path.join(folder, disk_name)
    try:
        lst = os.lstat(where)
        if stat.S_ISLNK(lst.st_mode):
            real = os.path.realpath(where)
            if os.path.exists(real) and not _inside(real, real_root):
                skipped[rel] = "symlink to outside the vault: vaultmem reads only inside it"
                return True
        est = os.stat(where)
    except FileNotFoundError:
        if not os.path.lexists(where):
            return True  # gone
        skipped[rel] = "broken symlink"
        return True
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            skipped[rel] = "symlink loop: it never reaches a file"
            return True
        return False
    if stat.S_ISDIR(est.st_mode):
        return False
    if not S_ISREG(est.st_mode):
        skipped[rel] = _not_a_note_file(est.st_mode)
        return True
    disk = None if disk_name == name else prefix + disk_name
    if name[-3:].lower() == ".md":
        if est.st_size > max_bytes:
            skipped[rel] = _too_large(est.st_size, max_bytes)
        else:
            files.append(VaultFile(rel, "note", est.st_size, est.st_mtime_ns, disk))
    else:
        files.append(VaultFile(rel, "attachment", est.st_size, est.st_mtime_ns, disk))
    return True


def _too_large(size: int, max_bytes: int) -> str:
    return (
        f"larger than {max_bytes / (1 << 20):g} MB ({size / (1 << 20):.1f} MB);"
        " raise max_file_mb in .vaultmem/config.toml to index it"
    )


def _not_a_note_file(mode: int) -> str:
    """Why the scan skips (and a reader refuses) what is not a regular file: what it is and
    what to do about it."""
    return (
        f"{_file_type(mode)}, not a note file; vaultmem reads only regular files (move it out of"
        " the vault, or add it to `exclude` in .vaultmem/config.toml)"
    )


def _file_type(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _symlinked_folder_problem(real: str, real_folder: str) -> str | None:
    """Why a symlink to a folder inside the vault must not be followed, or None."""
    inside = real_folder + os.sep
    if real == real_folder or inside.startswith(real + os.sep):
        return "symlink loop: it points at a folder that contains it"
    return "symlink to a folder inside the vault, which is indexed already"


class Unreadable(Exception):
    """A note that cannot be indexed; the message says why (shown by `vaultmem doctor`)."""


@dataclass(frozen=True)
class NoteText:
    text: str
    digest: str
    warning: str | None


def read_note(
    path: str | os.PathLike[str], real_root: str | None = None, max_bytes: int | None = None
) -> NoteText:
    """Read a note's bytes and decode them, refusing binary files.

    Only a regular file is ever opened, without blocking (a FIFO put in its place would hang
    the read) and never through a symlink swapped in since the scan: a symlinked note is read
    only when its real file is inside `real_root` (the vault's real path), and when given,
    the file actually opened is checked to lie inside it, so no check can be raced. A file
    over `max_bytes` (it grew since the scan) is refused without reading it all.
    A name the index holds in another Unicode form than the disk (NFC against NFD) is found.
    """
    return decode_note(read_note_bytes(path, real_root, max_bytes))


def read_note_bytes(
    path: str | os.PathLike[str], real_root: str | None = None, max_bytes: int | None = None
) -> bytes:
    """A note's bytes as `read_note` reads them (never through a symlink leading out, never
    blocking on a FIFO), undecoded: for a reader that needs the exact revision."""
    fd, size = _open_regular(os.fspath(path), real_root)
    try:
        return _read_all(fd, size, max_bytes)
    finally:
        os.close(fd)


def disk_path(root: str | os.PathLike[str], path: str) -> str:
    """The file of vault path `path` (as the index names it) as spelled on disk: the same
    path, or its other Unicode form (NFD), or its name with the bytes that are not UTF-8."""
    where = os.path.join(os.fspath(root), path)
    if os.path.lexists(where):
        return where
    return _other_unicode_form(where) or where


def decode_note(data: bytes) -> NoteText:
    """A note's bytes as text: UTF-8, UTF-16 with a BOM, else Windows-1252 with a warning;
    refuses binary files (NUL bytes near the start)."""
    digest = content_digest(data)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return NoteText(data.decode("utf-16", errors="replace"), digest, "UTF-16 file read")
    if b"\x00" in data[:_BINARY_PROBE]:
        raise Unreadable("binary file with a .md name (NUL bytes); not indexed")
    try:
        return NoteText(data.decode("utf-8"), digest, None)
    except UnicodeDecodeError as exc:
        warning = (
            f"not valid UTF-8 (byte {exc.start}); read as Windows-1252, "
            "re-save the file as UTF-8 to silence this"
        )
        return NoteText(data.decode("cp1252", errors="replace"), digest, warning)


_OUTSIDE = "symlink to outside the vault: vaultmem reads only inside it"


def _open_regular(where: str, real_root: str | None) -> tuple[int, int]:
    """An open descriptor of the regular file at `where` and its size; FileNotFoundError when
    it is gone."""
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        found = _other_unicode_form(where)
        if found is None:
            raise
        where, st = found, os.lstat(found)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(st.st_mode):  # a symlinked note: read its real file, if inside the vault
        where = os.path.realpath(where)
        if real_root is not None and not _inside(where, real_root):
            raise Unreadable(_OUTSIDE)
        try:
            st = os.stat(where)
        except OSError as exc:
            raise Unreadable(f"cannot read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):  # never open one: a FIFO blocks, a device may act
        raise Unreadable(_not_a_note_file(st.st_mode))
    try:
        fd = os.open(where, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # became a symlink since the lstat
            raise Unreadable(_OUTSIDE if real_root else "changed while being read") from exc
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from exc
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):  # swapped since the lstat; nothing was read
            raise Unreadable(_not_a_note_file(opened.st_mode))
        if real_root is not None and not _opened_inside(fd, where, opened, real_root):
            raise Unreadable(_OUTSIDE)
    except BaseException:
        os.close(fd)
        raise
    return fd, opened.st_size


def _opened_inside(fd: int, where: str, opened: os.stat_result, real_root: str) -> bool:
    """Whether the file open as `fd` lies inside `real_root` (a folder on the way may have
    been swapped for a symlink after the scan)."""
    try:  # Linux names the file behind a descriptor; this is the file read, so no race
        return _inside(os.readlink(f"/proc/self/fd/{fd}"), real_root)
    except OSError:
        pass
    real = os.path.realpath(where)  # elsewhere: the path must still lead to this very file
    try:
        now = os.stat(real)
    except OSError:
        return False
    return _inside(real, real_root) and (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


def _read_all(fd: int, size: int, max_bytes: int | None) -> bytes:
    """The file's bytes: one read when its size is as fstat said (a regular file reads short
    only at its end), more when it grew meanwhile, refused once past `max_bytes`."""
    if max_bytes is not None and size > max_bytes:
        raise Unreadable(_too_large(size, max_bytes))
    try:
        data = os.read(fd, size + 1)
        if len(data) <= size:
            return data
        chunks = [data]
        total = len(data)
        while True:
            if max_bytes is not None and total > max_bytes:
                raise Unreadable(_too_large(os.fstat(fd).st_size, max_bytes))
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from exc
    return b"".join(chunks)


def _other_unicode_form(path: str) -> str | None:
    """The file at `path` as spelled on disk when the index holds its name in another form
    (`café` in NFC while macOS wrote NFD, or U+FFFD for bytes that are not UTF-8)."""
    if path.isascii():
        return None
    parent, name = os.path.split(path)
    if not os.path.isdir(parent):
        found = _other_unicode_form(parent)
        if found is None:
            return None
        parent = found
    want = vault_name(name)
    try:
        names = sorted(os.listdir(parent), key=lambda n: (n != want, os.fsencode(n)))
    except OSError:
        return None
    # the same choice the scan makes when two names read the same
    match = next((n for n in names if vault_name(n) == want), None)
    return None if match is None else os.path.join(parent, match)
