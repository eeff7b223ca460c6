"""Reading a note for editing: once, inside the vault, regular files only, digest as indexed."""

from __future__ import annotations

import codecs
import errno
import os
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultmem import store
from vaultmem.edit import disk, read_note
from vaultmem.edit.text import Line
from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteNotFound


def test_the_digest_is_the_one_the_index_stores(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "a.md": "# A\r\nline\r\n",
            "b.md": codecs.BOM_UTF16_LE + "# B\n".encode("utf-16-le"),
            "c.md": "caf\xe9 \x80\n".encode("latin-1"),
        }
    )
    vault.reindex()
    for path in ("a.md", "b.md", "c.md"):
        assert read_note(vault.root, path).digest == store.note_digest(vault.conn, path)


def test_lines_encoding_and_final_newline_as_found(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_bytes(codecs.BOM_UTF8 + b"a\r\nb\x00c\rd")
    source = read_note(tmp_path, "n.md")
    assert source.encoding == "utf-8-bom"
    assert source.lines == (Line("a", "\r\n"), Line("b\x00c", "\r"), Line("d", ""))
    assert not source.ends_with_newline
    assert source.render() == (tmp_path / "n.md").read_bytes()
    assert (source.path, source.file) == ("n.md", "n.md")


def test_an_empty_note(tmp_path: Path) -> None:
    (tmp_path / "e.md").write_bytes(b"")
    source = read_note(tmp_path, "e.md")
    assert source.lines == () and not source.ends_with_newline and source.render() == b""


def test_a_missing_note(tmp_path: Path) -> None:
    with pytest.raises(NoteNotFound, match=r"gone\.md does not exist"):
        read_note(tmp_path, "gone.md")
    with pytest.raises(NoteNotFound):
        read_note(tmp_path, "no/such/folder.md")


def test_a_digest_that_no_longer_matches(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("new text\n")
    with pytest.raises(ChangedOnDisk, match=r"n\.md changed on disk since it was read"):
        read_note(tmp_path, "n.md", expected_digest="0" * 32)
    assert ChangedOnDisk.exit_code == 6


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x.md", "a/../../x.md", "a//b.md", "", "a\x00"])
def test_paths_that_are_not_inside_the_vault_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(CannotEdit, match="not a path inside the vault"):
        read_note(tmp_path, bad)


def test_a_symlink_out_of_the_vault_is_refused(tmp_path: Path) -> None:
    vault, outside = tmp_path / "v", tmp_path / "secret.md"
    vault.mkdir()
    outside.write_text("secret\n")
    (vault / "link.md").symlink_to(outside)
    with pytest.raises(CannotEdit, match="leads outside the vault"):
        read_note(vault, "link.md")
    (vault / "folder").symlink_to(tmp_path)
    with pytest.raises(CannotEdit, match="leads outside the vault"):
        read_note(vault, "folder/secret.md")


def test_a_symlink_inside_the_vault_reads_its_target(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "real.md").write_text("real\n")
    (tmp_path / "alias.md").symlink_to("notes/real.md")
    source = read_note(tmp_path, "alias.md")
    assert (source.path, source.file, source.lines) == (
        "alias.md",
        "notes/real.md",
        (Line("real"),),
    )


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(CannotEdit, match="is a FIFO"):
        read_note(tmp_path, "pipe.md")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(CannotEdit, match="is a folder"):
        read_note(tmp_path, "dir.md")


def test_a_device_is_refused(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "null.md", 0o600 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("this machine does not allow creating a device node (no CAP_MKNOD)")
    with pytest.raises(CannotEdit, match="is a character device"):
        read_note(tmp_path, "null.md")


def test_a_note_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_bytes(b"x" * 2048)
    with pytest.raises(CannotEdit, match="raise max_file_mb"):
        read_note(tmp_path, "big.md", max_bytes=1024)
    assert len(read_note(tmp_path, "big.md", max_bytes=2048).lines) == 1


def test_broken_utf16_is_refused_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "u.md").write_bytes(codecs.BOM_UTF16_LE + b"a\x00b")
    with pytest.raises(CannotEdit, match="not valid UTF-16"):
        read_note(tmp_path, "u.md")


def test_a_folder_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    """The check-then-open race: once resolved, every folder is opened without following."""
    (tmp_path / "v" / "real").mkdir(parents=True)
    (tmp_path / "v" / "swapped").symlink_to(tmp_path / "v" / "real")
    with disk.open_root(tmp_path / "v") as root_fd, pytest.raises(OSError) as caught:
        disk.open_folder(root_fd, ("swapped",))
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
