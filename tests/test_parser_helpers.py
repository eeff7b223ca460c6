"""The parser's small syntax helpers that personas, the gap fixes and the TUI ask (pure)."""

from __future__ import annotations

import pytest

from vaultmem.parser import (
    LinkRef,
    fence_roles,
    is_heading_line,
    is_lone_embed,
    linked_name,
    opens_with_markup,
    paragraphs,
    parse_note,
    strip_block_id,
    wikilinks_in,
    written_link,
)

# --------------------------------------------------------------------------- wikilinks


def spans(line: str) -> list[tuple[str, bool, LinkRef, str]]:
    return [(line[s.start : s.end], s.embed, s.ref, s.reference) for s in wikilinks_in(line)]


def test_wikilinks_with_anchor_display_and_embed() -> None:
    line = "See [[Note#Part|the part]] and ![[img.png]] or [[#Local]]."
    assert spans(line) == [
        ("[[Note#Part|the part]]", False, LinkRef("Note", "Part", None, "the part"), "Note#Part"),
        ("![[img.png]]", True, LinkRef("img.png", None, None, None), "img.png"),
        ("[[#Local]]", False, LinkRef("", "Local", None, None), "#Local"),
    ]


def test_wikilink_in_a_table_uses_an_escaped_bar() -> None:
    assert spans(r"| [[Note\|shown]] |") == [
        (r"[[Note\|shown]]", False, LinkRef("Note", None, None, "shown"), "Note"),
    ]


@pytest.mark.parametrize(
    ("line", "found"),
    [
        (r"\[[not a link]]", []),  # escaped
        (r"\\[[a link]]", ["[[a link]]"]),  # the backslash is escaped, not the bracket
        (r"\![[x]]", ["[[x]]"]),  # an escaped bang: a link, not an embed
        ("[[ ]] and [[|shown]]", []),  # nothing to link to
        ("[[a [[b]]", ["[[b]]"]),  # no `[[` inside a link
        ("[[open only", []),
        ("[[a]] [[b]]", ["[[a]]", "[[b]]"]),
        ("`[[code]]` and ``x [[code]] ` y`` but [[link]]", ["[[link]]"]),  # inline code
        ("`[[4, 25], [10, 15]]` [[a]]", ["[[a]]"]),
        (r"\`[[a]]` and `unclosed [[b]]", ["[[a]]", "[[b]]"]),  # no code span here
    ],
)
def test_wikilink_edge_cases(line: str, found: list[str]) -> None:
    assert [text for text, *_ in spans(line)] == found


def test_wikilinks_agree_with_the_parser() -> None:
    """Outside code, the helper finds what the indexer indexes."""
    lines = [
        "A [[Note]] b ![[Pic.png|300]] c [[Folder/Other#Head#Sub|x]] d [[#^block]]",
        r"e \[[escaped]] f [[a]b]] g [[T\|bar]] h `[[in code]]` i",
    ]
    indexed = [
        (k.target, k.heading, k.block, k.display)
        for k in parse_note("\n".join(lines), "n.md").links
    ]
    found = [
        (s.ref.target, s.ref.heading, s.ref.block, s.ref.display)
        for ln in lines
        for s in wikilinks_in(ln)
    ]
    assert found == indexed


def test_written_link_spells_links_back() -> None:
    assert written_link("Note", "Part", None, "shown") == "[[Note#Part|shown]]"
    assert written_link("Note", None, "b1", None, embed=True) == "![[Note#^b1]]"
    assert written_link("a.md", "H", None, "text", kind="markdown") == "[text](a.md#H)"
    for written in ("[[Note#Part|shown]]", "![[Note#^b1]]", "[[#Local]]"):
        (span,) = wikilinks_in(written)
        ref = span.ref
        assert written_link(ref.target, ref.heading, ref.block, ref.display, span.embed) == written


def test_linked_name() -> None:
    assert linked_name("[[people/Maya Chen#Role|Maya]]") == "people/Maya Chen"
    assert linked_name(" Maya Chen.md ") == "Maya Chen.md"
    assert linked_name(r"[[Maya\|shown]]") == "Maya"
    assert linked_name("[[#Only a heading]]") == ""


# --------------------------------------------------------------------------- fences


