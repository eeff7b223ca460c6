"""Reading a note for editing: once, inside the vault, regular files only, digest as indexed."""

from __future__ import annotations

import codecs
import errno
import os
from pathlib import Path

import pytest

from tests.conftest import MakeVault, bind_socket, failing, fd_path, refusing
from vaultmem import store
from vaultmem.edit import disk, read_note
from vaultmem.edit.text import Line
from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteNotFound
from vaultmem.model import content_digest


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


def test_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    # it was "changed while it was read; try again", which no second try changes
    from vaultmem.edit.trash import current_digest

    (tmp_path / "self.md").symlink_to("self.md")
    (tmp_path / "a.md").symlink_to("b.md")
    (tmp_path / "b.md").symlink_to("a.md")
    for path in ("self.md", "a.md"):
        said = f"{path} is a symlink that leads back to itself (a loop), not a note; nothing"
        with pytest.raises(CannotEdit) as info:
            read_note(tmp_path, path)
        assert str(info.value).startswith(said)
        with pytest.raises(CannotEdit) as info:
            current_digest(tmp_path, path)
        assert str(info.value).startswith(said)


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


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/edit/disk.py and reading.py that the tests above let
# through (docs/TESTING.md, "note editor: the rest").


def test_a_vault_folder_whose_name_ends_in_a_space(tmp_path: Path) -> None:
    root = tmp_path / "my vault "
    root.mkdir()
    (root / "n.md").write_bytes(b"x\n")
    assert read_note(root, "n.md").lines == (Line("x", "\n"),)


def test_a_link_out_of_the_vault_is_refused_whole(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "secret.md").write_bytes(b"s")
    (tmp_path / "v" / "out.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(CannotEdit) as caught:
        read_note(tmp_path / "v", "out.md")
    assert str(caught.value) == (
        f"out.md leads outside the vault (a symlink to {tmp_path / 'secret.md'}); vaultmem"
        " changes only files inside the vault"
    )


def test_a_missing_note_is_named_whole_even_below_a_missing_folder(tmp_path: Path) -> None:
    for path in ("gone.md", "nowhere/Café.md"):
        with pytest.raises(NoteNotFound) as caught:
            read_note(tmp_path, path)
        assert str(caught.value) == (
            f"{path} does not exist (deleted or moved?); run `vaultmem reindex` if the index"
            " still lists it"
        )


def test_names_in_another_unicode_form_are_found_at_every_level(tmp_path: Path) -> None:
    import unicodedata

    folder = unicodedata.normalize("NFD", "Café")
    name = unicodedata.normalize("NFD", "Crème.md")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / name).write_bytes(b"x\n")
    nfc = unicodedata.normalize("NFC", "Café/Crème.md")
    assert read_note(tmp_path, nfc).file == f"{folder}/{name}"


def test_a_name_the_index_holds_in_ascii_is_found_in_its_unicode_spelling(
    tmp_path: Path,
) -> None:
    """The KELVIN SIGN is `K` in NFC, as the index names files: the editor must find the
    file the index calls `K.md`."""
    from vaultmem.scan import scan

    (tmp_path / "\u212a.md").write_bytes(b"# Kelvin\n")
    assert [f.path for f in scan(tmp_path).files] == ["K.md"]
    source = read_note(tmp_path, "K.md")
    assert (source.path, source.file) == ("K.md", "\u212a.md")


def test_a_temporary_name_is_the_notes_first_80_bytes_whole_characters_only() -> None:
    import re

    def stem(name: str) -> str:
        made = disk.temporary_name(name)
        m = re.fullmatch(rf"\.(.*)\.{os.getpid()}\.[0-9a-f]{{8}}\.vaultmem-tmp", made, re.DOTALL)
        assert m is not None, made
        return m[1]

    assert stem("n.md") == "n.md"
    assert stem("x" * 100) == "x" * 80
    assert stem("a" + "é" * 50) == "a" + "é" * 39  # byte 80 is half an é: dropped
    assert stem("\udcff.md") == ".md"  # a name whose byte is not UTF-8 (os.fsdecode's escape)


def test_folders_that_cannot_be_synced_are_tolerated_other_failures_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for error in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EIO):
            monkeypatch.setattr(os, "fsync", failing(error))
            if error == errno.EIO:
                with pytest.raises(OSError, match="Input/output error"):
                    disk.fsync_folder(fd)
            else:
                disk.fsync_folder(fd)
    finally:
        os.close(fd)


