"""The trash: notes and attachments moved to `.trash/` (Obsidian's), listed, restored, purged.

A trashed file keeps its vault-relative path below `.trash/`; a name taken there gets Obsidian's
numbering (`Note 1.md`, `Note 2.md`). Obsidian records nothing about its trash, so vaultmem logs
its own moves in `.vaultmem/trash.jsonl` (one JSON object a line: where from, where to, when,
and the file's identity, so a file that merely took the same name later is not mistaken for the
one logged). Files the log does not know (trashed by Obsidian, or the log lost) are listed with
the path they have below `.trash/` as their origin and their ctime (the rename's time) as the
time they were trashed. A missing or corrupt log never blocks anything.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultmem.edit import disk, trash_log
from vaultmem.edit.reading import kind_of
from vaultmem.edit.writing import is_temporary
from vaultmem.errors import CannotEdit, NoteExists, NoteNotFound

TRASH = ".trash"
KEEP = dt.timedelta(days=30)


@dataclass(frozen=True)
class TrashEntry:
    """One file in the trash."""

    path: str  # vault-relative, below `.trash/`
    original: str  # vault-relative path it was moved from (a guess when not `known`)
    trashed_at: dt.datetime  # UTC
    known: bool  # whether vaultmem's log knows it; else origin and time are guessed
    size: int


# --------------------------------------------------------------------------- moving to trash


def move_to_trash(
    root: Path, path: str, expected_digest: str, *, now: dt.datetime | None = None
) -> TrashEntry:
    """Move the note or attachment `path` to `.trash/`, if its content still hashes to
    `expected_digest` (ChangedOnDisk otherwise, and nothing moves).

    A symlink is moved as the link itself (its target, inside the vault, stays where it is).
    """
    parts = disk.vault_parts(path)
    if parts[0].startswith(".") or any(p.startswith(".") for p in parts):
        raise CannotEdit(f"{path} is not a note or attachment (it is in a hidden folder)")
    # the names as on disk where only their Unicode form differs (the index keeps NFC, macOS
    # writes NFD): the move, its log and a restore keep the file's own spelling
    parts = disk.as_on_disk(disk.real_root(root), parts)
    path = "/".join(parts)
    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    with disk.open_root(root) as root_fd:
        try:
            folder_fd = disk.open_folder(root_fd, parts[:-1])
        except FileNotFoundError:
            raise disk.changed_on_disk(path, " (its folder was deleted or renamed)") from None
        except OSError as exc:
            raise _folder_error(path, exc) from None
        try:
            name = parts[-1]
            fd, st = _open_checked(root, folder_fd, name, path, expected_digest)
            try:
                trashed, renamed = _link_into_trash(root_fd, parts, folder_fd, name, st, path)
                try:
                    if not renamed:  # linked: the old name goes now
                        os.unlink(name, dir_fd=folder_fd)
                except FileNotFoundError:
                    pass  # removed meanwhile by another program: the trash holds its last name
                except OSError as exc:
                    failed = _take_back(root_fd, trashed)  # the other link; the file stays
                    if failed is None:
                        raise _move_error(path, exc) from None
                    raise _second_name_left(
                        f"cannot move {path}: {exc.strerror}", path, "/".join(trashed), failed
                    ) from None
            finally:
                os.close(fd)  # releases the note's lock
            disk.fsync_folder(folder_fd)
        finally:
            os.close(folder_fd)
        move = trash_log.Move(
            "/".join(trashed), path, when, st.st_dev, st.st_ino, st.st_size, expected_digest
        )
        trash_log.append_log(root_fd, move)
    return TrashEntry("/".join(trashed), path, when, True, st.st_size)


def _open_checked(
    root: Path, folder_fd: int, name: str, path: str, expected: str
) -> tuple[int, os.stat_result]:
    """The file open and locked (through a symlink: its target) and its own lstat, once its
    content is checked to still hash to `expected`; the caller closes the fd."""
    try:
        st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise disk.changed_on_disk(path, " (it was deleted or renamed)") from None
    if stat.S_ISLNK(st.st_mode):
        disk.resolve(root, path)  # refuses a link leading out of the vault
        flags = disk.FILE_FLAGS & ~os.O_NOFOLLOW
    elif stat.S_ISREG(st.st_mode):
        flags = disk.FILE_FLAGS
    else:
        raise _not_a_file(path, st.st_mode)
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except FileNotFoundError:
        raise disk.changed_on_disk(path, " (it was deleted or renamed)") from None
    except OSError as exc:
        if exc.errno in disk.SYMLINK_ERRNOS:
            raise disk.changed_on_disk(path, " (it was replaced by a symlink)") from None
        raise CannotEdit(f"cannot read {path}: {exc.strerror}; nothing was moved") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CannotEdit(f"{path} does not lead to a file; nothing was moved")
        disk.lock(fd, path)  # a vaultmem write of this note is never half-way meanwhile
        try:
            now = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:  # moved by whoever held the lock before
            raise disk.changed_on_disk(path, " (it was deleted or renamed)") from None
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise disk.changed_on_disk(path, " (it was replaced meanwhile)")
        if _digest(fd) != expected:
            raise disk.changed_on_disk(path)
        if stat.S_ISREG(st.st_mode):
            disk.refuse_read_only_file(folder_fd, name, st, path, "nothing was moved")
        disk.refuse_read_only_folder(folder_fd, path, "nothing was moved")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def current_digest(root: Path, path: str) -> str:
    """The content hash of the file at vault path `path` as it is now (through a symlink inside
    the vault: its target's), for a move that takes the file as it stands."""
    parts = disk.resolve(root, path)
    with disk.open_root(root) as root_fd:
        try:
            folder_fd = disk.open_folder(root_fd, parts[:-1])
            try:
                # never opened unless a regular file: a socket cannot be (ENXIO), a device
                # may act on an open
                st = os.stat(parts[-1], dir_fd=folder_fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                    raise _not_a_file(path, st.st_mode)
                fd = os.open(parts[-1], disk.FILE_FLAGS, dir_fd=folder_fd)
            finally:
                os.close(folder_fd)
        except FileNotFoundError:
            raise disk.missing_note(path) from None
        except OSError as exc:
            raise CannotEdit(f"cannot read {path}: {exc.strerror}; nothing was moved") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_a_file(path, mode)
        return _digest(fd)
    finally:
        os.close(fd)


def _not_a_file(path: str, mode: int) -> CannotEdit:
    """The refusal to trash what is not a regular file, naming what it is."""
    todo = (
        "trash the notes in it one by one"
        if stat.S_ISDIR(mode)
        else "move it out of the vault yourself, then run `vaultmem reindex`"
    )
    return CannotEdit(
        f"{path} is {kind_of(mode)}, not a note or attachment; vaultmem moves only regular"
        f" files, so nothing was moved ({todo})"
    )


def _digest(fd: int) -> str:
    """The content hash the index stores (model.content_digest), read in pieces (attachments
    are big)."""
    h = hashlib.blake2b(digest_size=16)
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


def _link_into_trash(
    root_fd: int,
    parts: tuple[str, ...],
    folder_fd: int,
    name: str,
    st: os.stat_result,
    path: str,
) -> tuple[tuple[str, ...], bool]:
    """Give the file a free name below `.trash/` (never replacing one); return its parts and
    whether it was renamed there (a file system without hard links) rather than linked."""
    folder = (TRASH, *parts[:-1])
    try:
        trash_fd = disk.open_folder(root_fd, folder, create=True)
    except OSError as exc:
        raise CannotEdit(
            f"cannot make {'/'.join(folder)}: {exc.strerror}; nothing was moved"
            + (" (a symlink or file is in the way)" if exc.errno in disk.SYMLINK_ERRNOS else "")
        ) from None
    try:
        for candidate in _free_names(name):
            renamed = False
            try:
                os.link(
                    name, candidate, src_dir_fd=folder_fd, dst_dir_fd=trash_fd,
                    follow_symlinks=False,
                )  # fmt: skip
            except FileExistsError:
                if not _same_inode(trash_fd, candidate, st):
                    continue
                # this file's own name, left by a move cut short (a crash between the link
                # and the unlink): the move goes on from there instead of adding a second one
            except OSError as exc:
                if exc.errno not in disk.NO_HARD_LINKS:
                    raise _move_error(path, exc) from None
                if disk.exists(trash_fd, candidate):
                    continue
                _rename(name, candidate, folder_fd, trash_fd, path)
                renamed = True
            moved = os.stat(candidate, dir_fd=trash_fd, follow_symlinks=False)
            if (moved.st_dev, moved.st_ino) != (st.st_dev, st.st_ino):
                # another program put a file at the name since the check: undo, move nothing
                _undo_move(folder_fd, name, trash_fd, candidate, renamed, path, folder)
                raise disk.changed_on_disk(path, " (it was replaced while being moved)")
            disk.fsync_folder(trash_fd)
            return (*folder, candidate), renamed
        raise AssertionError("unreachable: _free_names never ends")  # pragma: no cover
    finally:
        os.close(trash_fd)


def _same_inode(folder_fd: int, name: str, st: os.stat_result) -> bool:
    try:
        there = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino)


def _free_names(name: str) -> Iterator[str]:
    """`Note.md`, then `Note 1.md`, `Note 2.md`, … (Obsidian's numbering of a taken name)."""
    yield name
    p = PurePosixPath(name)
    stem, suffix = (p.stem, p.suffix) if p.stem else (name, "")
    n = 1
    while True:
        yield f"{stem} {n}{suffix}"
        n += 1


def _rename(name: str, to: str, from_fd: int, to_fd: int, path: str) -> None:
    try:
        os.rename(name, to, src_dir_fd=from_fd, dst_dir_fd=to_fd)
    except OSError as exc:
        raise _move_error(path, exc) from None


def _undo_move(
    folder_fd: int,
    name: str,
    trash_fd: int,
    candidate: str,
    renamed: bool,
    path: str,
    folder: tuple[str, ...],
) -> None:
    """Take back the move of a file found replaced meanwhile; when that fails, CannotEdit
    saying where the file is now and what to run (never "nothing was moved")."""
    entry = "/".join((*folder, candidate))
    replaced = f"{path} was replaced by another program while it was moved to the trash"
    try:
        if renamed:
            os.rename(candidate, name, src_dir_fd=trash_fd, dst_dir_fd=folder_fd)
        else:
            os.unlink(candidate, dir_fd=trash_fd)
    except OSError as exc:
        if not renamed:
            raise _second_name_left(replaced, path, entry, exc) from None
        to = "" if candidate == name else f" --to {shlex.quote(path)}"
        raise CannotEdit(
            f"{replaced}, and putting it back failed ({exc.strerror or exc}): the new version"
            f" is now in the trash at {entry}. Run `vaultmem restore {shlex.quote(entry)}{to}`"
            " to put it back"
        ) from None


def _second_name_left(what: str, path: str, entry: str, exc: OSError) -> CannotEdit:
    """The truth when a hard link made in the trash could not be removed again: the file is
    still at `path`, and also at `entry`."""
    return CannotEdit(
        f"{what}; it stays where it is, but a second name for it is left in the trash at {entry}"
        f" (taking that back failed: {exc.strerror or exc})."
        f" `vaultmem trash purge {shlex.quote(entry)}` deletes that name and keeps {path}"
    )


def _move_error(path: str, exc: OSError) -> CannotEdit:
    return CannotEdit(f"cannot move {path}: {exc.strerror or exc}; nothing was moved")


def _folder_error(path: str, exc: OSError) -> Exception:
    if exc.errno in disk.SYMLINK_ERRNOS:
        return disk.changed_on_disk(path, " (a folder on its way is now a symlink or a file)")
    return CannotEdit(f"cannot open the folder of {path}: {exc.strerror}")


def _take_back(root_fd: int, parts: tuple[str, ...]) -> OSError | None:
    """Remove the name `parts` made in the trash; the error when that fails."""
    try:
        fd = disk.open_folder(root_fd, parts[:-1])
        try:
            os.unlink(parts[-1], dir_fd=fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    return None


# --------------------------------------------------------------------------- listing


def list_trash(root: Path) -> tuple[TrashEntry, ...]:
    """Every file in `.trash/`, most recently trashed first."""
    top = disk.real_root(root)
    trash = os.path.join(top, TRASH)
    try:
        if not stat.S_ISDIR(os.lstat(trash).st_mode):
            return ()
    except FileNotFoundError:
        return ()
    known = trash_log.read_log(root)
    entries = []
    for folder, _dirs, files, folder_fd in os.fwalk(trash, follow_symlinks=False):
        prefix = os.path.relpath(folder, top).replace(os.sep, "/")
        for name in files:
            if is_temporary(name):
                continue
            try:
                st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            entries.append(_entry(f"{prefix}/{name}", st, known))
    return tuple(sorted(entries, key=lambda e: (-e.trashed_at.timestamp(), e.path)))


def _entry(path: str, st: os.stat_result, known: dict[str, trash_log.Move]) -> TrashEntry:
    move = known.get(path)
    if move is not None and move.describes(st) and _restorable(move.original):
        return TrashEntry(path, move.original, move.at, True, st.st_size)
    when = dt.datetime.fromtimestamp(st.st_ctime, dt.UTC)
    return TrashEntry(path, path.removeprefix(TRASH + "/"), when, False, st.st_size)


def _restorable(path: str) -> bool:
    try:
        parts = disk.vault_parts(path)
    except CannotEdit:
        return False
    return not any(p.startswith(".") for p in parts)


def _trash_entry(root: Path, path: str) -> TrashEntry:
    """The entry at `path` (`.trash/…`, or a path below the trash), or NoteNotFound."""
    if not path.startswith(TRASH + "/"):
        path = f"{TRASH}/{path}"
    parts = disk.as_on_disk(disk.real_root(root), disk.vault_parts(path))
    path = "/".join(parts)
    missing = NoteNotFound(f"{path} is not in the trash; `vaultmem trash list` shows what is")
    with disk.open_root(root) as root_fd:
        try:
            fd = disk.open_folder(root_fd, parts[:-1])
        except OSError:
            raise missing from None
        try:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            raise missing from None
        finally:
            os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise CannotEdit(f"{path} is a folder; name the files in it")
    return _entry(path, st, trash_log.read_log(root))


# --------------------------------------------------------------------------- restoring


def restore(root: Path, path: str, *, to: str | None = None) -> str:
    """Move trashed file `path` back to where it came from (or to `to`); return that path.

    Refuses (NoteExists) to overwrite anything, and makes the folders it needs.
    """
    entry = _trash_entry(root, path)
    dest = to if to is not None else entry.original
    dest_parts = disk.vault_parts(dest)
    if not _restorable(dest):
        raise CannotEdit(f"{dest}: restore a file to a folder that is not hidden")
    src = tuple(entry.path.split("/"))
    with disk.open_root(root) as root_fd:
        try:
            src_fd = disk.open_folder(root_fd, src[:-1])
        except OSError:
            raise NoteNotFound(f"{entry.path} is not in the trash any more") from None
        try:
            try:
                dest_fd = disk.open_folder(root_fd, dest_parts[:-1], create=True)
            except OSError as exc:
                raise CannotEdit(
                    f"cannot make the folder of {dest}: {exc.strerror}; nothing was restored"
                ) from None
            try:
                _move_exclusive(src_fd, src[-1], dest_fd, dest_parts[-1], dest)
                disk.fsync_folder(dest_fd)
                disk.fsync_folder(src_fd)
            finally:
                os.close(dest_fd)
        finally:
            os.close(src_fd)
        _remove_empty_folders(root_fd, src[:-1])
    return dest


def _move_exclusive(src_fd: int, name: str, dest_fd: int, dest_name: str, dest: str) -> None:
    taken = NoteExists(
        f"{dest} exists already; nothing was restored. Move that file away first, or restore"
        " to another path."
    )
    try:
        os.link(name, dest_name, src_dir_fd=src_fd, dst_dir_fd=dest_fd, follow_symlinks=False)
    except FileExistsError:
        raise taken from None
    except OSError as exc:
        if exc.errno not in disk.NO_HARD_LINKS:
            raise CannotEdit(
                f"cannot restore {dest}: {exc.strerror}; nothing was restored"
            ) from None
        if disk.exists(dest_fd, dest_name):
            raise taken from None
        os.rename(name, dest_name, src_dir_fd=src_fd, dst_dir_fd=dest_fd)
        return
    try:
        os.unlink(name, dir_fd=src_fd)
    except FileNotFoundError:
        pass  # purged meanwhile: the restored name is the file's last one, so it stays
    except OSError as exc:
        os.unlink(dest_name, dir_fd=dest_fd)
        raise CannotEdit(f"cannot restore {dest}: {exc.strerror}; nothing was restored") from None


# --------------------------------------------------------------------------- purging


def purge(
    root: Path,
    *,
    older_than: dt.timedelta = KEEP,
    paths: tuple[str, ...] | None = None,
    now: dt.datetime | None = None,
) -> tuple[TrashEntry, ...]:
    """Delete for good the named trash entries, or else every one trashed longer ago than
    `older_than` (30 days by default); return what was deleted."""
    if paths is not None:
        chosen = [_trash_entry(root, p) for p in paths]
    else:
        cutoff = (now or dt.datetime.now(dt.UTC)) - older_than
        chosen = [e for e in list_trash(root) if e.trashed_at <= cutoff]
    purged = []
    with disk.open_root(root) as root_fd:
        for entry in chosen:
            parts = tuple(entry.path.split("/"))
            try:
                fd = disk.open_folder(root_fd, parts[:-1])
            except OSError:
                continue
            try:
                os.unlink(parts[-1], dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise CannotEdit(f"cannot delete {entry.path}: {exc.strerror}") from None
            finally:
                os.close(fd)
            purged.append(entry)
            _remove_empty_folders(root_fd, parts[:-1])
        if purged:
            trash_log.compact_log(root, root_fd)
    return tuple(purged)


def _remove_empty_folders(root_fd: int, folder: tuple[str, ...]) -> None:
    """Remove `folder` and the folders above it that are now empty, never `.trash` itself."""
    while len(folder) > 1:
        try:
            fd = disk.open_folder(root_fd, folder[:-1])
        except OSError:
            return
        try:
            os.rmdir(folder[-1], dir_fd=fd)
        except OSError:
            return  # not empty
        finally:
            os.close(fd)
        folder = folder[:-1]
