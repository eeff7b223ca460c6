"""A socket, a FIFO (or a device) where a note should be: every command names what it is, says it
skipped or refused it and what to do, and none blocks on the FIFO.

Each command runs as its own process with a deadline: a command that opened the FIFO would wait
for a writer forever, and the test must fail on that rather than hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import bind_socket
from vaultmem.vault import Vault

DEADLINE_S = 300  # a deadline, not a wait: generous for a loaded machine

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="binds the socket through /proc (Linux)"
)


def _vaultmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A vault with two notes, a socket and a FIFO named like notes."""
    folder = tmp_path / "vault"
    (folder / ".obsidian").mkdir(parents=True)
    (folder / "ok.md").write_text("# OK\nlinks to [[other]]\n")
    (folder / "other.md").write_text("# Other\nplain\n")
    bind_socket(folder / "sock.md")
    os.mkfifo(folder / "pipe.md")
    return folder


def test_reindex_skips_a_socket_and_a_fifo_saying_what_they_are_and_indexes_the_rest(
    root: Path,
) -> None:
    done = _vaultmem(root, "reindex", "--no-embed")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2 notes, 0 attachments: 2 changed")
    assert "2 skipped" in done.stdout
    assert (
        "skipped pipe.md: a named pipe (FIFO), not a note file; vaultmem reads only regular"
        " files (move it out of the vault, or add it to `exclude` in .vaultmem/config.toml)"
    ) in done.stderr
    assert "skipped sock.md: a socket, not a note file; vaultmem reads only regular" in done.stderr
    doctor = _vaultmem(root, "doctor")
    assert "sock.md: a socket, not a note file; vaultmem reads only regular files" in doctor.stdout
    assert "pipe.md: a named pipe (FIFO), not a note file" in doctor.stdout
    found = _vaultmem(root, "search", "plain", "--mode", "keyword")
    assert "other.md" in found.stdout


def test_init_names_the_files_it_skipped_too(root: Path) -> None:
    done = _vaultmem(root, "init")
    assert done.returncode == 0, done.stderr
    assert "skipped sock.md: a socket, not a note file" in done.stderr
    assert "skipped pipe.md: a named pipe (FIFO), not a note file" in done.stderr


def test_a_long_list_of_skipped_files_is_cut_with_where_to_see_it(root: Path) -> None:
    for n in range(6):
        os.mkfifo(root / f"pipe{n}.md")
    done = _vaultmem(root, "reindex", "--no-embed")
    said = [line for line in done.stderr.splitlines() if line.startswith("skipped ")]
    assert len(said) == 5
    assert done.stderr.splitlines()[-1] == "... and 3 more files: `vaultmem doctor` lists them"


@pytest.mark.parametrize(("name", "kind"), [("sock", "a socket"), ("pipe", "a named pipe (FIFO)")])
def test_show_and_get_refuse_a_skipped_special_file_with_its_reason(
    root: Path, name: str, kind: str
) -> None:
    _vaultmem(root, "reindex", "--no-embed")
    for command in ("show", "get"):
        done = _vaultmem(root, command, f"{name}.md")
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr == (
            f"error: '{name}.md' is not indexed: the last reindex skipped it ({kind}, not a note"
            " file; vaultmem reads only regular files (move it out of the vault, or add it to"
            " `exclude` in .vaultmem/config.toml))\n"
        ), command


def _replaced(root: Path, name: str) -> None:
    """Index `note.md` as a note, then put a socket or a FIFO in its place."""
    (root / "note.md").write_text("# Note\n- [ ] a loop\nkey:: old\n")
    done = _vaultmem(root, "reindex", "--no-embed")
    assert done.returncode == 0, done.stderr
    (root / "note.md").unlink()
    if name == "sock":
        bind_socket(root / "note.md")
    else:
        os.mkfifo(root / "note.md")


@pytest.mark.parametrize(("name", "kind"), [("sock", "a socket"), ("pipe", "a FIFO (named pipe)")])
def test_editing_a_note_replaced_by_a_special_file_refuses_naming_it(
    root: Path, name: str, kind: str
) -> None:
    _replaced(root, name)
    for args in (("fact", "set", "note", "key", "new"), ("loop", "add", "x", "--note", "note")):
        done = _vaultmem(root, *args)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr == (
            f"error: note.md is {kind}, not a note file; vaultmem edits only regular files, so"
            " nothing was changed (move it out of the vault, then run `vaultmem reindex`)\n"
        ), args


@pytest.mark.parametrize(("name", "kind"), [("sock", "a socket"), ("pipe", "a FIFO (named pipe)")])
def test_trashing_a_special_file_refuses_naming_it(root: Path, name: str, kind: str) -> None:
    _replaced(root, name)
    done = _vaultmem(root, "trash", "note.md")
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"error: note.md is {kind}, not a note or attachment; vaultmem moves only regular files,"
        " so nothing was moved (move it out of the vault yourself, then run `vaultmem reindex`)\n"
    )
    assert os.path.lexists(root / "note.md")


@pytest.mark.parametrize("name", ["sock", "pipe"])
def test_reading_a_note_replaced_by_a_special_file_says_what_it_is(root: Path, name: str) -> None:
    _replaced(root, name)
    kind = "a socket" if name == "sock" else "a named pipe (FIFO)"
    done = _vaultmem(root, "get", "note")
    assert done.returncode == 1, done.stderr
    assert f"note.md: {kind}, not a note file; vaultmem reads only regular files" in done.stderr


def test_a_write_that_finds_a_socket_in_place_of_the_note_says_it_changed(
    tmp_path: Path,
) -> None:
    from vaultmem import edit
    from vaultmem.errors import ChangedOnDisk

    (tmp_path / "n.md").write_text("x\n")
    source = edit.read_note(tmp_path, "n.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "y"))
    (tmp_path / "n.md").unlink()
    bind_socket(tmp_path / "n.md")
    with pytest.raises(
        ChangedOnDisk, match=r"^n\.md changed on disk .*\(it was replaced by a socket\)"
    ):
        edit.write(tmp_path, change)


def test_the_vault_api_skips_them_too(root: Path) -> None:
    vault = Vault(root)
    report = vault.reindex(embed=False)
    assert (report.notes, report.skipped) == (2, 2)
    reasons = dict(vault.doctor().skipped)
    assert reasons["sock.md"].startswith("a socket, not a note file")
