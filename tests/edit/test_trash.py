"""The trash: moves keep the relative path and never replace anything; the log may be lost."""

from __future__ import annotations

import datetime as dt
import errno
import json
import logging
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    REAL_LINK,
    REAL_RENAME,
    REAL_UNLINK,
    SAMPLE_VAULT,
    SHARED_DATA,
    failing,
    fd_path,
    linked_after,
    refusing,
    renamed_once,
)
from tests.edit.conftest import (
    READY_THEN_GO,
    child,
    lock_held,
    locked_then,
    release_once_waited_for,
    snapshot,
    wait_for,
)
from vaultmem import edit
from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteExists, NoteNotFound
from vaultmem.model import content_digest as digest

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
LOG = (".vaultmem", "trash.jsonl")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Maya.md").write_bytes(b"# Maya\r\n")
    (root / "photo.png").write_bytes(b"\x89PNG not really")
    return root


def trash(root: Path, path: str, when: dt.datetime = NOW) -> edit.TrashEntry:
    return edit.move_to_trash(root, path, digest((root / path).read_bytes()), now=when)


def test_a_note_moves_to_trash_keeping_its_path(vault: Path) -> None:
    st = (vault / "people" / "Maya.md").stat()
    entry = trash(vault, "people/Maya.md")
    assert entry == edit.TrashEntry(".trash/people/Maya.md", "people/Maya.md", NOW, True, 8)
    assert not (vault / "people" / "Maya.md").exists()
    moved = vault / ".trash" / "people" / "Maya.md"
    assert moved.read_bytes() == b"# Maya\r\n" and moved.stat().st_ino == st.st_ino
    assert edit.list_trash(vault) == (entry,)
    record = json.loads((vault.joinpath(*LOG)).read_text())
    assert record["trashed"] == ".trash/people/Maya.md" and record["from"] == "people/Maya.md"


def test_a_taken_name_in_the_trash_gets_obsidians_numbering(vault: Path) -> None:
    names = []
    for n in range(3):
        (vault / "people" / "Maya.md").write_bytes(f"version {n}\n".encode())
        names.append(trash(vault, "people/Maya.md", NOW + dt.timedelta(minutes=n)).path)
        (vault / "README").write_bytes(f"{n}".encode())
        names.append(trash(vault, "README").path)
    assert names == [
        ".trash/people/Maya.md",
        ".trash/README",
        ".trash/people/Maya 1.md",
        ".trash/README 1",
        ".trash/people/Maya 2.md",
        ".trash/README 2",
    ]
    assert (vault / ".trash" / "people" / "Maya 1.md").read_bytes() == b"version 1\n"
    listed = {e.path: e.original for e in edit.list_trash(vault)}
    assert listed[".trash/people/Maya 2.md"] == "people/Maya.md"
    assert listed[".trash/README 1"] == "README"


def test_trashing_takes_the_digest_precondition(vault: Path) -> None:
    with pytest.raises(ChangedOnDisk, match="changed on disk since it was read"):
        edit.move_to_trash(vault, "people/Maya.md", digest(b"an older version\n"))
    assert (vault / "people" / "Maya.md").exists() and not (vault / ".trash").exists()
    held = digest(b"# Maya\r\n")
    (vault / "people" / "Maya.md").unlink()
    with pytest.raises(ChangedOnDisk, match="deleted or renamed"):
        edit.move_to_trash(vault, "people/Maya.md", held)


def test_an_attachment_moves_too(vault: Path) -> None:
    assert trash(vault, "photo.png").path == ".trash/photo.png"


def test_a_symlink_is_trashed_as_the_link_and_its_target_stays(vault: Path) -> None:
    (vault / "Maya.md").symlink_to("people/Maya.md")
    entry = trash(vault, "Maya.md")
    assert (vault / entry.path).is_symlink()
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"
    assert edit.restore(vault, entry.path) == "Maya.md"
    assert os.readlink(vault / "Maya.md") == "people/Maya.md"


