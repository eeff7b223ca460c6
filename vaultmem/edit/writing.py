"""Writing a note: new bytes applied atomically, only over the revision they were computed from.

A change is planned purely (`plan_edit`, `plan_new_note`: bytes in memory, nothing touched) and
applied by `write`, which checks the file still hashes to the digest it was read with, writes a
temporary file in the same folder, syncs it, renames it over the note and syncs the folder. A
crash leaves the old note or the new one, never half of one, and at worst a dot file ending in
`.vaultmem-tmp` that the indexer never reads and `clean_temporaries` removes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem.edit import disk
from vaultmem.edit.reading import NoteSource, kind_of, read_regular
from vaultmem.edit.text import ENCODING_NAMES, Line, Unencodable, encode
from vaultmem.errors import CannotEdit, NoteExists
from vaultmem.model import content_digest

TMP_SUFFIX = disk.TMP_SUFFIX
# `.<name>.<pid>.<token>.vaultmem-tmp`; those of older versions carry no pid
_TMP_RE = re.compile(r"^\..*?(?:\.(?P<pid>\d+)\.[0-9a-f]{8})?\.vaultmem-tmp$", re.DOTALL)
STALE_AFTER = dt.timedelta(hours=1)  # no write takes this long: the pid may have been reused


@dataclass(frozen=True)
class Change:
    """New bytes for one note and the revision they were computed from: a write not yet made."""

    path: str  # vault-relative, as asked (what the index calls the note)
    file: str  # the file written: differs from `path` for a symlink inside the vault
    before: str | None  # digest the file must still have; None: a new note, created exclusively
    data: bytes

    @property
    def touched(self) -> tuple[str, ...]:
        """The vault paths whose content the write changes (the link and its target)."""
        return (self.path,) if self.path == self.file else (self.path, self.file)


def plan_edit(source: NoteSource, lines: Sequence[Line]) -> Change:
    """The write that turns `source` into `lines`, in the note's own encoding.

    Refuses (CannotEdit) text that encoding cannot hold rather than converting the note.
    """
    try:
        data = source.render(lines)
    except Unencodable as exc:
        raise CannotEdit(
            f"{source.path} is saved in {ENCODING_NAMES[exc.encoding]}, which cannot hold"
            f" {exc.char!r} (U+{ord(exc.char):04X}) on line {exc.line}; nothing was written."
            " Re-save the note as UTF-8 (or leave that character out) and try again."
        ) from None
    return Change(source.path, source.file, source.digest, data)


def plan_new_note(path: str, text: str) -> Change:
    """The write that creates the note `path` holding `text` (UTF-8), refusing to overwrite."""
    parts = disk.vault_parts(path)
    if not path.lower().endswith(".md"):
        raise CannotEdit(f"{path}: a note's name ends in .md")
    if any(part.startswith(".") for part in parts):
        raise CannotEdit(
            f"{path}: a name starting with a dot is hidden from Obsidian and the index;"
            " choose another"
        )
    try:
        data = encode(text, "utf-8")
    except Unencodable as exc:
        raise CannotEdit(f"{path}: {exc}; nothing was written") from None
    return Change(path, path, None, data)


def write(root: Path, change: Change) -> tuple[str, ...]:
    """Apply `change`; return the vault paths it touched (none when the bytes were already so).

    Raises ChangedOnDisk when the note is not the revision the change was computed from,
    NoteExists when a new note's name is taken, CannotEdit when the file or folder is read-only
    or the disk refuses the write. Whatever it raises, nothing was changed.
    """
    if change.before is None:
        _create(root, change)
        return change.touched
    return _replace(root, change, change.before)


# --------------------------------------------------------------------------- replacing


def _replace(root: Path, change: Change, before: str) -> tuple[str, ...]:
    parts = disk.vault_parts(change.file)
    path = change.path
    if change.path != change.file and disk.resolve(root, change.path) != parts:
        raise disk.changed_on_disk(path, " (its symlink now leads to another file)")
    name = parts[-1]
    with disk.open_root(root) as root_fd:
        try:
            folder_fd = disk.open_folder(root_fd, parts[:-1])
        except FileNotFoundError:
            raise disk.changed_on_disk(path, " (its folder was deleted or renamed)") from None
        except OSError as exc:
            raise _folder_error(path, exc) from None
        try:
            return _replace_in(folder_fd, name, change, before)
        finally:
            os.close(folder_fd)


def _replace_in(folder_fd: int, name: str, change: Change, before: str) -> tuple[str, ...]:
    path = change.path
    fd = _open_note(folder_fd, name, path)
    try:
        disk.lock(fd, path)  # serialises vaultmem's writers of this note: one wins, the others
        # find the name holding the winner's bytes and refuse
        st = os.fstat(fd)
        if not _same_file(_lstat(folder_fd, name, path), st):
            raise disk.changed_on_disk(path, " (it was replaced meanwhile)")
        if content_digest(read_regular(fd, path, None)) != before:
            raise disk.changed_on_disk(path)
        if content_digest(change.data) == before:
            return ()  # already so: no write, and the file keeps its time stamps
        if st.st_nlink > 1:  # a rename would leave the other names with the old text
            raise CannotEdit(
                f"{path} has {st.st_nlink} hard links; writing it would split it from the"
                " others, so nothing was written (a `vaultmem trash` of it cut short leaves"
                " its second name in .trash/: run that again to finish the move)"
            )
        disk.refuse_read_only_file(folder_fd, name, st, path, "nothing was written")
        disk.refuse_read_only_folder(folder_fd, path, "nothing was written")
        tmp = _temporary(folder_fd, name, change.data, path, stat.S_IMODE(st.st_mode), st)
        try:
            # the last look before the rename: another program (Obsidian writes in place) may
            # have changed the note while the temporary file was written
            now = read_regular(fd, path, None)
            if content_digest(now) != before or not _same_file(_lstat(folder_fd, name, path), st):
                raise disk.changed_on_disk(path, " (while the new version was being written)")
            os.rename(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except BaseException:
            _discard(folder_fd, tmp)
            raise
        disk.fsync_folder(folder_fd)
    finally:
        os.close(fd)
    return change.touched


def _open_note(folder_fd: int, name: str, path: str) -> int:
    try:
        return os.open(name, disk.FILE_FLAGS, dir_fd=folder_fd)
    except FileNotFoundError:
        raise disk.changed_on_disk(path, " (it was deleted or renamed)") from None
    except OSError as exc:
        if exc.errno in disk.SYMLINK_ERRNOS:
            raise disk.changed_on_disk(path, " (it was replaced by a symlink)") from None
        try:  # a socket cannot be opened (ENXIO): name what took the note's place
            mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise disk.changed_on_disk(path, f" (it was replaced by {kind_of(mode)})") from None
        raise CannotEdit(f"cannot open {path}: {exc.strerror}; nothing was written") from None


def _lstat(folder_fd: int, name: str, path: str) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise disk.changed_on_disk(path, " (it was deleted or renamed)") from None


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and stat.S_ISREG(a.st_mode)


def _temporary(
    folder_fd: int, name: str, data: bytes, path: str, mode: int, like: os.stat_result | None
) -> str:
    """Write `data` to a new temporary file beside `name`, synced to disk; return its name."""
    tmp = disk.temporary_name(name)
    try:
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,  # a new note's 0o666 is cut by the umask, like any new file
            dir_fd=folder_fd,
        )
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if like is not None:
                os.fchmod(fd, mode)  # the umask must not narrow the note's own mode
                _keep_owner(fd, like)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        _discard(folder_fd, tmp)
        raise _write_error(path, exc) from None
    except BaseException:
        _discard(folder_fd, tmp)
        raise
    return tmp


def _keep_owner(fd: int, like: os.stat_result) -> None:
    """Give the new file the old one's owner and group where allowed (root editing a user's
    note must not leave it root's)."""
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) != (like.st_uid, like.st_gid):
        # an ordinary user cannot give a file away: the note becomes theirs, as in editors
        with contextlib.suppress(PermissionError):
            os.fchown(fd, like.st_uid, like.st_gid)


