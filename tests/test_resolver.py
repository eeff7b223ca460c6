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


def test_url_prefixes_map_docs_site_links_to_folder_notes() -> None:
    files = FileSet(
        ["en-us/web/api/index.md", "en-us/web/css/README.md", "en-us/glossary/dom.md"],
        url_prefixes={"/en-US/docs/": "en-us/", "/en-US/docs/Glossary/": "en-us/glossary/"},
    )
    assert files.resolve("x.md", "/en-US/docs/Web/API").path == "en-us/web/api/index.md"
    assert files.resolve("x.md", "/en-us/docs/web/css/").path == "en-us/web/css/README.md"
    assert files.resolve("x.md", "/en-US/docs/Glossary/DOM").path == "en-us/glossary/dom.md"
    assert files.resolve("x.md", "/en-US/docs/Missing").path is None
    assert files.resolve("x.md", "/en-US/docs/").path is None
    assert FileSet(["api.md"]).resolve("x.md", "/en-US/docs/api").path is None  # off: no prefix