def test_a_symlink_out_of_the_vault_is_refused(vault: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_bytes(b"secret")
    (vault / "out.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(CannotEdit, match="leads outside the vault"):
        edit.move_to_trash(vault, "out.md", digest(b"secret"))
    assert (vault / "out.md").is_symlink()


def test_a_trash_folder_that_is_a_symlink_is_refused(vault: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (vault / ".trash").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CannotEdit, match="a symlink or file is in the way"):
        trash(vault, "people/Maya.md")
    assert (vault / "people" / "Maya.md").exists()
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_read_only_files_and_folders_are_not_trashed(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    note.chmod(0o444)
    with pytest.raises(CannotEdit, match=r"is read-only \(mode 0444\); nothing was moved"):
        trash(vault, "people/Maya.md")
    note.chmod(0o644)
    (vault / "people").chmod(0o555)
    try:
        with pytest.raises(CannotEdit, match=r"the folder of people/Maya\.md is read-only"):
            trash(vault, "people/Maya.md")
    finally:
        (vault / "people").chmod(0o755)
    assert note.exists() and not (vault / ".trash").exists()


@pytest.mark.parametrize("path", [".obsidian/app.json", ".trash/x.md", "a/.hidden.md"])
def test_hidden_files_are_not_notes_to_trash(vault: Path, path: str) -> None:
    with pytest.raises(CannotEdit, match="hidden folder"):
        edit.move_to_trash(vault, path, "0" * 32)


def test_restore_puts_it_back_recreating_folders(vault: Path) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / "people").rmdir()
    assert edit.restore(vault, entry.path) == "people/Maya.md"
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"
    assert edit.list_trash(vault) == ()
    assert list((vault / ".trash").iterdir()) == []  # emptied folders go, the trash stays


def test_restore_never_overwrites(vault: Path) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / "people" / "Maya.md").write_bytes(b"a new Maya\n")
    with pytest.raises(NoteExists, match=r"people/Maya\.md exists already; nothing was restored"):
        edit.restore(vault, entry.path)
    assert (vault / "people" / "Maya.md").read_bytes() == b"a new Maya\n"
    assert (vault / entry.path).read_bytes() == b"# Maya\r\n"
    assert edit.restore(vault, "people/Maya.md", to="people/Maya (old).md") == (
        "people/Maya (old).md"
    )
    assert (vault / "people" / "Maya (old).md").read_bytes() == b"# Maya\r\n"


def test_restore_of_something_not_in_the_trash(vault: Path) -> None:
    with pytest.raises(NoteNotFound, match="is not in the trash"):
        edit.restore(vault, ".trash/nothing.md")
    trash(vault, "people/Maya.md")
    for bad in ("../../etc/passwd", ".trash/people/Maya.md/x"):
        with pytest.raises((CannotEdit, NoteNotFound)):
            edit.restore(vault, bad)
    with pytest.raises(CannotEdit, match="not hidden"):
        edit.restore(vault, ".trash/people/Maya.md", to=".obsidian/x.md")


def test_files_obsidian_trashed_are_listed_with_guesses(vault: Path) -> None:
    (vault / ".trash" / "old").mkdir(parents=True)
    (vault / ".trash" / "old" / "Draft.md").write_bytes(b"draft")
    (entry,) = edit.list_trash(vault)
    assert (entry.path, entry.original, entry.known, entry.size) == (
        ".trash/old/Draft.md",
        "old/Draft.md",
        False,
        5,
    )
    ctime = (vault / ".trash" / "old" / "Draft.md").stat().st_ctime
    assert entry.trashed_at == dt.datetime.fromtimestamp(ctime, dt.UTC)
    assert edit.restore(vault, entry.path) == "old/Draft.md"


def test_a_corrupt_or_missing_log_never_blocks(vault: Path) -> None:
    entry = trash(vault, "people/Maya.md")
    log = vault.joinpath(*LOG)
    good = log.read_text()
    log.write_text(
        "not json\n[1, 2]\n"
        + json.dumps({"trashed": ".trash/people/Maya.md", "from": 3, "at": "x"})
        + "\n"
        + '{"trashed": ".trash/people/Maya.md", "from": "../../etc", "at": "2026-01-01T00:00:00+00:00", "dev": 1, "ino": 1, "size": 1}\n'  # noqa: E501
        + "\x00\xff garbage\n"
        + good
        + '{"unfinished": \n'
    )
    assert edit.list_trash(vault) == (entry,)  # the good record still counts
    log.unlink()
    log.mkdir()  # not even a file
    (listed,) = edit.list_trash(vault)
    assert (listed.original, listed.known) == ("people/Maya.md", False)
    assert edit.restore(vault, listed.path) == "people/Maya.md"


def test_a_record_of_another_file_with_the_same_name_is_not_trusted(vault: Path) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / entry.path).unlink()
    (vault / entry.path).write_bytes(b"Obsidian trashed a different file to this name")
    (listed,) = edit.list_trash(vault)
    assert listed.known is False


def test_an_unwritable_log_is_only_a_warning(vault: Path, caplog: pytest.LogCaptureFixture) -> None:
    (vault / ".vaultmem").write_bytes(b"a file where the folder should be")
    with caplog.at_level(logging.WARNING):
        entry = trash(vault, "people/Maya.md")
    assert entry.known and (vault / entry.path).exists()
    assert "could not record the move" in caplog.text


def test_purge_deletes_entries_older_than_30_days(vault: Path) -> None:
    old = trash(vault, "people/Maya.md", NOW - dt.timedelta(days=31))
    recent = trash(vault, "photo.png", NOW - dt.timedelta(days=29))
    assert edit.purge(vault, now=NOW) == (old,)
    assert not (vault / old.path).exists() and (vault / recent.path).exists()
    assert not (vault / ".trash" / "people").exists()  # its emptied folder too
    assert edit.purge(vault, older_than=dt.timedelta(days=1), now=NOW) == (recent,)
    assert edit.list_trash(vault) == ()
    assert (vault / ".trash").is_dir()
    assert vault.joinpath(*LOG).read_text() == ""  # records of purged files dropped