def _discard(folder_fd: int, tmp: str) -> None:
    with contextlib.suppress(OSError):  # else left for clean_temporaries; never a note
        os.unlink(tmp, dir_fd=folder_fd)


def _write_error(path: str, exc: OSError) -> CannotEdit:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return CannotEdit(
            f"cannot write {path}: its folder is read-only ({exc.strerror}); nothing was written"
        )
    return CannotEdit(
        f"cannot write {path}: {exc.strerror or exc}; nothing was written and the note is"
        " unchanged. Free some space or fix the disk, then try again."
    )


def _folder_error(path: str, exc: OSError) -> Exception:
    if exc.errno in disk.SYMLINK_ERRNOS:
        return disk.changed_on_disk(path, " (a folder on its way is now a symlink or a file)")
    return CannotEdit(f"cannot open the folder of {path}: {exc.strerror}; nothing was written")


# --------------------------------------------------------------------------- creating


def _create(root: Path, change: Change) -> None:
    path = change.path
    parts = disk.vault_parts(path)
    name = parts[-1]
    with disk.open_root(root) as root_fd:
        try:
            folder_fd, made = disk.open_folders(root_fd, parts[:-1], create=True)
        except OSError as exc:
            if exc.errno in disk.SYMLINK_ERRNOS:
                raise CannotEdit(
                    f"cannot create {path}: a folder on its way is a symlink or a file;"
                    " vaultmem creates notes only in real folders inside the vault"
                ) from None
            raise _write_error(path, exc) from None
        try:
            try:
                _create_in(folder_fd, name, change)
            except BaseException:
                _remove_folders(root_fd, made)
                raise
            disk.fsync_folder(folder_fd)
            for folder_path in made:  # the new folders' own entries must be durable too
                parent_fd = disk.open_folder(root_fd, tuple(folder_path.split("/")[:-1]))
                try:
                    disk.fsync_folder(parent_fd)
                finally:
                    os.close(parent_fd)
        finally:
            os.close(folder_fd)