def test_what_the_system_answers_about_write_access_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root passes every access(2) check, so the system's "no" is played here: the answer
    asked about the note itself and its own folder must refuse."""
    from vaultmem import edit

    (tmp_path / "people").mkdir()
    note = tmp_path / "people" / "n.md"
    note.write_bytes(b"- [ ] x\n")
    denied: set[str] = set()
    real_access = os.access

    def access(path: str, mode: int, *, dir_fd: int | None = None, **kw: object) -> bool:
        where = fd_path(dir_fd) if dir_fd is not None else os.getcwd()
        if os.path.normpath(os.path.join(where, path)) in denied:
            return False
        return real_access(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "access", access)
    source = read_note(tmp_path, "people/n.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "y"))
    denied.add(str(note))
    with pytest.raises(CannotEdit, match=r"^people/n\.md is read-only \(mode 0644\)"):
        edit.write(tmp_path, change)
    denied = {str(tmp_path / "people")}
    with pytest.raises(CannotEdit, match=r"^the folder of people/n\.md is read-only"):
        edit.write(tmp_path, change)
    assert note.read_bytes() == b"- [ ] x\n"


def test_a_note_without_write_bits_is_read_only_whatever_its_other_bits(
    tmp_path: Path,
) -> None:
    from vaultmem import edit

    note = tmp_path / "n.md"
    note.write_bytes(b"x\n")
    source = read_note(tmp_path, "n.md")
    note.chmod(0o555)
    with pytest.raises(CannotEdit, match=r"^n\.md is read-only \(mode 0555\)"):
        edit.write(tmp_path, edit.plan_edit(source, edit.replace_line(source.lines, 1, "y")))


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
        (bind_socket, "a socket"),  # cannot even be opened: refused before trying
        (lambda p: p.mkdir(), "a folder"),
        (lambda p: os.mknod(p, 0o600 | 0o020000, os.makedev(1, 3)), "a character device"),
        (lambda p: os.mknod(p, 0o600 | 0o060000, os.makedev(7, 0)), "a block device"),
    ],
)
def test_what_a_note_path_holds_instead_of_a_file_is_named(
    tmp_path: Path, make: object, kind: str
) -> None:
    try:
        make(tmp_path / "odd.md")  # type: ignore[operator]
    except PermissionError:
        pytest.skip("this machine does not allow creating a device node (no CAP_MKNOD)")
    with pytest.raises(CannotEdit) as caught:
        read_note(tmp_path, "odd.md")
    todo = (
        "name a note in it"
        if kind == "a folder"
        else "move it out of the vault, then run `vaultmem reindex`"
    )
    assert str(caught.value) == (
        f"odd.md is {kind}, not a note file; vaultmem edits only regular files, so nothing was"
        f" changed ({todo})"
    )


def test_the_size_limit_is_inclusive_and_named_in_megabytes(tmp_path: Path) -> None:
    data = b"x" * (3 << 19)  # 1.5 MB: read in two pieces
    (tmp_path / "big.md").write_bytes(data)
    assert read_note(tmp_path, "big.md", max_bytes=len(data)).digest == content_digest(data)
    with pytest.raises(CannotEdit) as caught:
        read_note(tmp_path, "big.md", max_bytes=1 << 20)
    assert str(caught.value) == (
        "big.md is larger than 1 MB (1.5 MB); raise max_file_mb in .vaultmem/config.toml to edit it"
    )


def test_a_note_that_grows_while_it_is_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.edit import reading

    (tmp_path / "n.md").write_bytes(b"x" * ((1 << 20) + 10))
    real_fstat = os.fstat

    def small(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, 1, 0, 0, 10, 0, 0, 0))

    monkeypatch.setattr(os, "fstat", small)
    fd = os.open(tmp_path / "n.md", os.O_RDONLY)
    try:
        with pytest.raises(CannotEdit) as caught:
            reading.read_regular(fd, "n.md", 1 << 20)
    finally:
        os.close(fd)
    assert str(caught.value) == (
        "n.md is larger than 1 MB (1.0 MB); raise max_file_mb in .vaultmem/config.toml to edit it"
    )


def test_refusals_while_reading_are_named_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "n.md").write_bytes(b"x\n")
    with pytest.raises(ChangedOnDisk) as caught:
        read_note(tmp_path, "n.md", expected_digest="0" * 32)
    assert str(caught.value) == (
        "n.md changed on disk since it was read; nothing was written (its content is not the"
        " revision you hold). Read the note again (run `vaultmem reindex` if the index is"
        " behind) and redo the change on its current text."
    )
    (tmp_path / "u.md").write_bytes(codecs.BOM_UTF16_LE + b"a\x00b")
    with pytest.raises(CannotEdit) as caught:
        read_note(tmp_path, "u.md")
    assert str(caught.value) == (
        "u.md starts with a UTF-16 BOM but is not valid UTF-16 (byte 4); vaultmem will not edit it"
    )
    for error, message in [
        (errno.ELOOP, "n.md changed while it was read; try again"),
        (errno.EACCES, "cannot read n.md: Permission denied"),
    ]:
        monkeypatch.setattr(os, "open", refusing("open", error, names=("n.md",)))
        with pytest.raises(CannotEdit) as caught:
            read_note(tmp_path, "n.md")
        monkeypatch.undo()
        assert str(caught.value) == message


def test_a_source_knows_its_text_and_renders_its_own_bytes(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_bytes(codecs.BOM_UTF8 + b"a\r\nb\n")
    source = read_note(tmp_path, "n.md")
    assert source.text == "a\r\nb\n" and source.ends_with_newline
    assert source.render() == codecs.BOM_UTF8 + b"a\r\nb\n"
    assert source.render([Line("c", "")]) == codecs.BOM_UTF8 + b"c"


def test_a_path_not_inside_the_vault_is_refused_whole(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_bytes(b"x\n")
    for bad in ("./n.md", "/n.md"):
        with pytest.raises(CannotEdit) as caught:
            read_note(tmp_path, bad)
        assert str(caught.value) == (
            f"{bad!r} is not a path inside the vault; give it relative to the vault root, with"
            " forward slashes (for example `people/Maya Chen.md`)"
        )