def test_purge_named_entries(vault: Path) -> None:
    a = trash(vault, "people/Maya.md")
    b = trash(vault, "photo.png")
    assert edit.purge(vault, paths=("people/Maya.md",)) == (a,)
    assert edit.list_trash(vault) == (b,)
    with pytest.raises(NoteNotFound, match="is not in the trash"):
        edit.purge(vault, paths=(".trash/people/Maya.md",))
    with pytest.raises(CannotEdit, match="not a path inside the vault"):
        edit.purge(vault, paths=("../outside.md",))
    assert (vault / b.path).exists()
    records = vault.joinpath(*LOG).read_text().splitlines()
    assert [json.loads(r)["trashed"] for r in records] == [".trash/photo.png"]


def round_trip(root: Path) -> None:
    """Trash every note and attachment, then restore each: the vault must not change."""
    files = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if (p.is_file() or p.is_symlink())
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    before = snapshot(root)
    for path in files:
        trash(root, path)
    assert {e.original for e in edit.list_trash(root)} == set(files)
    for entry in edit.list_trash(root):
        edit.restore(root, entry.path)
    after = snapshot(root)
    ignore = (".trash", ".vaultmem")
    same = {k: v for k, v in after.items() if not k.startswith(ignore)}
    assert same == {k: v for k, v in before.items() if not k.startswith(ignore)}
    assert list((root / ".trash").iterdir()) == []


def test_the_sample_vault_round_trips_through_the_trash(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE_VAULT, root, symlinks=True, ignore=shutil.ignore_patterns(".vaultmem"))
    round_trip(root)


def test_the_kepano_vault_round_trips_through_the_trash(tmp_path: Path) -> None:
    source = SHARED_DATA / "vaults" / "kepano-obsidian"
    if not source.is_dir():
        pytest.skip(f"shared data missing: {source}")
    root = tmp_path / "kepano"
    shutil.copytree(source, root, symlinks=True)
    for path in [root, *root.rglob("*")]:  # the shared copy is read-only; a vault is not
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    round_trip(root)