def _create_in(folder_fd: int, name: str, change: Change) -> None:
    path = change.path
    if disk.exists(folder_fd, name):
        raise _exists_error(path)
    disk.refuse_read_only_folder(folder_fd, path, "nothing was written")
    tmp = _temporary(folder_fd, name, change.data, path, 0o666, None)
    try:
        # link() fails if the name exists, so a note created meanwhile is never overwritten
        os.link(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    except FileExistsError:
        raise _exists_error(path) from None
    except OSError as exc:
        if exc.errno not in disk.NO_HARD_LINKS:
            raise _write_error(path, exc) from None
        _create_without_links(folder_fd, name, change.data, path)
    finally:
        _discard(folder_fd, tmp)


def _create_without_links(folder_fd: int, name: str, data: bytes, path: str) -> None:
    """An exclusive create written in place: a crash may leave a short note, never clobber one."""
    try:
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o666,
            dir_fd=folder_fd,
        )
    except FileExistsError:
        raise _exists_error(path) from None
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        _discard(folder_fd, name)  # our own half-written new file
        raise _write_error(path, exc) from None
    os.close(fd)


def _exists_error(path: str) -> NoteExists:
    return NoteExists(f"{path} exists already; nothing was written. Choose another name.")


def _remove_folders(root_fd: int, made: list[str]) -> None:
    """Remove the folders a failed create made, deepest first, if they are still empty."""
    for folder_path in reversed(made):
        parent, _, leaf = folder_path.rpartition("/")
        try:
            parent_fd = disk.open_folder(root_fd, tuple(parent.split("/")) if parent else ())
            try:
                os.rmdir(leaf, dir_fd=parent_fd)
            finally:
                os.close(parent_fd)
        except OSError:
            return  # not empty (someone else's file appeared in it) or gone: leave it


# --------------------------------------------------------------------------- temporaries


def is_temporary(name: str) -> bool:
    """Whether a file name is one of vaultmem's temporary files."""
    return _TMP_RE.match(name) is not None


def clean_temporaries(
    root: Path, *, now: dt.datetime | None = None, folder: str | None = None
) -> tuple[str, ...]:
    """Remove vaultmem's own temporary files left by a crash; return their vault paths.

    A temporary is stale when the process that wrote it (its pid is in the name) is gone or it
    is older than an hour; a live writer's file is left alone, and so is any other file. With
    `folder` (a vault path, "" for the top), only that folder is looked at, not below it.
    """
    current = (now or dt.datetime.now(dt.UTC)).timestamp()
    removed: list[str] = []
    if folder is not None:
        parts = disk.vault_parts(folder) if folder else ()
        with disk.open_root(root) as root_fd:
            try:
                folder_fd = disk.open_folder(root_fd, parts)
            except OSError:
                return ()
            try:
                prefix = f"{folder}/" if folder else ""
                _clean_in(folder_fd, os.listdir(folder_fd), prefix, current, removed)
            finally:
                os.close(folder_fd)
        return tuple(sorted(removed))
    top = disk.real_root(root)
    for here, dirs, files, folder_fd in os.fwalk(top, follow_symlinks=False):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = os.path.relpath(here, top).replace(os.sep, "/")
        _clean_in(folder_fd, files, "" if rel == "." else f"{rel}/", current, removed)
    return tuple(sorted(removed))


def _clean_in(
    folder_fd: int, names: list[str], prefix: str, current: float, removed: list[str]
) -> None:
    for name in names:
        m = _TMP_RE.match(name)
        if m is None:
            continue
        try:
            st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue  # its writer renamed or removed it meanwhile
        if not stat.S_ISREG(st.st_mode):
            continue
        pid = int(m["pid"]) if m["pid"] else None
        old = current - st.st_mtime > STALE_AFTER.total_seconds()
        if not old and (pid is None or _alive(pid)):
            continue
        try:
            os.unlink(name, dir_fd=folder_fd)
        except FileNotFoundError:
            continue
        removed.append(prefix + name)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
