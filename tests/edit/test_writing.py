"""Writing notes: atomic, only over the revision read, never through a link out, never over a
read-only file, and nothing left half-done by a full disk, a crash or a second writer."""

from __future__ import annotations

import codecs
import datetime as dt
import errno
import os
import signal
import subprocess
import textwrap
import unicodedata
import uuid
from pathlib import Path

import pytest

from tests.conftest import (
    REAL_UNLINK,
    REAL_WRITE,
    failing,
    fd_path,
    full_disk,
    linked_after,
    refusing,
    synced_then,
)
from tests.edit.conftest import (
    child,
    lock_held,
    locked_then,
    release_once_waited_for,
    snapshot,
    wait_for,
    without_override,
)
from vaultmem import edit
from vaultmem.edit import writing
from vaultmem.errors import CannotEdit, ChangedOnDisk, EditDoesNotApply, NoteExists
from vaultmem.model import content_digest as digest
from vaultmem.scan import scan

NOTE = "# Maya\r\n\r\n## Tasks\r\n- [ ] call ⏫ ^t1\r\nlast line"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Maya.md").write_bytes(NOTE.encode())
    (root / "other.md").write_bytes(b"untouched\n")
    (root / ".obsidian").mkdir()
    return root


def checked(root: Path, path: str = "people/Maya.md") -> edit.Change:
    source = edit.read_note(root, path)
    return edit.plan_edit(source, edit.check_task(source.lines, 4, dt.date(2026, 11, 30)))


def temporaries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if writing.is_temporary(p.name))


# --------------------------------------------------------------------------- the happy path


def test_a_write_changes_only_its_note_keeping_endings_and_mode(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    note.chmod(0o664)  # wider than the umask allows a new file: kept all the same
    before = snapshot(vault)
    change = checked(vault)
    old_umask = os.umask(0o022)
    try:
        assert edit.write(vault, change) == ("people/Maya.md",)
    finally:
        os.umask(old_umask)
    assert note.read_bytes() == NOTE.replace("[ ] call ⏫", "[x] call ⏫ ✅ 2026-11-30").encode()
    assert note.stat().st_mode & 0o7777 == 0o664
    after = snapshot(vault)
    assert {k: v for k, v in after.items() if k != "people/Maya.md"} == {
        k: v for k, v in before.items() if k != "people/Maya.md"
    }
    assert temporaries(vault) == []
    assert digest(note.read_bytes()) == digest(change.data)


def test_root_editing_a_users_note_keeps_the_owner(vault: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    note = vault / "people" / "Maya.md"
    os.chown(note, 65534, 65534)
    edit.write(vault, checked(vault))
    assert (note.stat().st_uid, note.stat().st_gid) == (65534, 65534)


def test_writing_the_same_bytes_writes_nothing(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    source = edit.read_note(vault, "people/Maya.md")
    st = note.stat()
    assert edit.write(vault, edit.plan_edit(source, source.lines)) == ()
    assert (note.stat().st_ino, note.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)


def test_the_index_digest_serves_as_the_precondition(vault: Path) -> None:
    from vaultmem.vault import Vault

    index = Vault(vault, vault.parent / "index.db")
    index.reindex()
    from vaultmem import store

    held = store.note_digest(index.conn, "people/Maya.md")
    source = edit.read_note(vault, "people/Maya.md", expected_digest=held)
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "# Maya Chen"))
    assert change.before == held
    edit.write(vault, change)


# --------------------------------------------------------------------------- changed on disk


def test_a_note_edited_since_it_was_read_is_not_written(vault: Path) -> None:
    change = checked(vault)
    note = vault / "people" / "Maya.md"
    note.write_bytes(b"edited in Obsidian meanwhile\n")
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value).startswith(
        "people/Maya.md changed on disk since it was read; nothing was written."
    )
    assert "Read the note again" in str(caught.value)
    assert caught.value.exit_code == 6
    assert note.read_bytes() == b"edited in Obsidian meanwhile\n"
    assert temporaries(vault) == []


def test_a_note_deleted_since_it_was_read(vault: Path) -> None:
    change = checked(vault)
    (vault / "people" / "Maya.md").unlink()
    with pytest.raises(ChangedOnDisk, match="deleted or renamed"):
        edit.write(vault, change)
    assert not (vault / "people" / "Maya.md").exists()
    assert temporaries(vault) == []


def test_a_note_renamed_since_it_was_read(vault: Path) -> None:
    change = checked(vault)
    (vault / "people" / "Maya.md").rename(vault / "people" / "Maya Chen.md")
    with pytest.raises(ChangedOnDisk, match="deleted or renamed"):
        edit.write(vault, change)
    assert (vault / "people" / "Maya Chen.md").read_bytes() == NOTE.encode()
    assert not (vault / "people" / "Maya.md").exists()


def test_a_folder_renamed_since_it_was_read(vault: Path) -> None:
    change = checked(vault)
    (vault / "people").rename(vault / "persons")
    with pytest.raises(ChangedOnDisk, match="folder was deleted or renamed"):
        edit.write(vault, change)
    assert not (vault / "people").exists()