def test_a_file_system_without_hard_links(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FAT and some network shares refuse link(): moves fall back to a checked rename and new
    notes to an exclusive create; nothing is lost or overwritten either way."""
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    (vault / ".trash" / "people").mkdir(parents=True)
    (vault / ".trash" / "people" / "Maya.md").write_bytes(b"trashed before")
    entry = trash(vault, "people/Maya.md")
    assert entry.path == ".trash/people/Maya 1.md"
    assert not (vault / "people" / "Maya.md").exists()
    assert (vault / entry.path).read_bytes() == b"# Maya\r\n"
    assert (vault / ".trash" / "people" / "Maya.md").read_bytes() == b"trashed before"
    (vault / "people" / "Maya.md").write_bytes(b"new")
    with pytest.raises(NoteExists):
        edit.restore(vault, entry.path)
    assert edit.restore(vault, entry.path, to="people/Maya old.md") == "people/Maya old.md"
    assert (vault / "people" / "Maya old.md").read_bytes() == b"# Maya\r\n"
    edit.write(vault, edit.plan_new_note("people/New.md", "# New\n"))
    assert (vault / "people" / "New.md").read_bytes() == b"# New\n"
    with pytest.raises(NoteExists):
        edit.write(vault, edit.plan_new_note("people/New.md", "# Other\n"))
    assert sorted(p.name for p in (vault / "people").iterdir()) == [
        "Maya old.md",
        "Maya.md",
        "New.md",
    ]


TRASH_RACE = (
    textwrap.dedent(
        """
    import sys, time
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.model import content_digest as digest
    from vaultmem.errors import ChangedOnDisk
    root, go, ready = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    held = digest((root / "people/Maya.md").read_bytes())
    """
    )
    + READY_THEN_GO
    + textwrap.dedent(
        """
    try:
        edit.move_to_trash(root, "people/Maya.md", held)
    except ChangedOnDisk:
        sys.exit(6)
    """
    )
)


def test_two_processes_trashing_one_note_move_it_once(vault: Path) -> None:
    for round_ in range(5):
        (vault / "people" / "Maya.md").write_bytes(b"# Maya\r\n")
        go = vault.parent / f"go-{round_}"
        ready = [vault.parent / f"ready-{round_}-{n}" for n in (1, 2)]
        procs = [child(TRASH_RACE, str(vault), str(go), str(r)) for r in ready]
        wait_for(lambda r=ready: all(f.exists() for f in r), "both to have read the note")
        go.touch()
        codes = sorted(p.wait(timeout=120) for p in procs)
        assert codes == [0, 6], [p.communicate()[1] for p in procs]
        assert not (vault / "people" / "Maya.md").exists()
        assert len(edit.list_trash(vault)) == round_ + 1


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/edit/trash.py and trash_log.py that the tests above
# let through (docs/TESTING.md, "note editor: the rest"): whole messages, each step a disk or
# another program can fail, and what a failed step leaves behind.


def _changed(path: str, how: str = "") -> str:
    return (
        f"{path} changed on disk since it was read; nothing was written{how}. Read the note"
        " again (run `vaultmem reindex` if the index is behind) and redo the change on its"
        " current text."
    )


def _message(error: type[Exception], call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(error) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return str(caught.value)


def test_refusals_to_trash_say_why_whole(vault: Path, tmp_path: Path) -> None:
    held = digest(b"# Maya\r\n")
    move = edit.move_to_trash
    assert _message(ChangedOnDisk, move, vault, "people/Maya.md", digest(b"old")) == _changed(
        "people/Maya.md"
    )
    note = vault / "people" / "Maya.md"
    note.chmod(0o444)
    assert _message(CannotEdit, move, vault, "people/Maya.md", held) == (
        "people/Maya.md is read-only (mode 0444); nothing was moved. Make it writable yourself"
        " if you want vaultmem to change it."
    )
    note.chmod(0o644)
    (vault / "people").chmod(0o555)
    try:
        assert _message(CannotEdit, move, vault, "people/Maya.md", held) == (
            "the folder of people/Maya.md is read-only (mode 0555); nothing was moved. Make it"
            " writable yourself if you want vaultmem to change files in it."
        )
    finally:
        (vault / "people").chmod(0o755)
    (vault / "folder.md").mkdir()
    assert _message(CannotEdit, move, vault, "folder.md", held) == (
        "folder.md is a folder, not a note or attachment; vaultmem moves only regular files, so"
        " nothing was moved (trash the notes in it one by one)"
    )
    (vault / "to-folder.md").symlink_to("people")
    assert _message(CannotEdit, move, vault, "to-folder.md", held) == (
        "to-folder.md does not lead to a file; nothing was moved"
    )
    (vault / "people").rename(vault / "was")
    assert _message(ChangedOnDisk, move, vault, "people/Maya.md", held) == _changed(
        "people/Maya.md", " (its folder was deleted or renamed)"
    )
    (vault / "people").symlink_to(tmp_path)
    assert _message(ChangedOnDisk, move, vault, "people/Maya.md", held) == _changed(
        "people/Maya.md", " (a folder on its way is now a symlink or a file)"
    )
    assert _message(ChangedOnDisk, move, vault, "was/gone.md", held) == _changed(
        "was/gone.md", " (it was deleted or renamed)"
    )
    assert not (vault / ".trash").exists()


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (errno.ENOENT, _changed("people/Maya.md", " (it was deleted or renamed)")),
        (errno.ELOOP, _changed("people/Maya.md", " (it was replaced by a symlink)")),
        (errno.EACCES, "cannot read people/Maya.md: Permission denied; nothing was moved"),
    ],
)
def test_a_note_that_cannot_be_opened_to_trash(
    vault: Path, monkeypatch: pytest.MonkeyPatch, error: int, message: str
) -> None:
    """Deleted, or swapped for a symlink, between its look and its opening; or unreadable."""
    monkeypatch.setattr(os, "open", refusing("open", error, names=("Maya.md",)))
    kind = ChangedOnDisk if error != errno.EACCES else CannotEdit
    assert _message(kind, trash, vault, "people/Maya.md") == message
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").exists() and not (vault / ".trash").exists()


def test_a_folder_that_cannot_be_opened_to_trash_from(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    monkeypatch.setattr(disk, "open_folder", failing(errno.EACCES))
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot open the folder of people/Maya.md: Permission denied"
    )


@pytest.mark.parametrize("what", ["deleted", "replaced"])
def test_a_note_moved_or_replaced_by_whoever_held_its_lock(
    vault: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    from vaultmem.edit import disk

    note = vault / "people" / "Maya.md"

    def the_holder_acts() -> None:
        if what == "deleted":
            note.unlink()
        else:  # the same bytes saved by rename: another file all the same
            (vault / "people" / "new").write_bytes(note.read_bytes())
            (vault / "people" / "new").rename(note)

    monkeypatch.setattr(disk, "lock", locked_then(the_holder_acts))
    how = " (it was deleted or renamed)" if what == "deleted" else " (it was replaced meanwhile)"
    assert _message(ChangedOnDisk, trash, vault, "people/Maya.md") == _changed(
        "people/Maya.md", how
    )
    assert not (vault / ".trash").exists()


def test_a_note_locked_by_another_vaultmem_process_is_waited_for_then_refused(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    note = vault / "people" / "Maya.md"
    with lock_held(note) as holder:
        monkeypatch.setattr(disk, "LOCK_WAIT_S", 0.2)
        assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
            "people/Maya.md is being changed by another vaultmem process; nothing was written."
            " Try again in a moment."
        )
        assert note.exists() and not (vault / ".trash").exists()
        released = release_once_waited_for(monkeypatch, holder)
        entry = trash(vault, "people/Maya.md")  # waits for the lock, then moves
        assert released()  # it waited
    assert entry.path == ".trash/people/Maya.md" and not note.exists()


def test_a_trash_folder_that_cannot_be_made_says_why(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from vaultmem.edit import disk

    real = disk.open_folder

    def denied(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> int:
        if create:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(root_fd, parts, create=create)

    monkeypatch.setattr(disk, "open_folder", denied)
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot make .trash/people: Permission denied; nothing was moved"
    )
    monkeypatch.undo()
    (vault / ".trash").symlink_to(tmp_path)
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot make .trash/people: Not a directory; nothing was moved"
        " (a symlink or file is in the way)"
    )


def test_a_link_or_rename_into_the_trash_the_disk_refuses(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "link", failing(errno.EIO))
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot move people/Maya.md: Input/output error; nothing was moved"
    )
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    monkeypatch.setattr(os, "rename", failing("the share gave no reason"))
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot move people/Maya.md: the share gave no reason; nothing was moved"
    )
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"
    assert edit.list_trash(vault) == ()


@pytest.mark.parametrize("links", [True, False])
def test_a_note_replaced_while_it_is_moved_stays_where_it_is(
    vault: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """Saved by rename (as Obsidian does) after the check and before the move: the new
    version is taken back out of the trash, whether it was linked or renamed there."""
    note = vault / "people" / "Maya.md"

    def save_by_rename() -> None:
        (vault / "people" / "new").write_bytes(b"# Maya, saved meanwhile\n")
        REAL_RENAME(vault / "people" / "new", note)

    monkeypatch.setattr(os, "link", linked_after(save_by_rename, links=links))
    assert _message(ChangedOnDisk, trash, vault, "people/Maya.md") == _changed(
        "people/Maya.md", " (it was replaced while being moved)"
    )
    monkeypatch.undo()
    assert note.read_bytes() == b"# Maya, saved meanwhile\n"
    assert edit.list_trash(vault) == ()


def test_an_old_name_that_cannot_be_removed_takes_the_move_back(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = [str(vault / "people")]

    def unlink(name: str, *, dir_fd: int | None = None) -> None:
        if dir_fd is not None and fd_path(dir_fd) in refused:
            raise PermissionError(errno.EPERM, "Operation not permitted")
        REAL_UNLINK(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", unlink)
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot move people/Maya.md: Operation not permitted; nothing was moved"
    )
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"
    assert edit.list_trash(vault) == ()  # the link in the trash taken back
    refused.append(str(vault / ".trash" / "people"))  # when even that fails, the message says so
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "cannot move people/Maya.md: Operation not permitted; it stays where it is, but a second"
        " name for it is left in the trash at .trash/people/Maya.md (taking that back failed:"
        " Operation not permitted). `vaultmem trash purge .trash/people/Maya.md` deletes that"
        " name and keeps people/Maya.md"
    )
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").samefile(vault / ".trash" / "people" / "Maya.md")
    assert [e.path for e in edit.purge(vault, paths=(".trash/people/Maya.md",))] == [
        ".trash/people/Maya.md"
    ]  # what the message says to run: the note stays
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"


def _saved_meanwhile(vault: Path) -> None:
    """Another program saves the note by rename (as Obsidian does)."""
    (vault / "people" / "new").write_bytes(b"# Maya, saved meanwhile\n")
    REAL_RENAME(vault / "people" / "new", vault / "people" / "Maya.md")


@pytest.mark.parametrize("taken", [False, True])
def test_a_replaced_note_that_cannot_be_put_back_says_where_it_is_and_how_to_restore(
    vault: Path, monkeypatch: pytest.MonkeyPatch, taken: bool
) -> None:
    """No hard links: the note is renamed into the trash, turns out to be a version saved
    meanwhile, and renaming it back fails: it is in the trash, and the message says so."""
    if taken:  # the trash name is taken: the note goes to `Maya 1.md`, restored with --to
        (vault / ".trash" / "people").mkdir(parents=True)
        (vault / ".trash" / "people" / "Maya.md").write_bytes(b"trashed before")
    entry = ".trash/people/Maya 1.md" if taken else ".trash/people/Maya.md"
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    # into the trash, the note saved meanwhile; and back, which the disk refuses (EIO)
    monkeypatch.setattr(os, "rename", renamed_once(lambda: _saved_meanwhile(vault)))
    restore = (
        "vaultmem restore '.trash/people/Maya 1.md' --to people/Maya.md"
        if taken
        else "vaultmem restore .trash/people/Maya.md"
    )
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "people/Maya.md was replaced by another program while it was moved to the trash, and"
        " putting it back failed (Input/output error): the new version is now in the trash at"
        f" {entry}. Run `{restore}` to put it back"
    )
    monkeypatch.undo()
    assert not (vault / "people" / "Maya.md").exists()
    assert (vault / entry).read_bytes() == b"# Maya, saved meanwhile\n"
    assert edit.restore(vault, entry, to="people/Maya.md" if taken else None) == "people/Maya.md"
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya, saved meanwhile\n"


def test_a_replaced_note_whose_trash_name_cannot_be_taken_back_says_so(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linked into the trash, found to be a version saved meanwhile, and the link in the trash
    cannot be removed: the note stays, with a second name in the trash."""
    monkeypatch.setattr(os, "link", linked_after(lambda: _saved_meanwhile(vault)))
    monkeypatch.setattr(os, "unlink", failing(errno.EPERM))
    assert _message(CannotEdit, trash, vault, "people/Maya.md") == (
        "people/Maya.md was replaced by another program while it was moved to the trash; it"
        " stays where it is, but a second name for it is left in the trash at"
        " .trash/people/Maya.md (taking that back failed: Operation not permitted)."
        " `vaultmem trash purge .trash/people/Maya.md` deletes that name and keeps"
        " people/Maya.md"
    )
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya, saved meanwhile\n"
    assert (vault / "people" / "Maya.md").samefile(vault / ".trash" / "people" / "Maya.md")


def test_the_time_of_a_move_is_utc_whatever_the_zone(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        here = dt.timezone(dt.timedelta(hours=5, minutes=30))
        entry = trash(vault, "people/Maya.md", dt.datetime(2026, 11, 30, 17, 30, tzinfo=here))
        assert entry.trashed_at == NOW and entry.trashed_at.utcoffset() == dt.timedelta(0)
        record = json.loads(vault.joinpath(*LOG).read_text())
        assert record["at"] == "2026-11-30T12:00:00+00:00"
        (listed,) = edit.list_trash(vault)
        assert listed.trashed_at == NOW and listed.trashed_at.utcoffset() == dt.timedelta(0)
        before = dt.datetime.now(dt.UTC)
        unstamped = edit.move_to_trash(vault, "photo.png", digest(b"\x89PNG not really"))
        assert before <= unstamped.trashed_at <= dt.datetime.now(dt.UTC)
        assert edit.purge(vault) == ()  # now, by default: nothing is 30 days old
    finally:
        monkeypatch.undo()
        time.tzset()


def test_restore_refusals_say_why_whole(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / "people" / "Maya.md").write_bytes(b"new\n")
    assert _message(NoteExists, edit.restore, vault, entry.path) == (
        "people/Maya.md exists already; nothing was restored. Move that file away first, or"
        " restore to another path."
    )
    assert _message(CannotEdit, edit.restore, vault, ".trash/people") == (
        ".trash/people is a folder; name the files in it"
    )
    (vault / "ro").mkdir()
    (vault / "ro").chmod(0o555)
    try:
        assert _message(CannotEdit, edit.restore, vault, entry.path, to="ro/new/x.md") == (
            "cannot make the folder of ro/new/x.md: read-only folder; nothing was restored"
        )
    finally:
        (vault / "ro").chmod(0o755)

    monkeypatch.setattr(os, "link", failing(errno.EIO))
    assert _message(CannotEdit, edit.restore, vault, entry.path, to="x.md") == (
        "cannot restore x.md: Input/output error; nothing was restored"
    )
    monkeypatch.undo()
    monkeypatch.setattr(os, "unlink", refusing("unlink", errno.EPERM, names=("Maya.md",)))
    assert _message(CannotEdit, edit.restore, vault, entry.path, to="x.md") == (
        "cannot restore x.md: Operation not permitted; nothing was restored"
    )
    monkeypatch.undo()
    assert not (vault / "x.md").exists() and (vault / entry.path).read_bytes() == b"# Maya\r\n"
    assert not (vault / "ro" / "new").exists()


def test_a_trash_entry_gone_between_its_look_and_its_restore(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    entry = trash(vault, "people/Maya.md")
    real = disk.open_folder
    opened: list[tuple[str, ...]] = []

    def gone_the_second_time(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> int:
        opened.append(parts)
        if opened.count((".trash", "people")) == 2:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        return real(root_fd, parts, create=create)

    monkeypatch.setattr(disk, "open_folder", gone_the_second_time)
    assert _message(NoteNotFound, edit.restore, vault, entry.path) == (
        ".trash/people/Maya.md is not in the trash any more"
    )


def test_restore_without_hard_links_never_replaces_a_file(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / "people" / "Maya.md").write_bytes(b"new\n")
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    assert _message(NoteExists, edit.restore, vault, entry.path).startswith(
        "people/Maya.md exists already; nothing was restored."
    )
    assert edit.restore(vault, entry.path, to="people/Old.md") == "people/Old.md"
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == b"new\n"
    assert (vault / "people" / "Old.md").read_bytes() == b"# Maya\r\n"


def test_purge_takes_an_entry_exactly_as_old_as_the_limit(vault: Path) -> None:
    exactly = trash(vault, "people/Maya.md", NOW - dt.timedelta(days=30))
    trash(vault, "photo.png", NOW - dt.timedelta(days=30) + dt.timedelta(seconds=1))
    assert edit.purge(vault, now=NOW) == (exactly,)


def test_purge_goes_on_past_entries_gone_meanwhile(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import trash as trash_module

    (vault / "a").mkdir()
    (vault / "a" / "x.md").write_bytes(b"x")
    (vault / "b.md").write_bytes(b"b")
    last = trash(vault, "photo.png", NOW - dt.timedelta(days=40))
    trash(vault, "b.md", NOW - dt.timedelta(days=33))  # its file goes meanwhile
    trash(vault, "a/x.md", NOW - dt.timedelta(days=32))  # its folder goes meanwhile
    real = trash_module.list_trash

    def listed_then_gone(root: Path) -> tuple[edit.TrashEntry, ...]:
        entries = real(root)
        shutil.rmtree(vault / ".trash" / "a")
        (vault / ".trash" / "b.md").unlink()
        return entries

    monkeypatch.setattr(trash_module, "list_trash", listed_then_gone)
    assert edit.purge(vault, now=NOW) == (last,)


def test_purge_that_cannot_delete_says_which(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = trash(vault, "people/Maya.md")
    monkeypatch.setattr(os, "unlink", failing(errno.EACCES))
    assert _message(CannotEdit, edit.purge, vault, paths=(entry.path,)) == (
        "cannot delete .trash/people/Maya.md: Permission denied"
    )


def test_current_digest_is_the_index_digest_of_the_file_as_it_is(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit.trash import current_digest

    big = bytes(range(256)) * (10 << 10) + b"tail"  # 2.5 MB: read in pieces
    (vault / "big.bin").write_bytes(big)
    assert current_digest(vault, "big.bin") == digest(big)
    assert trash(vault, "big.bin").size == len(big)  # the move's own check reads in pieces too
    (vault / "Maya.md").symlink_to("people/Maya.md")
    assert current_digest(vault, "Maya.md") == digest(b"# Maya\r\n")
    assert _message(NoteNotFound, current_digest, vault, "gone.md") == (
        "gone.md does not exist (deleted or moved?); run `vaultmem reindex` if the index still"
        " lists it"
    )
    (vault / "folder.md").mkdir()
    assert _message(CannotEdit, current_digest, vault, "folder.md") == (
        "folder.md is a folder, not a note or attachment; vaultmem moves only regular files, so"
        " nothing was moved (trash the notes in it one by one)"
    )
    monkeypatch.setattr(os, "open", refusing("open", errno.EACCES, names=("Maya.md",)))
    assert _message(CannotEdit, current_digest, vault, "people/Maya.md") == (
        "cannot read people/Maya.md: Permission denied; nothing was moved"
    )


def test_the_log_is_readable_utf8_json_an_ordinary_file_never_followed(
    vault: Path, tmp_path: Path
) -> None:
    old_umask = os.umask(0o022)
    try:
        (vault / "Café.md").write_bytes(b"x")
        trash(vault, "Café.md")
        log = vault.joinpath(*LOG)
        assert '"from": "Café.md"' in log.read_bytes().decode("utf-8")
        assert log.stat().st_mode & 0o777 == 0o644
        trash(vault, "photo.png", NOW - dt.timedelta(days=40))
        edit.purge(vault, now=NOW)  # rewritten: still an ordinary file
        assert log.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old_umask)
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"")
    log.unlink()
    log.symlink_to(outside)
    assert trash(vault, "people/Maya.md").known
    assert outside.read_bytes() == b""


def test_an_unrecorded_move_warning_names_the_log_the_reason_and_the_file(
    vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (vault / ".vaultmem").write_bytes(b"a file where the folder should be")
    with caplog.at_level(logging.WARNING):
        trash(vault, "people/Maya.md")
    assert caplog.messages == [
        "vaultmem: could not record the move in .vaultmem/trash.jsonl (Not a directory); the"
        " trash still works, but will guess where .trash/people/Maya.md came from"
    ]


def test_purging_keeps_every_record_of_what_stays_in_the_trash(vault: Path) -> None:
    (vault / "a" / "b").mkdir(parents=True)
    (vault / "a" / "b" / "deep.md").write_bytes(b"deep")
    (vault / "Maya.md").symlink_to("people/Maya.md")
    staying = [
        trash(vault, "a/b/deep.md"),
        trash(vault, "Maya.md"),  # a symlink: the record describes the link itself
        trash(vault, "people/Maya.md", NOW - dt.timedelta(minutes=1)),
    ]
    old = trash(vault, "photo.png", NOW - dt.timedelta(days=40))
    assert edit.purge(vault, now=NOW) == (old,)
    records = [json.loads(line) for line in vault.joinpath(*LOG).read_text().splitlines()]
    assert sorted(r["trashed"] for r in records) == sorted(e.path for e in staying)
    assert all(e.known for e in edit.list_trash(vault))


def test_a_log_that_cannot_be_tidied_is_a_warning(
    vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (vault / ".trash").mkdir()
    (vault / ".trash" / "old.md").write_bytes(b"trashed by Obsidian")
    with caplog.at_level(logging.WARNING):
        assert [e.path for e in edit.purge(vault, older_than=dt.timedelta(0))] == [".trash/old.md"]
    assert caplog.messages == [
        "vaultmem: could not tidy .vaultmem/trash.jsonl (No such file or directory)"
    ]


def test_the_list_is_newest_first_then_by_path(vault: Path) -> None:
    (vault / "a.md").write_bytes(b"a")
    (vault / "b.md").write_bytes(b"b")
    old = trash(vault, "photo.png", NOW - dt.timedelta(days=2))
    b = trash(vault, "b.md")
    a = trash(vault, "a.md")
    assert edit.list_trash(vault) == (a, b, old)


def test_the_list_skips_temporaries_only_and_never_leaves_the_trash(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (vault / ".trash").mkdir()
    names = [f"n{i:02}.md" for i in range(20)]
    for name in names:
        (vault / ".trash" / name).write_bytes(b"x")
    (vault / ".trash" / ".n.md.1.0123abcd.vaultmem-tmp").write_bytes(b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_bytes(b"s")
    (vault / ".trash" / "linked").symlink_to(outside)
    real_fwalk = os.fwalk

    def with_a_ghost(*args: object, **kwargs: object) -> object:
        for here, dirs, files, fd in real_fwalk(*args, **kwargs):  # type: ignore[call-overload]
            yield here, dirs, [".n.md.1.0123abcd.vaultmem-tmp", "ghost.md", *files], fd

    monkeypatch.setattr(os, "fwalk", with_a_ghost)
    listed = sorted(e.path for e in edit.list_trash(vault))
    assert listed == [f".trash/{name}" for name in names]


def test_records_the_log_cannot_vouch_for_are_guesses(vault: Path) -> None:
    entry = trash(vault, "people/Maya.md")
    log = vault.joinpath(*LOG)
    record = json.loads(log.read_text())
    for change in ({"from": "../outside.md"}, {"at": "2026-11-30T12:00:00"}):
        log.write_text(json.dumps({**record, **change}) + "\n")
        (listed,) = edit.list_trash(vault)
        assert (listed.original, listed.known) == ("people/Maya.md", False), change
    log.write_text(json.dumps(record) + "\n")
    assert edit.list_trash(vault) == (entry,)
    with open(log, "r+b") as handle:  # a log over 64 MB is not vaultmem's: never read
        handle.truncate((64 << 20) + 1)
    (listed,) = edit.list_trash(vault)
    assert listed.known is False


def test_a_tidied_log_holds_its_records_only_whatever_its_temporary_held(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    kept = trash(vault, "people/Maya.md")
    trash(vault, "photo.png", NOW - dt.timedelta(days=40))
    monkeypatch.setattr(disk.secrets, "token_hex", lambda n: "0123abcd")
    leftover = vault / ".vaultmem" / f".trash.jsonl.{os.getpid()}.0123abcd.vaultmem-tmp"
    leftover.write_bytes(b"x" * 4096)
    edit.purge(vault, now=NOW)
    records = vault.joinpath(*LOG).read_bytes().splitlines()
    assert [json.loads(r)["trashed"] for r in records] == [kept.path]


def test_restore_without_hard_links_never_replaces_a_dangling_symlink(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    entry = trash(vault, "people/Maya.md")
    (vault / "people" / "Maya.md").symlink_to(tmp_path / "nowhere.md")
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    with pytest.raises(NoteExists):
        edit.restore(vault, entry.path)
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").is_symlink()
    assert (vault / entry.path).read_bytes() == b"# Maya\r\n"


def _then_unlinked(gone: Path) -> Callable[..., None]:
    """`os.link` after which another program removes `gone` (a purge or a delete that
    lands between the link and the unlink of the old name)."""

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        REAL_LINK(src, dst, **kwargs)
        gone.unlink()

    return link


def test_an_entry_purged_while_it_is_restored_stays_restored(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the restore linked the file back, a purge removed the trash's name, and the restore,
    # finding its old name gone, removed the new one: the file had no name left
    entry = trash(vault, "people/Maya.md")
    monkeypatch.setattr(os, "link", _then_unlinked(vault / entry.path))
    assert edit.restore(vault, entry.path) == "people/Maya.md"
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == b"# Maya\r\n"
    assert not (vault / entry.path).exists()


def test_a_note_deleted_while_it_is_trashed_stays_in_the_trash(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the move linked the note into the trash, another program deleted the note, and the
    # move, finding the old name gone, took the trash's name back: the file had no name left
    note = vault / "people" / "Maya.md"
    monkeypatch.setattr(os, "link", _then_unlinked(note))
    entry = trash(vault, "people/Maya.md")
    monkeypatch.undo()
    assert (vault / entry.path).read_bytes() == b"# Maya\r\n"
    assert not note.exists()


def test_a_move_cut_short_between_its_link_and_unlink_is_finished_by_the_next(
    vault: Path,
) -> None:
    # a crash after the link into the trash left the note with a second name there; the next
    # `trash` of it linked it again as `Maya 1.md`: two entries of one file, and the first
    # one unknown to the log
    note = vault / "people" / "Maya.md"
    (vault / ".trash" / "people").mkdir(parents=True)
    os.link(note, vault / ".trash" / "people" / "Maya.md")  # what the crash left
    entry = trash(vault, "people/Maya.md")
    assert entry.path == ".trash/people/Maya.md"
    assert not note.exists()
    assert [(e.path, e.original, e.known) for e in edit.list_trash(vault)] == [
        (".trash/people/Maya.md", "people/Maya.md", True)
    ]
    assert (vault / entry.path).read_bytes() == b"# Maya\r\n"
