"""Resolver cases found by the conformance suites (docs/CONFORMANCE.md), as plain unit tests,
and (below the line) the rules that `make mutation` found loose (docs/TESTING.md, "resolver")."""

from __future__ import annotations

from vaultmem.resolver import FileSet, Resolution, name_key


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


# --------------------------------------------------------------------------- found by mutation


def test_a_target_ending_in_md_names_only_that_note() -> None:
    """`[[Note.md]]` is Note.md; a note called `Note.md.md` is another name."""
    assert FileSet(["Note.md.md"]).resolve("a.md", "Note.md").path is None
    assert FileSet(["Note.md.md", "Note.md"]).resolve("a.md", "Note.md") == Resolution("Note.md")
    assert FileSet(["Note.md.md"]).resolve("a.md", "Note.md.md").path == "Note.md.md"
    assert "Note.md" not in FileSet(["Note.md.md"]) and "Note.md.md" in FileSet(["Note.md.md"])


def test_a_dot_in_a_folder_name_is_no_extension() -> None:
    """`[[v1.2/Plan]]` asks for the note Plan.md first, then a plain file `Plan`: the dot that
    counts is in the last path part only."""
    files = FileSet(["v1.2/Plan", "v1.2/Plan.md"])
    assert files.resolve("a.md", "v1.2/Plan").path == "v1.2/Plan.md"
    assert files.exact("v1.2/Plan") == "v1.2/Plan.md"
    deeper = FileSet(["x/v1.2/Plan", "x/v1.2/Plan.md"])
    assert deeper.resolve("a.md", "x/v1.2/Plan").path == "x/v1.2/Plan.md"
    files = FileSet(["v1.2/Plan.png", "v1.2/Plan.png.md"])
    assert files.resolve("a.md", "v1.2/Plan.png").path == "v1.2/Plan.png"  # here it counts


def test_the_same_file_twice_is_kept_once_and_the_rest_still_counts() -> None:
    files = FileSet(["Note.md", "NOTE.md", "Other.md"])
    assert len(files) == 2
    assert "Other.md" in files
    assert files.resolve("a.md", "other") == Resolution("Other.md")
    assert files.resolve("a.md", "note") == Resolution("Note.md")  # the first spelling


def test_a_decomposed_accent_in_a_file_name_matches_the_composed_link() -> None:
    files = FileSet(["Cafe\u0301.md", "Zoë.md"])
    assert files.resolve("a.md", "Café").path == "Cafe\u0301.md"
    assert files.resolve("a.md", "cafe\u0301").path == "Cafe\u0301.md"
    assert files.resolve("a.md", "ZOË").path == "Zoë.md"


def test_add_indexes_a_file_as_the_constructor_does() -> None:
    files = FileSet(["x/Note.md"])
    files.add("y/Café.md")
    files.add("y/Plan")  # a plain file without an extension
    files.add("X/NOTE.md")  # the same file, spelt otherwise: kept once
    files.add("Top.md")
    files.add("a/b/Deep.md")
    assert len(files) == 5
    assert files.exact("top") == "Top.md" and "a/b/Deep.md" in files
    assert files.resolve("a.md", "Deep").path == "a/b/Deep.md"
    assert files.named("deep") == ["a/b/Deep.md"] and files.named("top") == ["Top.md"]
    assert files.resolve("a.md", "cafe\u0301").path == "y/Café.md"
    assert files.resolve("a.md", "Café.md").path == "y/Café.md"
    assert files.resolve("a.md", "Plan").path == "y/Plan"
    assert files.named("café") == ["y/Café.md"]
    assert files.named("note") == ["x/Note.md"]
    files.add("z/Note.md")
    assert files.named("note") == ["x/Note.md", "z/Note.md"]
    assert files.resolve("z/a.md", "Note") == Resolution("z/Note.md", ("x/Note.md", "z/Note.md"))


def test_removing_a_file_that_is_not_there_changes_nothing() -> None:
    files = FileSet(["Note.md"])
    files.remove("Other.md")
    files.remove("Note.md")
    files.remove("Note.md")
    assert len(files) == 0 and files.resolve("a.md", "Note").path is None