def test_a_note_edited_in_place_while_the_new_version_was_written(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Obsidian writes in place, without any lock: the last look before the rename sees it."""
    note = vault / "people" / "Maya.md"

    def obsidian_saves_meanwhile() -> None:
        with open(note, "r+b") as handle:
            handle.write(b"# Typed")

    change = checked(vault)
    monkeypatch.setattr(os, "fsync", synced_then(writing.TMP_SUFFIX, obsidian_saves_meanwhile))
    with pytest.raises(ChangedOnDisk, match="while the new version was being written"):
        edit.write(vault, change)
    monkeypatch.undo()
    assert note.read_bytes() == b"# Typed" + NOTE.encode()[7:]
    assert temporaries(vault) == []


def test_a_note_replaced_by_the_same_bytes_under_a_new_inode_is_still_the_revision(
    vault: Path,
) -> None:
    """Obsidian and many editors save by rename: same content, same revision."""
    change = checked(vault)
    note = vault / "people" / "Maya.md"
    (vault / "people" / "copy").write_bytes(note.read_bytes())
    (vault / "people" / "copy").rename(note)
    edit.write(vault, change)
    assert "✅ 2026-11-30" in note.read_text()


def test_a_note_swapped_for_a_symlink_out_of_the_vault(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(NOTE.encode())  # even with the very bytes the change expects
    change = checked(vault)
    note = vault / "people" / "Maya.md"
    note.unlink()
    note.symlink_to(outside)
    with pytest.raises(ChangedOnDisk, match="replaced by a symlink"):
        edit.write(vault, change)
    assert outside.read_bytes() == NOTE.encode() and note.is_symlink()


def test_a_folder_swapped_for_a_symlink_out_of_the_vault(vault: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "Maya.md").write_bytes(NOTE.encode())
    change = checked(vault)
    (vault / "people").rename(vault / "was-people")
    (vault / "people").symlink_to(elsewhere)
    with pytest.raises(ChangedOnDisk, match="a folder on its way is now a symlink"):
        edit.write(vault, change)
    assert (elsewhere / "Maya.md").read_bytes() == NOTE.encode()


def test_a_change_naming_a_path_outside_the_vault_is_refused(vault: Path, tmp_path: Path) -> None:
    (tmp_path / "x.md").write_bytes(b"x\n")
    for path in ("../x.md", "/etc/x.md"):
        forged = edit.Change(path, path, digest(b"x\n"), b"pwned\n")
        with pytest.raises(CannotEdit, match="not a path inside the vault"):
            edit.write(vault, forged)
    assert (tmp_path / "x.md").read_bytes() == b"x\n"


# --------------------------------------------------------------------------- symlinks


def test_a_symlinked_note_inside_the_vault_is_written_through_and_stays_a_link(
    vault: Path,
) -> None:
    (vault / "Maya.md").symlink_to("people/Maya.md")
    source = edit.read_note(vault, "Maya.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "# Maya Chen"))
    assert edit.write(vault, change) == ("Maya.md", "people/Maya.md")
    assert (vault / "Maya.md").is_symlink()
    assert os.readlink(vault / "Maya.md") == "people/Maya.md"
    assert (vault / "people" / "Maya.md").read_bytes().startswith(b"# Maya Chen\r\n")


def test_a_symlink_retargeted_since_it_was_read(vault: Path) -> None:
    (vault / "Maya.md").symlink_to("people/Maya.md")
    (vault / "Copy.md").write_bytes(NOTE.encode())
    change = checked(vault, "Maya.md")
    (vault / "Maya.md").unlink()
    (vault / "Maya.md").symlink_to("Copy.md")
    with pytest.raises(ChangedOnDisk, match="its symlink now leads to another file"):
        edit.write(vault, change)
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    assert (vault / "Copy.md").read_bytes() == NOTE.encode()


def test_a_hard_linked_note_is_refused_rather_than_split(vault: Path) -> None:
    os.link(vault / "people" / "Maya.md", vault / "twin.md")
    with pytest.raises(CannotEdit, match="has 2 hard links"):
        edit.write(vault, checked(vault))
    assert (vault / "twin.md").read_bytes() == (vault / "people" / "Maya.md").read_bytes()


def test_a_note_named_in_nfd_is_found_by_its_nfc_path(vault: Path) -> None:
    """The index keeps NFC paths; macOS writes NFD names: the write goes to the file there is."""
    nfd = unicodedata.normalize("NFD", "Café.md")
    (vault / nfd).write_bytes(b"# Cafe\n")
    nfc = unicodedata.normalize("NFC", "Café.md")
    source = edit.read_note(vault, nfc)
    assert (source.path, source.file) == (nfc, nfd)
    assert edit.write(vault, edit.plan_edit(source, edit.replace_line(source.lines, 1, "# Café")))
    assert sorted(p.name for p in vault.iterdir() if p.suffix == ".md") == sorted(["other.md", nfd])
    assert (vault / nfd).read_bytes() == "# Café\n".encode()


# --------------------------------------------------------------------------- encodings


def test_a_windows_1252_note_is_written_back_in_windows_1252(vault: Path) -> None:
    data = "Caf\xe9 € notes\r\n- [ ] r\xe9sum\xe9\r\n".encode("cp1252")
    (vault / "legacy.md").write_bytes(data)
    source = edit.read_note(vault, "legacy.md")
    assert source.encoding == "windows-1252"
    change = edit.plan_edit(source, edit.insert_after(source.lines, 2, "- [ ] déjà vu"))
    edit.write(vault, change)
    assert (vault / "legacy.md").read_bytes() == data + "- [ ] d\xe9j\xe0 vu\r\n".encode("cp1252")


def test_text_a_legacy_encoding_cannot_hold_is_refused(vault: Path) -> None:
    data = "Caf\xe9\n- [ ] call\n".encode("cp1252")
    (vault / "legacy.md").write_bytes(data)
    source = edit.read_note(vault, "legacy.md")
    lines = edit.check_task(source.lines, 2, dt.date(2026, 11, 30))
    with pytest.raises(CannotEdit) as caught:
        edit.plan_edit(source, lines)
    assert str(caught.value) == (
        "legacy.md is saved in Windows-1252, which cannot hold '✅' (U+2705) on line 2;"
        " nothing was written. Re-save the note as UTF-8 (or leave that character out) and"
        " try again."
    )
    assert (vault / "legacy.md").read_bytes() == data


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_note_stays_utf16_with_its_bom(vault: Path, encoding: str) -> None:
    bom = codecs.BOM_UTF16_LE if encoding == "utf-16-le" else codecs.BOM_UTF16_BE
    (vault / "wide.md").write_bytes(bom + "# Wide\r\n- [ ] x ✓".encode(encoding))
    source = edit.read_note(vault, "wide.md")
    edit.write(vault, edit.plan_edit(source, edit.check_task(source.lines, 2, dt.date(2026, 1, 2))))
    assert (vault / "wide.md").read_bytes() == bom + "# Wide\r\n- [x] x ✓ ✅ 2026-01-02".encode(
        encoding
    )


def test_a_bom_nul_bytes_and_mixed_endings_survive_an_edit(vault: Path) -> None:
    data = codecs.BOM_UTF8 + b"a\x00b\r\nold\rc\nno final"
    (vault / "odd.md").write_bytes(data)
    source = edit.read_note(vault, "odd.md")
    edit.write(vault, edit.plan_edit(source, edit.replace_line(source.lines, 2, "new")))
    assert (vault / "odd.md").read_bytes() == codecs.BOM_UTF8 + b"a\x00b\r\nnew\rc\nno final"


# --------------------------------------------------------------------------- read-only


def test_a_read_only_note_is_refused_and_never_chmodded(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    change = checked(vault)
    note.chmod(0o444)
    with pytest.raises(CannotEdit, match=r"people/Maya.md is read-only \(mode 0444\)"):
        edit.write(vault, change)
    assert note.stat().st_mode & 0o7777 == 0o444
    assert note.read_bytes() == NOTE.encode()
    assert temporaries(vault) == []


def test_a_read_only_folder_is_refused(vault: Path) -> None:
    change = checked(vault)
    (vault / "people").chmod(0o555)
    try:
        with pytest.raises(CannotEdit, match=r"the folder of people/Maya\.md is read-only"):
            edit.write(vault, change)
        assert (vault / "people").stat().st_mode & 0o7777 == 0o555
    finally:
        (vault / "people").chmod(0o755)
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()


WRITE_IN_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.errors import VaultmemError
    root, path, line = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    try:
        source = edit.read_note(root, path)
        edit.write(root, edit.plan_edit(source, edit.replace_line(source.lines, 1, line)))
    except VaultmemError as exc:
        print(type(exc).__name__, exc)
        sys.exit(exc.exit_code)
    """
)


