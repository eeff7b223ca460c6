"""The trash: moves keep the relative path and never replace anything; the log may be lost."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, SHARED_DATA
from tests.edit.conftest import child, snapshot, wait_for
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

    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
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


TRASH_RACE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.model import content_digest as digest
    from vaultmem.errors import ChangedOnDisk
    root, go, ready = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    held = digest((root / "people/Maya.md").read_bytes())
    ready.write_text("ready")
    give_up = time.monotonic() + 600  # never spin on after the test is gone
    while not go.exists():
        if time.monotonic() > give_up:
            sys.exit(99)
        time.sleep(0.001)
    try:
        edit.move_to_trash(root, "people/Maya.md", held)
    except ChangedOnDisk:
        sys.exit(6)
    """
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
