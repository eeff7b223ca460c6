"""Parser cases found by the conformance suites (docs/CONFORMANCE.md), as plain unit tests."""

from __future__ import annotations

from vaultmem.parser import parse_note


def test_footnote_definition_is_not_a_link() -> None:
    """`[^1]: Text` defines a footnote; CommonMark alone would read a link to a note "Text"."""
    note = parse_note("Claim [^1] and [[A]].\n\n[^1]: Source with [[B]] #cited\n", "n.md")
    assert sorted((lk.target, lk.line) for lk in note.links) == [("A", 1), ("B", 3)]
    assert note.tags == ("cited",)


def test_inline_footnote_keeps_its_links() -> None:
    note = parse_note("Text^[see [[C]]] done.\n", "n.md")
    assert [lk.target for lk in note.links] == ["C"]


def test_footnote_reference_stays_in_task_text() -> None:
    note = parse_note("- [ ] check [^1] [due:: 2026-01-02]\n\n[^1]: why\n", "n.md")
    (task,) = note.tasks
    assert (task.text, task.due) == ("check [^1] [due:: 2026-01-02]", "2026-01-02")


def test_unreadable_front_matter_is_searchable_text_but_not_markdown() -> None:
    """`{{ foo }}: bar` over the closing `---` is no heading: Obsidian shows invalid properties."""
    note = parse_note("---\n{{ foo }}: bar #tag [[X]]\n---\n# Real\n", "n.md")
    assert note.frontmatter == {}
    assert [(h.text, h.line) for h in note.headings] == [("Real", 4)]
    assert (note.links, note.tags) == ((), ())
    assert note.chunks[0].text == "---\n{{ foo }}: bar #tag [[X]]\n---"
    assert note.warnings and "broken YAML" in note.warnings[0]


def test_percent_signs_in_inline_code_open_no_comment() -> None:
    """`%%` inside backticks ("Type `%%` to comment") is code: it hides nothing after it."""
    note = parse_note("Type `%%` to comment. See [[A]] #t\n\n%% hidden [[B]] %% [[C]]\n", "n.md")
    assert [lk.target for lk in note.links] == ["A", "C"]
    assert note.tags == ("t",)
