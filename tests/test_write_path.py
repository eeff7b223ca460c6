"""The write path's hostile cases end to end (vault.apply, the trash, the CLI): two writers at
once, a crash between the temporary file and the rename, other encodings, symlinks, read-only
notes; and the vaults that must stay byte-identical through every read command and through a
trash and restore round trip."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLE_VAULT, SHARED_DATA, MakeVault
from tests.edit.conftest import READY_THEN_GO, child, snapshot, wait_for, without_override
from tests.test_writer import fresh_dump, index_dump
from vaultmem import edit
from vaultmem.cli import cli
from vaultmem.errors import CannotEdit
from vaultmem.vault import Vault

KEPANO = SHARED_DATA / "vaults" / "kepano-obsidian"

# A child that reads the note, says so, waits for the go, then applies its own edit.
APPLY_RACE = (
    textwrap.dedent(
        """
    import sys, time
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.errors import ChangedOnDisk
    from vaultmem.vault import Vault
    root, go, ready, text = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    vault = Vault(root)
    source = vault.read_for_edit("people/Maya.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 2, text))
    """
    )
    + READY_THEN_GO
    + textwrap.dedent(
        """
    try:
        vault.apply(change, wait=120)
    except ChangedOnDisk:
        sys.exit(6)
    """
    )
)


def test_two_processes_applying_at_once_one_wins_and_the_index_is_consistent(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"people/Maya.md": "# Maya\nlikes tea\n", "a.md": "[[Maya]]\n"})
    vault.reindex(embed=False)
    for round_ in range(3):
        go = tmp_path / f"go-{round_}"
        ready = [tmp_path / f"ready-{round_}-{n}" for n in (1, 2)]
        procs = [
            child(APPLY_RACE, str(vault.root), str(go), str(r), f"writer {n} round {round_}")
            for n, r in enumerate(ready, 1)
        ]
        wait_for(lambda r=ready: all(f.exists() for f in r), "both to have read the note")
        go.touch()
        codes = [p.wait(timeout=300) for p in procs]
        assert sorted(codes) == [0, 6], [p.communicate()[1] for p in procs]
        winner = codes.index(0) + 1
        text = (vault.root / "people/Maya.md").read_text()
        assert text == f"# Maya\nwriter {winner} round {round_}\n"  # whole, never interleaved
        hits = vault.search(f"writer {winner}", mode="keyword").hits
        assert [h.path for h in hits] == ["people/Maya.md"]
        assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    assert not [p for p in (vault.root / "people").iterdir() if edit.is_temporary(p.name)]


WRITE_LOOP = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.vault import Vault
    vault = Vault(Path(sys.argv[1]))
    for n in range(int(sys.argv[2])):
        vault.apply(edit.plan_new_note(f"new/n{n}.md", f"# N{n}\\n[[a]] [[n{n + 1}]]\\n"), wait=300)
        source = vault.read_for_edit("a.md")
        vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, f"round {n}")))
    """
)