def test_fence_roles() -> None:
    lines = [
        "text",
        "```python",
        "code [[not a link]]",
        "```",
        "- item",
        "    ~~~~",
        "    ~~~",  # shorter: still inside
        "    ~~~~~",
        "````",
        "```",  # shorter than the opening: still code
        "```` trailing text does not close",
        "````",
        "```a`b```",  # backticks in the info string: inline code, not a fence
    ]
    assert list(fence_roles(lines)) == [
        None,
        "open",
        "code",
        "close",
        None,
        "open",
        "code",
        "close",
        "open",
        "code",
        "code",
        "close",
        None,
    ]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert list(fence_roles(["~~~", "a", ""])) == ["open", "code", "code"]


# --------------------------------------------------------------------------- paragraphs


def test_paragraphs_split_at_blank_lines_and_headings_with_code_whole() -> None:
    lines = [
        "# Title",  # 1
        "First line",  # 2
        "second line   ",  # 3
        "",  # 4
        "```",  # 5
        "code",  # 6
        "",  # 7
        "more code",  # 8
        "```",  # 9
        "## Next",  # 10
        "After",  # 11
    ]
    assert list(paragraphs(lines)) == [
        None,
        [(2, "First line"), (3, "second line")],
        [(5, "```"), (6, "code"), (7, ""), (8, "more code"), (9, "```")],
        None,
        [(11, "After")],
    ]
    assert list(paragraphs(lines, 6, 8)) == [[(6, "code")], [(8, "more code")]]
    assert list(paragraphs(lines, 11, 99)) == [[(11, "After")]]


def test_line_questions() -> None:
    assert is_heading_line("### Three") and is_heading_line("#") and is_heading_line("   # x")
    assert not is_heading_line("#tag") and not is_heading_line("    # code")
    assert all(opens_with_markup(x) for x in ("```js", "%% note", "<!-- c -->", "^block1"))
    assert not opens_with_markup("Plain text with ``` later")
    assert is_lone_embed("  ![[diagram.png]] ") and is_lone_embed("![alt](a.png)")
    assert not is_lone_embed("See ![[diagram.png]]")
    assert strip_block_id("Prefers tea ^pref-1") == "Prefers tea"
    assert strip_block_id("No block id here") == "No block id here"


def test_a_paragraph_ends_where_a_fence_opens_and_where_it_closes() -> None:
    lines = ["text", "```", "code", "```", "after"]
    assert list(paragraphs(lines)) == [
        [(1, "text")],
        [(2, "```"), (3, "code"), (4, "```")],
        [(5, "after")],
    ]


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/parser.py that the tests above let through
# (docs/TESTING.md, "parser").


def test_written_link_without_anchor_or_shown_text() -> None:
    assert written_link("Note") == "[[Note]]"
    assert written_link("a.md", kind="markdown") == "[](a.md)"
    assert written_link("a.md", "H", "b1", kind="markdown", embed=True) == "![](a.md#^b1)"


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("[[a]] \\", ["[[a]]"]),  # a backslash at the end of the line escapes nothing before
        ("\\[[a]] \\", []),  # nor makes the escape before `[[` an even run
        ("\\\\\\\\[[a]]", ["[[a]]"]),  # four backslashes: two escaped ones, then a link
        ("\\\\\\[[a]]", []),  # three: the last escapes the bracket
        ("\\``[[a]]`", []),  # an escaped backtick, then a code span of one
        ("\\` and `[[a]]`", []),  # the code span after an escaped backtick still counts
        ("`a [[b]]", ["[[b]]"]),  # an unmatched backtick is text
        ("`` x `[[a]]`", []),  # an unmatched run of two, then a code span of one
        ("`x`[[a]]", ["[[a]]"]),  # right after a code span, outside it
        ("`[[x]]` [[a]] [[b]]", ["[[a]]", "[[b]]"]),  # every link after a code span
        ("[[]]]", []),  # the first `]]` closes: nothing inside
        ("\\[[[a]]", ["[[a]]"]),  # an escaped `[`, then a link
        ("[[[[a]]", ["[[[a]]"]),  # the `[[` nearest the `]]` opens the link: to "[a"
        ("[[a]][[b]]", ["[[a]]", "[[b]]"]),  # a link right after a link
        ("[[a]] wow!", ["[[a]]"]),  # a `!` at the end of the line makes no embed
    ],
)
def test_wikilinks_next_to_escapes_and_code(line: str, found: list[str]) -> None:
    assert [text for text, *_ in spans(line)] == found


def test_linked_name_of_a_bare_link_and_of_nothing() -> None:
    assert linked_name("[[Maya Chen]]") == "Maya Chen"
    assert linked_name("[[ ]]") == ""
    assert linked_name("") == ""


def test_indented_markup_is_markup() -> None:
    assert all(opens_with_markup(x) for x in ("   %% note", "\t```", "  ^block1"))
