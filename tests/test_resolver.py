"""Resolver cases found by the conformance suites (docs/CONFORMANCE.md), as plain unit tests."""

from __future__ import annotations

from vaultmem.resolver import FileSet


def test_note_and_extensionless_file_of_the_same_name_are_both_kept() -> None:
    """`todo.md` and a plain file `todo` are two files; `[[todo]]` means the note."""
    files = FileSet(["notes/todo", "notes/todo.md"])
    assert len(files) == 2
    res = files.resolve("a.md", "todo")
    assert res.path == "notes/todo.md"
    assert res.candidates == ("notes/todo", "notes/todo.md")
    assert files.resolve("a.md", "notes/todo").path == "notes/todo.md"
    assert files.resolve("a.md", "todo.md").path == "notes/todo.md"


def test_md_suffix_names_only_notes() -> None:
    """`[[image.svg.md]]` asks for a note `image.svg.md`, not the image `image.svg`."""
    files = FileSet(["image.svg", "Note.1.md"])
    assert files.resolve("a.md", "image.svg.md").path is None
    assert "image.svg.md" not in files
    assert files.resolve("a.md", "image.svg").path == "image.svg"
    assert files.resolve("a.md", "Note.1").path == "Note.1.md"  # a dot in a note's name


def test_removed_file_no_longer_resolves() -> None:
    files = FileSet(["x/Note.md", "y/Note.md"])
    files.remove("x/Note.md")
    assert files.resolve("a.md", "Note").path == "y/Note.md"
    assert files.resolve("a.md", "x/Note").path is None