def test_a_writer_and_reindexes_at_once_never_interleave(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    """A writing process (creating notes whose links resolve each other) while this one runs
    reindexes: each waits for the other's lock, and the index ends as a fresh rebuild."""
    vault = make_vault({"a.md": "start\n"})
    vault.reindex(embed=False)
    writer = child(WRITE_LOOP, str(vault.root), "15")
    while writer.poll() is None:
        vault.reindex(embed=False, wait=300)
    assert writer.returncode == 0, writer.communicate()[1]
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    assert vault.reindex(embed=False).changed == 0  # the writer left the index current
    assert (vault.root / "a.md").read_text() == "round 14\n"


CRASH_AT_RENAME = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.vault import Vault
    vault = Vault(Path(sys.argv[1]))
    source = vault.read_for_edit("a.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "the new text"))
    real_rename = os.rename
    def rename(src, dst, **kw):
        if str(src).endswith(".vaultmem-tmp"):
            os.kill(os.getpid(), signal.SIGKILL)  # the crash: temporary file written, not renamed
        return real_rename(src, dst, **kw)
    os.rename = rename
    vault.apply(change)
    """
)


def test_a_crash_between_the_temporary_file_and_the_rename(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"a.md": "the old text\n", "b.md": "[[a]]\n"})
    vault.reindex(embed=False)
    proc = child(CRASH_AT_RENAME, str(vault.root))
    assert proc.wait(timeout=300) == -signal.SIGKILL, proc.communicate()[1]
    assert (vault.root / "a.md").read_text() == "the old text\n"  # never half a note
    stray = [p.name for p in vault.root.iterdir() if edit.is_temporary(p.name)]
    assert len(stray) == 1 and stray[0].startswith(".a.md.")
    report = vault.reindex(embed=False, wait=30)  # the dead process's lock is gone with it
    assert report.changed == 0 and report.skipped == 0  # the temporary is never a note
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    source = vault.read_for_edit("a.md")  # the next write goes through, and cleans up
    vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "after")))
    assert vault.search("after", mode="keyword").hits
    assert not [p.name for p in vault.root.iterdir() if edit.is_temporary(p.name)]


@pytest.mark.parametrize(
    ("codec", "bom"),
    [
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("cp1252", b""),
        ("utf-8", b"\xef\xbb\xbf"),
    ],
)
def test_a_note_in_another_encoding_is_edited_in_it_and_reindexed(
    make_vault: MakeVault, tmp_path: Path, codec: str, bom: bytes
) -> None:
    original = bom + "Caf\xe9 notes\r\nprice: 3\r\n".encode(codec)
    vault = make_vault({"cafe.md": original, "b.md": "[[cafe]]\n"})
    vault.reindex(embed=False)
    source = vault.read_for_edit("cafe.md")
    vault.apply(
        edit.plan_edit(source, edit.replace_line(source.lines, 2, "price: 4 \xe0 la carte"))
    )
    assert (vault.root / "cafe.md").read_bytes() == bom + (
        "Caf\xe9 notes\r\nprice: 4 \xe0 la carte\r\n".encode(codec)
    )
    assert [h.path for h in vault.search("carte", mode="keyword").hits] == ["cafe.md"]
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    if codec == "cp1252":  # a character the encoding lacks: refused, never converted
        source = vault.read_for_edit("cafe.md")
        with pytest.raises(CannotEdit, match="Windows-1252"):
            edit.plan_edit(source, edit.replace_line(source.lines, 1, "\u2705 done"))
        assert (vault.root / "cafe.md").read_bytes().startswith(b"Caf\xe9 notes")


def test_a_symlinked_note_is_written_through_and_both_paths_reindexed(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"real/a.md": "one\n", "b.md": "[[a]] [[link]]\n"})
    (vault.root / "link.md").symlink_to("real/a.md")
    vault.reindex(embed=False)
    source = vault.read_for_edit("link.md")
    applied = vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "two")))
    assert applied.touched == ("link.md", "real/a.md")
    assert (vault.root / "link.md").is_symlink()
    assert (vault.root / "real/a.md").read_text() == "two\n"
    assert sorted(h.path for h in vault.search("two", mode="keyword").hits) == [
        "link.md",
        "real/a.md",
    ]
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")


READ_ONLY_APPLY = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vaultmem import edit
    from vaultmem.errors import CannotEdit
    from vaultmem.vault import Vault
    vault = Vault(Path(sys.argv[1]))
    source = vault.read_for_edit(sys.argv[2])
    try:
        vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "changed")))
    except CannotEdit as exc:
        print(exc)
        sys.exit(exc.exit_code)
    """
)


@pytest.mark.parametrize("case", ["note-0444", "others-note", "folder-0555"])
def test_a_read_only_note_or_folder_is_refused_without_roots_override(
    make_vault: MakeVault, case: str
) -> None:
    prefix = without_override()
    vault = make_vault({"ro/a.md": "original\n"})
    vault.reindex(embed=False)
    note, folder = vault.root / "ro/a.md", vault.root / "ro"
    if case == "note-0444":
        note.chmod(0o444)
    elif case == "others-note":
        os.chown(note, 12345, 12345)  # 0644 and someone else's: readable, not writable
    else:
        folder.chmod(0o555)
    before = snapshot(vault.root)
    try:
        proc = child(READ_ONLY_APPLY, str(vault.root), "ro/a.md", prefix=prefix)
        out, err = proc.communicate(timeout=300)
    finally:
        folder.chmod(0o755)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "nothing was written" in out
    folder.chmod(0o555 if case == "folder-0555" else 0o755)
    assert snapshot(vault.root) == before
    folder.chmod(0o755)


# --------------------------------------------------------------------------- byte-identical


def read_commands(first_note: str, second_note: str) -> list[list[str]]:
    return [
        ["reindex", "--json"],  # the index lives outside the vault
        ["stats", "--json"],
        ["doctor", "--json"],
        ["search", "notes", "--mode", "keyword", "--json"],
        ["search", "what happened yesterday", "--json"],
        ["show", first_note, "--json"],
        ["get", first_note, "--json"],
        ["backlinks", first_note, "--json"],
        ["graph", "path", first_note, second_note, "--json"],
        ["graph", "neighbors", first_note, "--json"],
        ["graph", "clusters", "--json"],
        ["graph", "cycles", "--json"],
        ["graph", "fragile", "--json"],
        ["gaps", "--json"],
        ["gaps", "fix-aliases", "--dry-run"],
        ["persona", "list", "--json"],
        ["trash", "list", "--json"],
        ["reindex", "--json"],  # again: now incremental
    ]


def run_cli(root: Path, index: Path, *args: str) -> int:
    result = CliRunner().invoke(
        cli, ["--vault", str(root), "--index", str(index), "--embedder", "fake", *args]
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        from vaultmem.errors import VaultmemError

        assert isinstance(result.exception, VaultmemError), result.exception
        return result.exception.exit_code
    return result.exit_code


def notes_of(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def check_read_commands_leave(root: Path, index: Path) -> None:
    before = snapshot(root)
    notes = notes_of(root)
    for args in read_commands(notes[0], notes[-1]):
        assert run_cli(root, index, *args) in (0, 1), args
    assert snapshot(root) == before


def check_trash_round_trip(root: Path, index: Path, tmp_path: Path, paths: list[str]) -> None:
    vault = Vault(root, index)
    ignore = (".trash", ".vaultmem")
    before = {k: v for k, v in snapshot(root).items() if not k.startswith(ignore)}
    expected_index = index_dump(vault.conn)
    for path in paths:
        assert run_cli(root, index, "trash", "move", path, "--json") == 0, path
    assert {e.original for e in vault.list_trash()} == set(paths)
    for entry in vault.list_trash():
        assert run_cli(root, index, "restore", entry.path, "--json") == 0, entry.path
    after = {k: v for k, v in snapshot(root).items() if not k.startswith(ignore)}
    # the same bytes, modes and inodes: the very files came back, not copies
    assert after == before
    assert list((root / ".trash").iterdir()) == []
    dumped = index_dump(vault.conn)
    assert dumped == fresh_dump(vault, tmp_path / "fresh.db")
    # restoring changes only the ctime; size, mtime and every derived row are as before
    assert dumped == expected_index
    vault.close()


def test_the_sample_vault_is_byte_identical_through_reads_and_a_trash_round_trip(
    tmp_path: Path,
) -> None:
    index = tmp_path / "index.db"
    check_read_commands_leave(SAMPLE_VAULT, index)  # the repository's own copy
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE_VAULT, root, symlinks=True, ignore=shutil.ignore_patterns(".vaultmem"))
    copy_index = tmp_path / "copy.db"
    Vault(root, copy_index).reindex(embed=False)
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    check_trash_round_trip(root, copy_index, tmp_path, files)


def test_the_kepano_vault_is_byte_identical_through_reads_and_a_trash_round_trip(
    tmp_path: Path,
) -> None:
    if not KEPANO.is_dir():
        pytest.skip(f"shared data missing: {KEPANO}")
    check_read_commands_leave(KEPANO, tmp_path / "index.db")  # the shared copy, in place
    root = tmp_path / "kepano"
    shutil.copytree(KEPANO, root, symlinks=True)
    for path in [root, *root.rglob("*")]:  # the shared copy is read-only; a vault is not
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    copy_index = tmp_path / "copy.db"
    Vault(root, copy_index).reindex(embed=False)
    notes = notes_of(root)
    check_trash_round_trip(root, copy_index, tmp_path, notes[:: max(1, len(notes) // 40)])


def test_the_cli_runs_a_subprocess_write_with_exit_6(make_vault: MakeVault) -> None:
    """Exit code 6 as a process sees it: a note changed since the revision a write holds."""
    vault = make_vault({"a.md": "x\n"})
    vault.reindex(embed=False)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from vaultmem.cli import root\n"
        "from vaultmem.vault import Vault\n"
        "from vaultmem import edit\n"
        "VAULT = sys.argv[1]\n"
        "stale = Vault(Path(VAULT)).read_for_edit('a.md').digest\n"
        "Path(VAULT, 'a.md').write_text('changed\\n')\n"
        "sys.argv = ['vaultmem', '--vault', VAULT, 'trash', 'a.md']\n"
        "orig = Vault.trash\n"
        "def trash(self, path, **kw):\n"
        "    return orig(self, path, **{**kw, 'expected_digest': stale})\n"
        "Vault.trash = trash\n"
        "root.main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(vault.root)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 6, result.stderr
    assert "changed on disk since it was read; nothing was written" in result.stderr
    assert (vault.root / "a.md").read_text() == "changed\n"