def test_one_candidate_is_not_reported_as_candidates() -> None:
    assert FileSet(["deep/Note.md"]).resolve("a.md", "Note") == Resolution("deep/Note.md")
    assert FileSet(["deep/Note.md"]).resolve("a.md", "deep/Note") == Resolution("deep/Note.md")


def test_the_longest_url_prefix_wins() -> None:
    files = FileSet(
        ["site/Glossary/DOM.md", "terms/DOM.md"],
        url_prefixes={"/docs/": "site/", "/docs/Glossary/": "terms/"},
    )
    assert files.resolve("x.md", "/docs/Glossary/DOM").path == "terms/DOM.md"
    files = FileSet(
        ["site/Glossary/DOM.md", "terms/DOM.md"],
        url_prefixes={"/docs/Glossary/": "terms/", "/docs/": "site/"},
    )
    assert files.resolve("x.md", "/docs/Glossary/DOM").path == "terms/DOM.md"


def test_a_url_prefix_mapped_to_the_vault_root_means_its_folder_notes() -> None:
    urls = {"/docs": ""}
    assert FileSet(["index.md"], url_prefixes=urls).resolve("x.md", "/docs").path == "index.md"
    readme = FileSet(["README.md"], url_prefixes=urls)
    assert readme.resolve("x.md", "/docs/").path == "README.md"
    assert readme.resolve("x.md", "/docs/XSLT").path is None
    xslt = FileSet(["XSLT.md", "SLT.md"], url_prefixes=urls)
    assert xslt.resolve("x.md", "/docs/XSLT").path == "XSLT.md"  # no letter stripped


def test_url_prefix_folders_are_kept_as_written_but_for_slashes() -> None:
    files = FileSet(
        ["Xdocs/XML.md", "docs/XML.md", "docs/ML.md", "Old notes /page.md"],
        url_prefixes={"/mdn/": "/Xdocs/", "/old/": "Old notes "},
    )
    assert files.resolve("x.md", "/mdn/XML").path == "Xdocs/XML.md"
    assert files.resolve("x.md", "/old/page").path == "Old notes /page.md"


def test_name_key_is_the_last_path_part_folded_without_md() -> None:
    assert name_key("folder/Sub/Box.md") == "box"
    assert name_key("/Box/") == "box"  # slashes around a target are no part of its name
    assert name_key("Xerox X") == "xerox x"
    assert name_key(" a/ Note.MD ") == "note"


def test_a_leading_slash_is_the_vault_root_and_nothing_more() -> None:
    files = FileSet(["Xenon.md", "sub/Xenon.md"])
    assert files.resolve("sub/a.md", "/Xenon") == Resolution("Xenon.md")
    assert files.resolve("sub/a.md", "/sub/Xenon") == Resolution("sub/Xenon.md")


def test_a_partial_path_prefers_the_linking_notes_folder() -> None:
    files = FileSet(["ppp/a/Note.md", "q/a/Note.md"])
    found = files.resolve("ppp/a/src.md", "a/Note")
    assert found == Resolution("ppp/a/Note.md", ("ppp/a/Note.md", "q/a/Note.md"))
    assert files.resolve("top.md", "a/Note").path == "q/a/Note.md"  # else the shortest path


def test_an_exact_path_with_no_namesake_reports_no_candidates() -> None:
    assert FileSet(["Note.md"]).resolve("a.md", "Note") == Resolution("Note.md")
    assert FileSet(["Note.md", "b/Note.md"]).resolve("a.md", "Note") == Resolution(
        "Note.md", ("Note.md", "b/Note.md")
    )


def test_a_url_past_its_prefix_is_taken_as_written() -> None:
    """Spaces after the prefix stay (a file may start with one); `..` never climbs out of it."""
    files = FileSet([" Web.md", "site/ Web.md", "secret.md"], url_prefixes={"/docs/": ""})
    assert files.resolve("x.md", "/docs/ Web").path == " Web.md"
    assert files.resolve("x.md", "/docs/../secret").path is None
    site = FileSet(["site/ Web.md", "site/Web.md"], url_prefixes={"/docs/": "site"})
    assert site.resolve("x.md", "/docs/ Web").path == "site/ Web.md"