def test_permissions_deny_the_write_when_root_cannot_override_them(vault: Path) -> None:
    """Without the capabilities that let root write anything, the system's own permission
    answer refuses: a note and a folder owned by another user, writable only by that user."""
    prefix = without_override()
    note = vault / "people" / "Maya.md"
    os.chown(note, 65534, 65534)
    note.chmod(0o644)
    proc = child(WRITE_IN_CHILD, str(vault), "people/Maya.md", "x", prefix=prefix)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "CannotEdit people/Maya.md is read-only (mode 0644)" in out
    assert note.read_bytes() == NOTE.encode()

    (vault / "mine.md").write_bytes(b"mine\n")
    os.chown(vault, 65534, 65534)
    vault.chmod(0o755)
    proc = child(WRITE_IN_CHILD, str(vault), "mine.md", "x", prefix=prefix)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "the folder of mine.md is read-only (mode 0755)" in out
    assert (vault / "mine.md").read_bytes() == b"mine\n"
    assert temporaries(vault) == []


# --------------------------------------------------------------------------- a full disk


def test_a_failing_write_leaves_the_note_and_no_temporary(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = checked(vault)
    # four bytes at a time while more is asked for (short writes), then the disk is full
    monkeypatch.setattr(os, "write", full_disk(writing.TMP_SUFFIX, short=4))
    with pytest.raises(CannotEdit, match="No space left on device; nothing was written"):
        edit.write(vault, change)
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    assert temporaries(vault) == []


def test_a_failing_fsync_leaves_the_note_and_no_temporary(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = checked(vault)
    monkeypatch.setattr(os, "fsync", failing(errno.EIO))
    with pytest.raises(CannotEdit, match="Input/output error"):
        edit.write(vault, change)
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    assert temporaries(vault) == []


@pytest.fixture
def tiny_disk(tmp_path: Path) -> object:
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_really_full_disk_leaves_the_note_and_no_temporary(tiny_disk: Path) -> None:
    root = tiny_disk
    (root / "n.md").write_bytes(b"- [ ] small note\n")
    source = edit.read_note(root, "n.md")
    change = edit.plan_edit(source, edit.insert_after(source.lines, 1, "x" * 40_000))
    filler = root / ".filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk, then leave less room than the new version needs
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(filler, filler.stat().st_size - 20 * 1024)
    with pytest.raises(CannotEdit, match="No space left on device"):
        edit.write(root, change)
    assert (root / "n.md").read_bytes() == b"- [ ] small note\n"
    assert temporaries(root) == []


# --------------------------------------------------------------------------- a crash


PAUSE_BEFORE_RENAME = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from vaultmem import edit
    root, marker = Path(sys.argv[1]), Path(sys.argv[2])
    real_rename = os.rename

    def paused(src, dst, **kw):
        if src.endswith(".vaultmem-tmp"):
            marker.write_text(src)  # the temporary is written and synced: now kill me
            time.sleep(600)
        real_rename(src, dst, **kw)

    os.rename = paused
    source = edit.read_note(root, "people/Maya.md")
    edit.write(root, edit.plan_edit(source, edit.replace_line(source.lines, 1, "# killed")))
    """
)


def test_a_writer_killed_between_temporary_and_rename(vault: Path) -> None:
    marker = vault.parent / "marker"
    proc = child(PAUSE_BEFORE_RENAME, str(vault), str(marker))
    try:
        wait_for(lambda: marker.exists() and marker.read_text() != "", "the paused writer")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()  # the old version
    stray = temporaries(vault)
    assert len(stray) == 1 and stray[0].startswith("people/.Maya.md.")
    assert f".{proc.pid}." in stray[0]
    # the indexer never sees it as a note (nor as an attachment)
    assert {f.path for f in scan(vault).files} == {"people/Maya.md", "other.md"}
    # the next run removes it (its writer is gone), and nothing else
    before = snapshot(vault)
    assert edit.clean_temporaries(vault) == tuple(stray)
    assert temporaries(vault) == []
    assert snapshot(vault) == {k: v for k, v in before.items() if k != stray[0]}
    edit.write(vault, checked(vault))  # and writing works again


def test_cleaning_leaves_live_writers_and_other_files_alone(vault: Path) -> None:
    live = vault / f".Maya.md.{os.getpid()}.0123abcd.vaultmem-tmp"
    live.write_bytes(b"being written")
    lookalikes = [
        vault / "notes.vaultmem-tmp",  # not a dot file: not ours
        vault / ".hidden.md",
        vault / ".obsidian" / "workspace.json",
    ]
    for path in lookalikes:
        path.write_bytes(b"keep")
    (vault / ".link.1.0123abcd.vaultmem-tmp").symlink_to(vault / "other.md")
    assert edit.clean_temporaries(vault) == ()
    assert live.exists() and all(p.exists() for p in lookalikes)
    # an hour later even a live pid's file is stale (the pid was reused)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)
    assert edit.clean_temporaries(vault, now=later) == (live.name,)
    assert all(p.exists() for p in lookalikes)
    assert (vault / ".link.1.0123abcd.vaultmem-tmp").is_symlink()


def test_cleaning_removes_a_dead_writers_temporary_at_once(vault: Path) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    stale = vault / "people" / f".Maya.md.{proc.pid}.0123abcd.vaultmem-tmp"
    stale.write_bytes(b"half")
    assert edit.clean_temporaries(vault) == (f"people/{stale.name}",)


# --------------------------------------------------------------------------- two writers


RACE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.errors import ChangedOnDisk
    root, go, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    source = edit.read_note(root, "people/Maya.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, version))
    Path(sys.argv[4]).write_text("ready")
    give_up = time.monotonic() + 600  # never spin on after the test is gone
    while not go.exists():
        if time.monotonic() > give_up:
            sys.exit(99)
        time.sleep(0.001)
    try:
        edit.write(root, change)
    except ChangedOnDisk:
        sys.exit(6)
    """
)


def test_two_writers_racing_one_wins_the_other_is_refused(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    for round_ in range(8):
        note.write_bytes(NOTE.encode())
        go = vault.parent / f"go-{round_}"
        ready = [vault.parent / f"ready-{round_}-{n}" for n in (1, 2)]
        procs = [
            child(RACE, str(vault), str(go), f"# version {n}", str(ready[n - 1])) for n in (1, 2)
        ]
        wait_for(lambda r=ready: all(f.exists() for f in r), "both writers to have read the note")
        go.touch()
        codes = sorted(p.wait(timeout=120) for p in procs)
        errors = [p.communicate()[1] for p in procs]
        assert codes == [0, 6], errors
        text = note.read_bytes().decode()
        assert text in [NOTE.replace("# Maya", f"# version {n}", 1) for n in (1, 2)]
        assert temporaries(vault) == []


HOLD_THEN_RENAME = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from vaultmem import edit
    root, inside, other_locking = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    real_rename = os.rename

    def held(src, dst, **kw):
        inside.write_text("in")  # checked, temporary written, about to rename
        give_up = time.monotonic() + 600  # never spin on after the test is gone
        while not other_locking.exists():
            if time.monotonic() > give_up:
                sys.exit(99)
            time.sleep(0.001)
        real_rename(src, dst, **kw)

    os.rename = held
    source = edit.read_note(root, "people/Maya.md")
    edit.write(root, edit.plan_edit(source, edit.replace_line(source.lines, 1, "# first")))
    """
)

SECOND_WRITER = textwrap.dedent(
    """
    import fcntl, sys, time
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.errors import ChangedOnDisk
    root, start, locking = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    source = edit.read_note(root, "people/Maya.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "# second"))
    give_up = time.monotonic() + 600  # never spin on after the test is gone
    while not start.exists():
        if time.monotonic() > give_up:
            sys.exit(99)
        time.sleep(0.001)
    real_flock = fcntl.flock

    def flock(fd, op):
        locking.write_text("locking")
        return real_flock(fd, op)

    fcntl.flock = flock
    try:
        edit.write(root, change)
    except ChangedOnDisk as exc:
        print(exc)
        sys.exit(6)
    """
)


def test_a_second_writer_inside_the_first_ones_check_and_rename_is_refused(
    vault: Path,
) -> None:
    """The window a digest check alone leaves open: writer 1 has checked and written its
    temporary; writer 2, holding the same revision, tries now. Without the note's lock both
    would succeed and writer 1's rename would silently drop writer 2's change."""
    tag = uuid.uuid4().hex
    inside, locking = vault.parent / f"inside-{tag}", vault.parent / f"locking-{tag}"
    second = child(SECOND_WRITER, str(vault), str(inside), str(locking))
    first = child(HOLD_THEN_RENAME, str(vault), str(inside), str(locking))
    assert first.wait(timeout=120) == 0, first.communicate()[1]
    out, err = second.communicate(timeout=120)
    assert second.returncode == 6, err
    assert "changed on disk since it was read; nothing was written" in out
    assert (vault / "people" / "Maya.md").read_bytes().startswith(b"# first\r\n")


# --------------------------------------------------------------------------- new notes


def test_a_new_note_is_created_with_its_folders(vault: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        change = edit.plan_new_note("projects/2026/Heat pump.md", "# Heat pump\n")
        assert edit.write(vault, change) == ("projects/2026/Heat pump.md",)
    finally:
        os.umask(old_umask)
    note = vault / "projects" / "2026" / "Heat pump.md"
    assert note.read_bytes() == b"# Heat pump\n"
    assert note.stat().st_mode & 0o777 == 0o644
    assert temporaries(vault) == []


def test_creating_never_overwrites(vault: Path, tmp_path: Path) -> None:
    change = edit.plan_new_note("people/Maya.md", "# other\n")
    with pytest.raises(NoteExists, match=r"people/Maya\.md exists already; nothing was written"):
        edit.write(vault, change)
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    (vault / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(NoteExists):
        edit.write(vault, edit.plan_new_note("dangling.md", "x"))
    assert not (tmp_path / "nowhere.md").exists()
    assert temporaries(vault) == []


def test_creating_through_a_symlinked_folder_is_refused(vault: Path, tmp_path: Path) -> None:
    (vault / "out").symlink_to(tmp_path)
    with pytest.raises(CannotEdit, match="a folder on its way is a symlink"):
        edit.write(vault, edit.plan_new_note("out/x.md", "x"))
    assert not (tmp_path / "x.md").exists()


def test_a_failed_create_removes_the_folders_it_made(vault: Path) -> None:
    (vault / "people").chmod(0o555)
    try:
        with pytest.raises(CannotEdit, match="read-only"):
            edit.write(vault, edit.plan_new_note("people/new/deeper/x.md", "x"))
    finally:
        (vault / "people").chmod(0o755)
    assert not (vault / "people" / "new").exists()
    (vault / "made").mkdir()
    (vault / "made").chmod(0o555)
    try:
        with pytest.raises(CannotEdit, match="read-only"):
            edit.write(vault, edit.plan_new_note("made/x.md", "x"))
    finally:
        (vault / "made").chmod(0o755)
    assert (vault / "made").exists()  # not made by that write: left alone


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("notes/x.txt", "a note's name ends in .md"),
        (".obsidian/x.md", "starting with a dot"),
        ("a/.hidden.md", "starting with a dot"),
        ("../x.md", "not a path inside the vault"),
    ],
)
def test_new_note_names_that_are_refused(path: str, message: str) -> None:
    with pytest.raises(CannotEdit, match=message):
        edit.plan_new_note(path, "x")


def test_a_note_from_a_template(vault: Path) -> None:
    template = (
        "---\ncreated: {{date}}\n---\n# {{title}}\n\n"
        "{{ date:dddd D MMMM YYYY }} at {{time}}\n{{other}}\n"
    )
    when = dt.datetime(2026, 11, 30, 9, 5)
    change = edit.plan_note_from_template("people/Ana Diaz.md", template, now=when)
    edit.write(vault, change)
    assert (vault / "people" / "Ana Diaz.md").read_text() == (
        "---\ncreated: 2026-11-30\n---\n# Ana Diaz\n\nMonday 30 November 2026 at 09:05\n{{other}}\n"
    )


def test_cleaning_one_folder_leaves_the_others(tmp_path: Path) -> None:
    """What a write does before it writes: its own folder only, and only stale temporaries."""
    vault = tmp_path / "v"
    (vault / "people").mkdir(parents=True)
    dead = 2**22 + 12345  # above any pid this machine hands out
    top = vault / f".a.md.{dead}.0123abcd.vaultmem-tmp"
    inner = vault / "people" / f".b.md.{dead}.0123abcd.vaultmem-tmp"
    mine = vault / "people" / f".c.md.{os.getpid()}.0123abcd.vaultmem-tmp"
    other = vault / "people" / ".c.md.not-ours"
    for f in (top, inner, mine, other):
        f.write_text("x")
    assert edit.clean_temporaries(vault, folder="people") == (f"people/{inner.name}",)
    assert top.exists() and mine.exists() and other.exists()
    assert edit.clean_temporaries(vault, folder="") == (top.name,)
    assert edit.clean_temporaries(vault, folder="missing") == ()


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/edit/writing.py and disk.py that the tests above let
# through (docs/TESTING.md, "note editor: the rest"): whole messages, the failures a disk or
# another program can cause at each step, and what a failed step leaves behind.

CHANGED = (
    "people/Maya.md changed on disk since it was read; nothing was written{how}. Read the note"
    " again (run `vaultmem reindex` if the index is behind) and redo the change on its current"
    " text."
)


def test_a_change_refused_as_changed_on_disk_says_so_whole(vault: Path) -> None:
    change = checked(vault)
    (vault / "people" / "Maya.md").write_bytes(b"edited\n")
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(how="")
    (vault / "people" / "Maya.md").write_bytes(NOTE.encode())
    change = checked(vault)
    (vault / "people").rename(vault / "was")
    (vault / "people").symlink_to("was")
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(
        how=" (a folder on its way is now a symlink or a file)"
    )


def test_new_note_names_are_refused_with_the_whole_reason() -> None:
    with pytest.raises(CannotEdit) as caught:
        edit.plan_new_note("a/.hidden.md", "x")
    assert str(caught.value) == (
        "a/.hidden.md: a name starting with a dot is hidden from Obsidian and the index;"
        " choose another"
    )
    with pytest.raises(CannotEdit) as caught:
        edit.plan_new_note("n.txt", "x")
    assert str(caught.value) == "n.txt: a note's name ends in .md"
    with pytest.raises(CannotEdit) as caught:
        edit.plan_new_note("n.md", "half a pair \ud800")
    assert str(caught.value) == (
        "n.md: UTF-8 cannot hold '\\ud800' (U+D800, line 1); nothing was written"
    )
    assert edit.plan_new_note("Upper.MD", "x") == edit.Change("Upper.MD", "Upper.MD", None, b"x")


def test_creating_in_a_read_only_folder_or_through_a_link_says_so_whole(
    vault: Path, tmp_path: Path
) -> None:
    (vault / "made").mkdir()
    (vault / "made").chmod(0o555)
    try:
        with pytest.raises(CannotEdit) as caught:
            edit.write(vault, edit.plan_new_note("made/x.md", "x"))
    finally:
        (vault / "made").chmod(0o755)
    assert str(caught.value) == (
        "the folder of made/x.md is read-only (mode 0555); nothing was written. Make it"
        " writable yourself if you want vaultmem to change files in it."
    )
    (vault / "out").symlink_to(tmp_path)
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, edit.plan_new_note("out/x.md", "x"))
    assert str(caught.value) == (
        "cannot create out/x.md: a folder on its way is a symlink or a file; vaultmem creates"
        " notes only in real folders inside the vault"
    )


@pytest.mark.parametrize("error", [errno.EACCES, errno.EPERM, errno.EROFS])
def test_a_temporary_the_folder_refuses_is_a_read_only_folder(
    vault: Path, monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    change = checked(vault)
    monkeypatch.setattr(os, "open", refusing("open", error, ending=writing.TMP_SUFFIX))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        f"cannot write people/Maya.md: its folder is read-only ({os.strerror(error)});"
        " nothing was written"
    )
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, edit.plan_new_note("people/New.md", "x"))
    assert str(caught.value) == (
        f"cannot write people/New.md: its folder is read-only ({os.strerror(error)});"
        " nothing was written"
    )
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    assert not (vault / "people" / "New.md").exists() and temporaries(vault) == []


def test_any_other_failure_to_write_says_what_to_do(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = checked(vault)
    monkeypatch.setattr(os, "open", refusing("open", errno.ENOSPC, ending=writing.TMP_SUFFIX))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        "cannot write people/Maya.md: No space left on device; nothing was written and the note"
        " is unchanged. Free some space or fix the disk, then try again."
    )

    monkeypatch.setattr(os, "open", failing("the driver gave no reason"))
    with pytest.raises(CannotEdit) as caught:
        writing._temporary(0, "n.md", b"x", "n.md", 0o644, None)
    assert str(caught.value) == (
        "cannot write n.md: the driver gave no reason; nothing was written and the note is"
        " unchanged. Free some space or fix the disk, then try again."
    )


def test_a_folder_that_cannot_be_opened_says_why(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    change = checked(vault)
    monkeypatch.setattr(disk, "open_folder", failing(errno.EACCES))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        "cannot open the folder of people/Maya.md: Permission denied; nothing was written"
    )


def test_a_create_that_fails_removes_every_folder_it_made_and_only_those(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "write", full_disk(writing.TMP_SUFFIX))
    for path in ("people/new/deeper/x.md", "top/x.md", "a/b/c/x.md"):
        with pytest.raises(CannotEdit, match="No space left on device"):
            edit.write(vault, edit.plan_new_note(path, "x"))
    monkeypatch.undo()
    assert sorted(p.name for p in vault.iterdir()) == [".obsidian", "other.md", "people"]
    assert sorted(p.name for p in (vault / "people").iterdir()) == ["Maya.md"]


def test_the_folders_a_create_makes_are_synced_each_in_its_parent(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    synced: list[str] = []
    real_sync = disk.fsync_folder

    def record(fd: int) -> None:
        synced.append(os.path.relpath(fd_path(fd), vault))
        real_sync(fd)

    monkeypatch.setattr(disk, "fsync_folder", record)
    edit.write(vault, edit.plan_new_note("a/b/c/x.md", "x"))
    assert synced == ["a/b/c", ".", "a", "a/b"]


@pytest.mark.parametrize("links", [True, False], ids=["link", "no-links"])
def test_creating_where_the_name_appears_meanwhile_never_overwrites(
    vault: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """Another program creates the note between vaultmem's look and its link() (or, on a
    disk without hard links, its fallback); a longer text would show a partial overwrite."""

    def taken_first() -> None:
        (vault / "people" / "New.md").write_bytes(b"theirs\n")

    monkeypatch.setattr(os, "link", linked_after(taken_first, links=links))
    with pytest.raises(NoteExists) as caught:
        edit.write(vault, edit.plan_new_note("people/New.md", "mine, and longer\n"))
    assert str(caught.value) == (
        "people/New.md exists already; nothing was written. Choose another name."
    )
    monkeypatch.undo()
    assert (vault / "people" / "New.md").read_bytes() == b"theirs\n"
    assert temporaries(vault) == []


def test_a_link_the_disk_refuses_for_another_reason_writes_nothing(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "link", failing(errno.EIO))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, edit.plan_new_note("people/New.md", "x"))
    assert str(caught.value) == (
        "cannot write people/New.md: Input/output error; nothing was written and the note is"
        " unchanged. Free some space or fix the disk, then try again."
    )
    monkeypatch.undo()
    assert not (vault / "people" / "New.md").exists() and temporaries(vault) == []


def test_without_hard_links_a_new_note_gets_an_ordinary_files_mode(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    old_umask = os.umask(0o022)
    try:
        assert edit.write(vault, edit.plan_new_note("people/New.md", "# New\n")) == (
            "people/New.md",
        )
    finally:
        os.umask(old_umask)
    note = vault / "people" / "New.md"
    assert note.read_bytes() == b"# New\n" and note.stat().st_mode & 0o7777 == 0o644
    assert temporaries(vault) == []


def test_without_hard_links_a_failed_create_leaves_no_half_note(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    monkeypatch.setattr(os, "write", full_disk("New.md", short=2))  # a part written, then full
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, edit.plan_new_note("people/New.md", "# New\n"))
    assert str(caught.value) == (
        "cannot write people/New.md: No space left on device; nothing was written and the note"
        " is unchanged. Free some space or fix the disk, then try again."
    )
    monkeypatch.setattr(os, "write", REAL_WRITE)
    monkeypatch.setattr(os, "open", refusing("open", errno.EIO, names=("New.md",)))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, edit.plan_new_note("people/New.md", "# New\n"))
    assert str(caught.value) == (
        "cannot write people/New.md: Input/output error; nothing was written and the note is"
        " unchanged. Free some space or fix the disk, then try again."
    )
    monkeypatch.undo()
    assert sorted(p.name for p in (vault / "people").iterdir()) == ["Maya.md"]


def test_a_temporary_that_cannot_be_removed_is_left_for_cleaning(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "unlink", refusing("unlink", errno.EPERM, ending=writing.TMP_SUFFIX))
    assert edit.write(vault, edit.plan_new_note("people/New.md", "# New\n")) == ("people/New.md",)
    monkeypatch.undo()
    assert (vault / "people" / "New.md").read_bytes() == b"# New\n"
    (stray,) = temporaries(vault)
    assert stray.startswith("people/.New.md.")


def test_each_way_a_note_can_change_under_a_write_is_named_whole(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    note = vault / "people" / "Maya.md"

    def fresh() -> None:
        for name in ("Maya.md", "Real.md"):
            if (vault / "people" / name).is_symlink() or (vault / "people" / name).exists():
                (vault / "people" / name).unlink()
        note.write_bytes(NOTE.encode())

    for what, how in [
        ("replaced", " (it was replaced meanwhile)"),
        ("deleted", " (it was deleted or renamed)"),
        ("a link to itself", " (it was replaced meanwhile)"),
    ]:
        fresh()

        def the_holder_acts(what: str = what) -> None:
            if what == "replaced":  # the same bytes, saved by rename
                (vault / "people" / "new").write_bytes(note.read_bytes())
                (vault / "people" / "new").rename(note)
            elif what == "a link to itself":  # moved, and a symlink left in its place
                note.rename(vault / "people" / "Real.md")
                note.symlink_to("Real.md")
            else:
                note.unlink()

        monkeypatch.setattr(disk, "lock", locked_then(the_holder_acts))
        change = checked(vault)
        with pytest.raises(ChangedOnDisk) as caught:
            edit.write(vault, change)
        assert str(caught.value) == CHANGED.format(how=how), what
        monkeypatch.undo()
    assert os.readlink(note) == "Real.md"
    assert (vault / "people" / "Real.md").read_bytes() == NOTE.encode()

    fresh()
    for error, how in [
        (errno.ENOENT, " (it was deleted or renamed)"),
        (errno.ELOOP, " (it was replaced by a symlink)"),
    ]:
        change = checked(vault)
        monkeypatch.setattr(os, "open", refusing("open", error, names=("Maya.md",)))
        with pytest.raises(ChangedOnDisk) as caught:
            edit.write(vault, change)
        monkeypatch.undo()
        assert str(caught.value) == CHANGED.format(how=how)
    change = checked(vault)
    monkeypatch.setattr(os, "open", refusing("open", errno.EACCES, names=("Maya.md",)))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == "cannot open people/Maya.md: Permission denied; nothing was written"
    monkeypatch.undo()

    change = checked(vault)
    (vault / "people").rename(vault / "was")
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(how=" (its folder was deleted or renamed)")
    (vault / "was").rename(vault / "people")
    assert note.read_bytes() == NOTE.encode() and temporaries(vault) == []


def test_the_last_look_and_a_retargeted_link_are_named_whole(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = vault / "people" / "Maya.md"

    def obsidian_saves_meanwhile() -> None:
        note.write_bytes(b"typed meanwhile\n")

    change = checked(vault)
    monkeypatch.setattr(os, "fsync", synced_then(writing.TMP_SUFFIX, obsidian_saves_meanwhile))
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(how=" (while the new version was being written)")
    monkeypatch.undo()
    note.write_bytes(NOTE.encode())
    (vault / "Maya.md").symlink_to("people/Maya.md")
    (vault / "Copy.md").write_bytes(NOTE.encode())
    change = checked(vault, "Maya.md")
    (vault / "Maya.md").unlink()
    (vault / "Maya.md").symlink_to("Copy.md")
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(
        how=" (its symlink now leads to another file)"
    ).replace("people/Maya.md", "Maya.md", 1)


def test_read_only_and_hard_linked_notes_are_refused_whole(vault: Path) -> None:
    note = vault / "people" / "Maya.md"
    change = checked(vault)
    note.chmod(0o444)
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        "people/Maya.md is read-only (mode 0444); nothing was written. Make it writable"
        " yourself if you want vaultmem to change it."
    )
    note.chmod(0o644)
    (vault / "people").chmod(0o555)
    try:
        with pytest.raises(CannotEdit) as caught:
            edit.write(vault, change)
    finally:
        (vault / "people").chmod(0o755)
    assert str(caught.value) == (
        "the folder of people/Maya.md is read-only (mode 0555); nothing was written. Make it"
        " writable yourself if you want vaultmem to change files in it."
    )
    os.link(note, vault / "twin.md")
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        "people/Maya.md has 2 hard links; writing it would split it from the others, so"
        " nothing was written (a `vaultmem trash` of it cut short leaves its second name in"
        " .trash/: run that again to finish the move)"
    )


def test_a_write_waits_for_another_writers_lock_and_gives_up_in_time(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import disk

    note = vault / "people" / "Maya.md"
    change = checked(vault)
    with lock_held(note) as holder:
        monkeypatch.setattr(disk, "LOCK_WAIT_S", 0.2)
        with pytest.raises(CannotEdit) as caught:
            edit.write(vault, change)
        assert str(caught.value) == (
            "people/Maya.md is being changed by another vaultmem process; nothing was written."
            " Try again in a moment."
        )
        released = release_once_waited_for(monkeypatch, holder)
        assert edit.write(vault, change) == ("people/Maya.md",)
        slept = released()
    assert slept and set(slept) == {0.01}  # polls the lock, it does not sleep the wait away
    assert "✅ 2026-11-30" in note.read_text()


def test_a_file_system_without_locks_still_writes(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    monkeypatch.setattr(fcntl, "flock", failing(errno.ENOLCK))
    assert edit.write(vault, checked(vault)) == ("people/Maya.md",)


def test_a_write_interrupted_midway_removes_its_temporary(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int, data: bytes | memoryview) -> int:
        if fd_path(fd).endswith(writing.TMP_SUFFIX):
            raise KeyboardInterrupt
        return REAL_WRITE(fd, data)

    change = checked(vault)
    monkeypatch.setattr(os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        edit.write(vault, change)
    monkeypatch.undo()
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()
    assert temporaries(vault) == []

    monkeypatch.setattr(os, "write", full_disk(writing.TMP_SUFFIX))
    with pytest.raises(CannotEdit) as caught:
        edit.write(vault, change)
    assert str(caught.value) == (
        "cannot write people/Maya.md: No space left on device; nothing was written and the note"
        " is unchanged. Free some space or fix the disk, then try again."
    )


def test_a_note_root_cannot_give_back_becomes_the_writers(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can make a note another user's to begin with")
    note = vault / "people" / "Maya.md"
    os.chown(note, 65534, 65534)

    monkeypatch.setattr(os, "fchown", failing(errno.EPERM))
    assert edit.write(vault, checked(vault)) == ("people/Maya.md",)
    assert note.stat().st_uid == os.geteuid()


def _ordered_listing(monkeypatch: pytest.MonkeyPatch, first: list[str]) -> None:
    """os.listdir answering with `first` before the folder's real names."""
    real = os.listdir

    def listing(path: object = ".") -> list[str]:
        names = real(path)  # type: ignore[call-overload]
        return first + sorted(n for n in names if n not in first)

    monkeypatch.setattr(os, "listdir", listing)


def test_cleaning_goes_on_past_every_temporary_it_leaves(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = 2**22 + 12345
    folder = vault / "people"
    stale = folder / f".z.md.{dead}.0123abcd.vaultmem-tmp"
    live = folder / f".a.md.{os.getpid()}.0123abcd.vaultmem-tmp"
    link = folder / f".b.md.{dead}.0123abcd.vaultmem-tmp"
    ghost = f".c.md.{dead}.0123abcd.vaultmem-tmp"  # listed, then gone before its look
    vanishing = folder / f".d.md.{dead}.0123abcd.vaultmem-tmp"  # gone before its removal
    for path in (stale, live, vanishing):
        path.write_text("x")
    link.symlink_to("Maya.md")
    _ordered_listing(monkeypatch, [ghost, live.name, link.name, vanishing.name])

    def unlink(name: str, *, dir_fd: int | None = None) -> None:
        if name == vanishing.name:
            REAL_UNLINK(name, dir_fd=dir_fd)
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        REAL_UNLINK(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", unlink)
    assert edit.clean_temporaries(vault, folder="people") == (f"people/{stale.name}",)
    monkeypatch.undo()
    assert live.exists() and link.is_symlink() and not stale.exists()


def test_a_temporary_is_stale_only_after_a_whole_hour(vault: Path) -> None:
    live = vault / f".n.md.{os.getpid()}.0123abcd.vaultmem-tmp"
    old_style = vault / ".o.md.vaultmem-tmp"  # older versions wrote no pid
    for path in (live, old_style):
        path.write_text("x")
        os.utime(path, (1_800_000_000, 1_800_000_000))
    hour = dt.datetime.fromtimestamp(1_800_000_000 + 3600, dt.UTC)
    assert edit.clean_temporaries(vault, now=hour) == ()
    later = hour + dt.timedelta(seconds=1)
    assert edit.clean_temporaries(vault, now=later) == tuple(sorted([live.name, old_style.name]))


def test_cleaning_leaves_a_running_writers_temporary_and_the_writer_alone(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = subprocess.Popen(["sleep", "600"])
    signals: list[int] = []
    real_kill = os.kill

    def kill(pid: int, sig: int) -> None:
        signals.append(sig)
        real_kill(pid, sig)

    try:
        theirs = vault / f".n.md.{proc.pid}.0123abcd.vaultmem-tmp"
        theirs.write_text("being written")
        monkeypatch.setattr(os, "kill", kill)
        assert edit.clean_temporaries(vault) == ()
        monkeypatch.undo()
        assert signals == [0]  # asked whether it lives, not signalled
        assert proc.poll() is None
        assert theirs.exists()

        monkeypatch.setattr(os, "kill", failing(errno.EPERM))  # another user's process
        assert edit.clean_temporaries(vault) == ()
        assert theirs.exists()
    finally:
        monkeypatch.undo()
        proc.kill()
        proc.wait()


def test_cleaning_walks_the_vault_but_not_git_nor_symlinked_folders(
    vault: Path, tmp_path: Path
) -> None:
    dead = 2**22 + 12345
    name = f".x.md.{dead}.0123abcd.vaultmem-tmp"
    (vault / "a" / "b").mkdir(parents=True)
    (vault / ".git").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "linked").symlink_to(outside)
    for folder in (vault / "a" / "b", vault / ".git", outside):
        (folder / name).write_text("x")
    assert edit.clean_temporaries(vault) == (f"a/b/{name}",)
    assert (vault / ".git" / name).exists() and (outside / name).exists()


def test_every_date_and_time_token_of_a_template() -> None:
    when = dt.datetime(2026, 3, 4, 7, 8, 9)
    pattern = "YYYY YY MMMM MMM MM M DD D dddd ddd HH H hh h mm ss A a [at YYYY] x"
    assert edit.render_template(f"{{{{date:{pattern}}}}}", title="t", now=when) == (
        "2026 26 March Mar 03 3 04 4 Wednesday Wed 07 7 07 7 08 09 AM am at YYYY x"
    )
    for hour, twelve in [(0, "12 12 AM am"), (12, "12 12 PM pm"), (13, "01 1 PM pm")]:
        at = dt.datetime(2026, 3, 4, hour, 0)
        assert edit.render_template("{{date:hh h A a}}", title="t", now=at) == twelve
    assert edit.render_template("{{date:YY}}", title="t", now=dt.datetime(2005, 1, 1)) == "05"


def test_template_placeholders_in_any_case_and_spacing() -> None:
    when = dt.datetime(2026, 11, 30, 9, 5)
    template = "{{ TITLE }}|{{Date}}|{{ time }}|{{date:}}|{{date: }}|{{time:HH}}|{{other}}|{{title"
    assert edit.render_template(template, title="Ana", now=when) == (
        "Ana|2026-11-30|09:05|2026-11-30|2026-11-30|09|{{other}}|{{title"
    )
    with pytest.raises(EditDoesNotApply) as caught:
        edit.render_template("{{title}}", title="two\nlines", now=when)
    assert str(caught.value) == "a note title must be one line; it holds a line break"


def test_a_template_notes_title_is_its_file_name() -> None:
    when = dt.datetime(2026, 11, 30, 9, 5)
    change = edit.plan_note_from_template("people/Ana Diaz.MD", "# {{title}}\n", now=when)
    assert change == edit.Change("people/Ana Diaz.MD", "people/Ana Diaz.MD", None, b"# Ana Diaz\n")


def test_a_temporary_name_already_taken_is_never_written_into(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leftover file under the very name a write picks (same pid, same random token): the
    write fails rather than write into it, which would leave the leftover's tail in the note."""
    from vaultmem.edit import disk

    monkeypatch.setattr(disk.secrets, "token_hex", lambda n: "0123abcd")
    taken = vault / "people" / f".Maya.md.{os.getpid()}.0123abcd.vaultmem-tmp"
    taken.write_bytes(b"a much longer leftover than the note will ever be" * 10)
    change = checked(vault)
    with pytest.raises(CannotEdit, match=r"^cannot write people/Maya\.md: File exists;"):
        edit.write(vault, change)
    assert (vault / "people" / "Maya.md").read_bytes() == NOTE.encode()


def test_undoing_a_failed_create_never_follows_a_folder_swapped_for_a_symlink(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)

    def swap() -> None:  # the folders are made: another program swaps one
        made = vault / "people" / "new"
        made.rename(vault / "people" / "moved")
        made.symlink_to(outside)

    monkeypatch.setattr(os, "write", full_disk(writing.TMP_SUFFIX, first=swap))
    with pytest.raises(CannotEdit, match="No space left on device"):
        edit.write(vault, edit.plan_new_note("people/new/deeper/x.md", "x"))
    monkeypatch.undo()
    assert (outside / "deeper").is_dir()  # the empty folder outside the vault is left alone

    (outside / "b" / "c").mkdir(parents=True)  # the top folder it made swapped, two below it

    def swap_top() -> None:
        (vault / "a").rename(vault / "a-moved")
        (vault / "a").symlink_to(outside)

    monkeypatch.setattr(os, "write", full_disk(writing.TMP_SUFFIX, first=swap_top))
    with pytest.raises(CannotEdit, match="No space left on device"):
        edit.write(vault, edit.plan_new_note("a/b/c/x.md", "x"))
    monkeypatch.undo()
    assert (outside / "b" / "c").is_dir()


def test_a_note_deleted_while_its_new_version_is_written_is_named_whole(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = vault / "people" / "Maya.md"
    change = checked(vault)
    monkeypatch.setattr(os, "fsync", synced_then(writing.TMP_SUFFIX, note.unlink))
    with pytest.raises(ChangedOnDisk) as caught:
        edit.write(vault, change)
    assert str(caught.value) == CHANGED.format(how=" (it was deleted or renamed)")
    monkeypatch.undo()
    assert not note.exists() and temporaries(vault) == []


def test_a_folder_a_create_cannot_make_is_named_whole(vault: Path) -> None:
    (vault / "people").chmod(0o555)
    try:
        with pytest.raises(CannotEdit) as caught:
            edit.write(vault, edit.plan_new_note("people/new/x.md", "x"))
    finally:
        (vault / "people").chmod(0o755)
    assert str(caught.value) == (
        "cannot write people/new/x.md: its folder is read-only (read-only folder); nothing was"
        " written"
    )
