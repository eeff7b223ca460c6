"""Parser cases found by the conformance suites (docs/CONFORMANCE.md), as plain unit tests."""

from __future__ import annotations

import pytest
import yaml

from vaultmem import parser
from vaultmem.config import FrontMatterLimits
from vaultmem.model import Chunk, ParsedNote
from vaultmem.parser import parse_note, plain_note


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


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/parser.py that the tests above and the fixture
# cases let through (docs/TESTING.md, "parser"): front matter first.


def _fm(text: str, **limits: float) -> tuple[dict[str, object], tuple[str, ...]]:
    note = parse_note(f"---\n{text}\n---\nbody\n", "n.md", FrontMatterLimits(**limits))
    return note.frontmatter, note.warnings


HINT = "in .vaultmem/config.toml"


def test_good_front_matter_reads_every_kind_of_value_without_a_warning() -> None:
    fm, warnings = _fm(
        "title: Tea é\nwhen: 2026-02-01\nat: 2026-02-01 10:30:00\nn: 3\nx: 1.5\nok: true\n"
        "none:\nnested: {a: [1, {b: 2}], 7: x}\nset: !!set {9, 10}\nbin: !!binary aGk="
    )
    assert fm == {
        "title": "Tea é",
        "when": "2026-02-01",
        "at": "2026-02-01T10:30:00",
        "n": 3,
        "x": 1.5,
        "ok": True,
        "none": None,
        "nested": {"a": [1, {"b": 2}], "7": "x"},
        "set": [10, 9],  # a set's members in the order of their text
        "bin": "b'hi'",  # any other value as its text
    }
    assert warnings == ()


def test_a_value_yaml_cannot_build_is_kept_as_text_with_its_line() -> None:
    fm, warnings = _fm("a: 1\nd: 2026-02-30\nn: !!int abc\nf: !!float x\nk: " + "y" * 41)
    assert fm == {"a": 1, "d": "2026-02-30", "n": "abc", "f": "x", "k": "y" * 41}
    assert warnings == (
        "line 3: '2026-02-30' is not a real date or time; kept as text",
        "line 4: 'abc' is not a number; kept as text",
        "line 5: 'x' is not a number; kept as text",
    )
    _, (warning,) = _fm("t: !!timestamp " + "2" * 40 + "x")
    assert warning == f"line 2: '{'2' * 39}…' is not a real date or time; kept as text"
    _, (warning,) = _fm("t: !!timestamp " + "2" * 40)
    assert warning == f"line 2: '{'2' * 40}' is not a real date or time; kept as text"


def test_the_properties_limit_keeps_the_first_ones() -> None:
    text = "k0: 0\nk1: 1\nk2: 2"
    assert _fm(text, properties=3) == ({"k0": 0, "k1": 1, "k2": 2}, ())
    assert _fm(text + "\nk3: 3", properties=3) == (
        {"k0": 0, "k1": 1, "k2": 2},
        (f"front matter has 4 properties; only the first 3 were read (limits.properties {HINT})",),
    )


def test_the_values_limit_counts_every_value_aliases_expanded() -> None:
    text = "a: &x [1, 2]\nb: *x"  # a list and two numbers, twice: six values
    assert _fm(text, yaml_values=6) == ({"a": [1, 2], "b": [1, 2]}, ())
    assert _fm(text, yaml_values=5) == (
        {"a": [1, 2]},
        (
            "front matter property 'b' left out: more than 5 values with YAML aliases"
            f" expanded (limits.yaml_values {HINT})",
        ),
    )


def test_the_text_limit_counts_text_and_numbers_aliases_expanded() -> None:
    # "a", the 16 letters, "b", then the letters three times more: 66 characters
    text = "a: &x abcdefghijklmnop\nb: [*x, *x, *x]"
    fm = {"a": "abcdefghijklmnop", "b": ["abcdefghijklmnop"] * 3}
    assert _fm(text, front_matter_kb=66 / 1024) == (fm, ())
    left_out = (
        "front matter property 'b' left out: more than 0.0634766 KB of text with YAML"
        f" aliases expanded (limits.front_matter_kb {HINT})"
    )
    assert _fm(text, front_matter_kb=65 / 1024) == ({"a": fm["a"]}, (left_out,))
    # a number counts a third of its bits: 2**300 (301 bits) counts 100 characters
    big = 2**300
    numbers = "a: &n [" + str(big) + "]\nb: [" + ", ".join(["*n"] * 10) + "]"
    assert _fm(numbers, front_matter_kb=1102 / 1024)[0] == {"a": [big], "b": [[big]] * 10}
    assert _fm(numbers, front_matter_kb=1101 / 1024)[0] == {"a": [big]}


def test_the_depth_limit_counts_lists_and_mappings() -> None:
    text = "a: [[[1]]]\nb: [[1]]\nc: {x: {y: {z: 1}}}\nd: {x: {y: 1}}"
    assert _fm(text, yaml_depth=3) == (
        {"b": [[1]], "d": {"x": {"y": 1}}},
        (
            "front matter properties 'a', 'c' left out: nested deeper than 3 levels"
            f" (limits.yaml_depth {HINT})",
        ),
    )


def test_a_recursive_alias_is_left_out_and_a_repeated_one_is_not() -> None:
    assert _fm("a: &a [*a]\nb: &x [1]\nc: *x\nd: [*x, *x]") == (
        {"b": [1], "c": [1], "d": [[1], [1]]},
        (
            "front matter property 'a' left out: a recursive YAML alias"
            " (a value that contains itself)",
        ),
    )


@pytest.mark.parametrize(
    ("dropped", "names"),
    [
        (1, "property 'k1'"),
        (2, "properties 'k1', 'k2'"),
        (5, "properties 'k1', 'k2', 'k3', 'k4', 'k5'"),
        (6, "properties 'k1', 'k2', 'k3', 'k4', 'k5' and 1 more"),
        (7, "properties 'k1', 'k2', 'k3', 'k4', 'k5' and 2 more"),
    ],
)
def test_properties_left_out_are_named_five_at_most(dropped: int, names: str) -> None:
    text = "\n".join(f"k{i}: [[1]]" for i in range(1, dropped + 1))
    fm, warnings = _fm(text + "\nkept: 1", yaml_depth=2)
    assert fm == {"kept": 1}
    assert warnings == (
        f"front matter {names} left out: nested deeper than 2 levels (limits.yaml_depth {HINT})",
    )


def test_a_long_property_name_is_clipped_in_a_warning() -> None:
    long, exact = "k" * 41, "e" * 40
    _, warnings = _fm(f"{long}: [[1]]\n{exact}: [[1]]", yaml_depth=2)
    assert warnings == (
        f"front matter properties '{'k' * 39}…', '{exact}' left out: nested deeper than 2"
        f" levels (limits.yaml_depth {HINT})",
    )


def test_lone_surrogates_are_replaced_and_pairs_joined() -> None:
    """The pure-Python YAML loader (used where libyaml is missing) lets `"\\ud800"` escapes
    through; a lone surrogate cannot be stored as UTF-8."""
    normaliser = parser._Normaliser(FrontMatterLimits())
    assert normaliser.text("é\ud800 \ud83d\ude00") == "é\ufffd 😀"
    assert normaliser.text("plain é") == "plain é"


def test_broken_front_matter_keeps_each_property_that_reads() -> None:
    fm, warnings = _fm(
        "title: Good\n"  # 2
        "created: {{date}}\n"  # 3: Templater's placeholder, a mapping as a key
        "tags:\n- a\n- b: 2\n"  # 4-6: a list at the start of its lines is part of `tags`
        "list:\n# a comment: x\n  - one\n  - two: 2\n"  # 7-10: so are comments and indents
        "t: a: {{x}}\n"  # 11: broken
        "d: 2026-02-30\n"  # 12
        "last: ok"  # 13
    )
    assert fm == {
        "title": "Good",
        "tags": ["a", {"b": 2}],
        "list": ["one", {"two": 2}],
        "d": "2026-02-30",
        "last": "ok",
    }
    assert warnings == (
        "broken YAML front matter: skipped 'created' at line 3: found unhashable key;"
        " 't' at line 11: mapping values are not allowed in this context;"
        " the other properties were kept",
        "line 12: '2026-02-30' is not a real date or time; kept as text",
    )


def test_broken_front_matter_read_in_parts_keeps_the_limits() -> None:
    text = "a: [1, 2]\nb: {{x}}\nc: [3, 4]"  # the limits hold across the parts
    assert _fm(text, yaml_values=5) == (
        {"a": [1, 2]},
        (
            "broken YAML front matter: skipped 'b' at line 3: found unhashable key;"
            " the other properties were kept",
            "front matter property 'c' left out: more than 5 values with YAML aliases"
            f" expanded (limits.yaml_values {HINT})",
        ),
    )
    assert _fm("a: 1\nb: {{x}}\nc: 2\nd: 3", properties=2) == (
        {"a": 1, "c": 2},
        (
            "broken YAML front matter: skipped 'b' at line 3: found unhashable key;"
            " the other properties were kept",
            "front matter has more than 2 properties; only the first 2 were read"
            f" (limits.properties {HINT})",
        ),
    )


def test_broken_front_matter_with_no_broken_property() -> None:
    assert _fm("oops\na: 1") == (
        {"a": 1},
        ("broken YAML front matter: skipped part of it; the other properties were kept",),
    )


def test_front_matter_nothing_of_which_reads() -> None:
    assert _fm(": : :") == (
        {},
        (
            "broken YAML front matter at line 2: did not find expected key;"
            " the note is indexed as text",
        ),
    )
    assert _fm("- a\n- b") == ({}, ("front matter is not a mapping of properties; ignored",))


def test_yaml_errors_say_where_and_what() -> None:
    assert parser._yaml_error(yaml.YAMLError("first\nsecond"), 2) == ": first"
    assert parser._yaml_error(ValueError("v" * 81), 2) == f": ValueError: {'v' * 79}…"
    assert parser._yaml_error(RecursionError("too deep"), 2) == ": RecursionError: too deep"
    with pytest.raises(yaml.YAMLError) as caught:
        parser._read_yaml("a: 1\nb: [\n", 5)  # the note's line 5 is the YAML's first
    assert parser._yaml_error(caught.value, 5) == " at line 7: did not find expected node content"


# --------------------------------------------------------------------------- the whole note


def test_a_whole_note_with_every_part() -> None:
    text = (
        "\ufeff---\r\n"  # a BOM and CRLF line ends
        "aliases: [Alpha One, Beta]\r\n"
        'alias: [Beta, "Gamma, Delta"]\r\n'  # aliases are never split, and kept once
        'tags: "one, #two three"\r\n'  # tags are: by commas and spaces, `#` optional
        "tag: [four]\r\n"
        'up: "[[Parent#Part|p]]"\r\n'
        "---\r\n"
        "# Title\r\n"  # 8
        "Intro\x00 #five\r\n"
        "## Part A\r\n"  # 10
        "text a\r\n"
        "### Deep\r\n"  # 12
        "deep\r\n"
        "## Part B\r\n"  # 14
        "text b  \r\n"  # trailing spaces stay in the chunk
        "\r\n"
    )
    note = parse_note(text, "folder/Note.md")
    assert (note.path, note.title, note.line_count) == ("folder/Note.md", "Note", 16)
    assert note.aliases == ("Alpha One", "Beta", "Gamma, Delta")
    assert note.tags == ("one", "two", "three", "four", "five")
    assert note.frontmatter == {
        "aliases": ["Alpha One", "Beta"],
        "alias": ["Beta", "Gamma, Delta"],
        "tags": "one, #two three",
        "tag": ["four"],
        "up": "[[Parent#Part|p]]",
    }
    assert [(h.level, h.text, h.line, h.end_line) for h in note.headings] == [
        (1, "Title", 8, 16),
        (2, "Part A", 10, 13),
        (3, "Deep", 12, 13),
        (2, "Part B", 14, 16),
    ]
    assert [(c.seq, c.heading_path, c.start_line, c.end_line, c.text) for c in note.chunks] == [
        (0, ("Title",), 8, 9, "# Title\nIntro\ufffd #five"),
        (1, ("Title", "Part A"), 10, 11, "## Part A\ntext a"),
        (2, ("Title", "Part A", "Deep"), 12, 13, "### Deep\ndeep"),
        (3, ("Title", "Part B"), 14, 15, "## Part B\ntext b  "),
    ]
    assert note.warnings == ("NUL bytes replaced by U+FFFD",)


def test_small_notes_and_their_chunks() -> None:
    (heading,) = parse_note("# H\n", "n.md").headings
    assert heading.end_line == 1
    assert parse_note("", "n.md").chunks == (Chunk(0, (), 1, 1, ""),)
    # an empty front matter is no text: the chunk starts below it
    assert parse_note("---\n---\nx\n", "n.md").chunks == (Chunk(0, (), 3, 3, "x"),)
    assert [c.text for c in parse_note("Xylo\n# H\nbody X\n", "n.md").chunks] == [
        "Xylo",
        "# H\nbody X",
    ]
    # front matter lines are blank to markdown: `===` under them underlines nothing
    assert parse_note("---\na: 1\n---\n===\n", "n.md").headings == ()


def test_front_matter_over_the_size_limit_is_text() -> None:
    text = "---\na: 1\n---\nbody\n"  # the YAML is 5 characters, "a: 1\n"
    assert parse_note(text, "n.md", FrontMatterLimits(front_matter_kb=5 / 1024)).frontmatter
    note = parse_note(text, "n.md", FrontMatterLimits(front_matter_kb=4 / 1024))
    assert note.frontmatter == {}
    assert note.warnings == (
        "front matter larger than 0.00390625 KB (limits.front_matter_kb in"
        " .vaultmem/config.toml); indexed as text, not read as properties",
    )
    assert [(c.start_line, c.text) for c in note.chunks] == [(1, "---\na: 1\n---\nbody")]


def test_plain_note_keeps_spaces_blank_lines_and_a_last_line_without_its_end() -> None:
    note = plain_note("one two\n\nthree", "n.md", "why")
    assert note.line_count == 3
    assert note.chunks == (Chunk(0, (), 1, 3, "one two\n\nthree"),)


def test_plain_note_is_its_lines() -> None:
    note = plain_note("\ufeffone\r\ntwo\x00\rthree\n", "f/Plain.md", "why")
    assert note == ParsedNote(
        path="f/Plain.md",
        title="Plain",
        chunks=(Chunk(0, (), 1, 3, "one\ntwo\ufffd\nthree"),),
        warnings=("why",),
        line_count=3,
    )


def _lines(first: int, count: int) -> str:
    """`count` lines of 99 characters (100 with the line end), numbered from `first`."""
    return "".join(f"line {n:04d} ".ljust(99, "x") + "\n" for n in range(first, first + count))


def test_a_long_section_is_split_in_windows_that_overlap() -> None:
    # "# H" (4 with its line end) and 40 lines of 100: 1,500 at most per window, the last
    # 200 again at the start of the next
    note = parse_note("# H\n" + _lines(2, 40), "n.md")
    assert [(c.start_line, c.end_line) for c in note.chunks] == [(1, 15), (14, 28), (27, 41)]
    assert all(c.heading_path == ("H",) for c in note.chunks)
    assert note.chunks[1].text == _lines(14, 15).rstrip("\n")
    # exactly 1,500 characters, line ends counted: one chunk; one more: two
    assert len(parse_note(_lines(1, 15), "n.md").chunks) == 1
    assert [
        (c.start_line, c.end_line) for c in parse_note("y\n" + _lines(2, 15), "n.md").chunks
    ] == [
        (1, 15),
        (14, 16),
    ]


def test_the_overlap_is_200_characters_at_most() -> None:
    # lines of 100 characters, 101 with their line end: one line of overlap, not two
    lines = "".join(f"l{n:03d} ".ljust(100, "x") + "\n" for n in range(2, 32))
    note = parse_note("# H\n" + lines, "n.md")
    assert [(c.start_line, c.end_line) for c in note.chunks] == [(1, 15), (15, 28), (28, 31)]
    # the overlap may take every line of a window but its first
    note = parse_note("a\nb\n" + "z" * 2000 + "\n", "n.md")
    assert [(c.start_line, c.end_line) for c in note.chunks] == [(1, 2), (2, 2), (3, 3)]


def test_a_line_longer_than_a_window_is_a_window_alone() -> None:
    long = "z" * 2000
    note = parse_note(f"a\n{long}\nb\n", "n.md")
    assert [(c.start_line, c.end_line, c.text) for c in note.chunks] == [
        (1, 1, "a"),
        (2, 2, long),
        (3, 3, "b"),
    ]


# --------------------------------------------------------------------------- the bracket budget


def test_paragraphs_past_the_bracket_budget_are_read_without_markdown_links(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parser, "MAX_LINK_BRACKETS", 4)
    text = (
        "[a](a.md) [b](b.md)\n\n"  # 1: two `[`, two left
        "plain [ text\n\n"  # 3: no `]`, so no `[` here opens a link: none counted
        "[c](c.md) [d](d.md)\n\n"  # 5: two more, none left
        "[e](e.md) [[W]]\n\n"  # 7: over the budget: wikilinks only
        "[f](f.md)\n"  # 9: over it too
    )
    note = parse_note(text, "n.md")
    assert [lk.target for lk in note.links] == ["a.md", "b.md", "c.md", "d.md", "W"]
    assert note.warnings == (
        "more than 4 `[` in the note: markdown links [text](target) in the paragraphs at"
        " lines 7, 9 are not read (wikilinks are)",
    )


@pytest.mark.parametrize(
    ("paragraphs", "where"),
    [
        (1, "paragraph at line 1"),
        (5, "paragraphs at lines 1, 3, 5, 7, 9"),
        (6, "paragraphs at lines 1, 3, 5, 7, 9, …"),
    ],
)
def test_the_budget_warning_names_five_paragraphs_at_most(
    monkeypatch: pytest.MonkeyPatch, paragraphs: int, where: str
) -> None:
    monkeypatch.setattr(parser, "MAX_LINK_BRACKETS", 0)
    note = parse_note("[x](x.md)\n\n" * paragraphs, "n.md")
    assert note.links == ()
    assert note.warnings == (
        f"more than 0 `[` in the note: markdown links [text](target) in the {where}"
        " are not read (wikilinks are)",
    )


def test_past_the_budget_runs_of_brackets_still_end_in_wikilinks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = "k:: [[[A]] [[[[B]] [[[[[C]] [[[[[[D|d]] ![i](i.png) [t](t.md) [[E]]\n"
    read = parse_note(line, "n.md")
    monkeypatch.setattr(parser, "MAX_LINK_BRACKETS", 0)
    flooded = parse_note(line, "n.md")
    assert [lk.target for lk in read.links] == ["[A", "[B", "[C", "[D", "i.png", "t.md", "E"]
    assert [lk.target for lk in flooded.links] == ["[A", "[B", "[C", "[D", "E"]
    assert [lk.relation for lk in flooded.links] == ["k"] * 5
    # the brackets stay text: the field's value is the line as written
    (field,) = flooded.fields
    assert field.value == line[4:].strip()


# --------------------------------------------------------------------------- comments


@pytest.mark.parametrize(
    ("text", "links", "shown"),
    [
        # a blank line does not close a fence: `%%` in code stays
        ("```\ncode\n\n%% kept %%\n```", [], "```\ncode\n\n%% kept %%\n```"),
        ("```\nx\n```\n%% hidden [[B]] %% [[C]]", ["C"], "```\nx\n```\n [[C]]"),
        ("%% start\nmiddle [[B]]\nend %% [[C]]", ["C"], " [[C]]"),  # over three lines
        ("%% start\n%% after [[C]]", ["C"], " after [[C]]"),  # closed at a line's start
        ("%% a %%[[C]]", ["C"], "[[C]]"),
        ("%% a %% [[C]]", ["C"], " [[C]]"),
        ("%%%% [[B]]", ["B"], " [[B]]"),  # an empty comment
        ("a %% b %% c %% d %% e [[L]]", ["L"], "a  c  e [[L]]"),
        ("`%%` then %% hidden [[B]] %% [[C]]", ["C"], "`%%` then  [[C]]"),
        ("%% [[B]] %% `x` [[C]]", ["C"], " `x` [[C]]"),  # code after a comment: no matter
        ("a ` b %% [[B]] %% [[C]]", ["C"], "a ` b  [[C]]"),  # an unmatched backtick is text
        ("`x` %% [[B]] %% [[C]]", ["C"], "`x`  [[C]]"),  # a code span before the comment
    ],
)
def test_comments_are_cut_out_of_links_and_text(text: str, links: list[str], shown: str) -> None:
    note = parse_note(text + "\n", "n.md")
    assert [lk.target for lk in note.links] == links
    assert [c.text for c in note.chunks] == [shown]


# --------------------------------------------------------------------------- property links


def test_links_and_fields_in_properties_sit_on_their_own_lines() -> None:
    text = (
        "---\n"
        'null: "[[N]]"\n'  # 2: the key reads as None
        'tags: ["[[NotLink]]"]\n'  # 3: tags hold no links
        '"quoted": "[[Q#Head]]"\n'  # 4
        "'single' : \"![[S#^blk|shown]]\"\n"  # 5
        'first: "[[A]]"\n'  # 6
        "related:\n"  # 7
        '  - "[[B]] and [[A]]"\n'  # 8: this [[A]] is here, not on line 6
        '  - "[[ ]] [[R]]"\n'  # 9: an empty link is none, the next one counts
        'x: "[[X]]"\n'  # 10: a key of one letter
        '"a:b": "[[AB]]"\n'  # 11: a colon in a quoted key
        'url: "http://example.com"\n'  # 12
        'long: "[[Long\n  Name]]"\n'  # 13-14: the link is on no one line: the key's
        'again: "[[Long Name]]"\n'  # 15
        "names: [é, 1]\n"  # 16
        "---\n"
    )
    note = parse_note(text, "n.md")
    assert [
        (lk.target, lk.line, lk.heading, lk.block, lk.display, lk.embed, lk.relation)
        for lk in note.links
    ] == [
        ("N", 2, None, None, None, False, "None"),
        ("Q", 4, "Head", None, None, False, "quoted"),
        ("S", 5, None, "blk", "shown", True, "single"),
        ("A", 6, None, None, None, False, "first"),
        ("B", 8, None, None, None, False, "related"),
        ("A", 8, None, None, None, False, "related"),
        ("R", 9, None, None, None, False, "related"),
        ("X", 10, None, None, None, False, "x"),
        ("AB", 11, None, None, None, False, "a:b"),
        ("Long Name", 13, None, None, None, False, "long"),
        ("Long Name", 15, None, None, None, False, "again"),
    ]
    assert all(lk.kind == "property" for lk in note.links)
    assert [(f.key, f.value, f.line, f.source) for f in note.fields] == [
        ("None", "[[N]]", 2, "property"),
        ("tags", '["[[NotLink]]"]', 3, "property"),
        ("quoted", "[[Q#Head]]", 4, "property"),
        ("single", "![[S#^blk|shown]]", 5, "property"),
        ("first", "[[A]]", 6, "property"),
        ("related", '["[[B]] and [[A]]", "[[ ]] [[R]]"]', 7, "property"),
        ("x", "[[X]]", 10, "property"),
        ("a:b", "[[AB]]", 11, "property"),
        ("url", "http://example.com", 12, "property"),
        ("long", "[[Long Name]]", 13, "property"),
        ("again", "[[Long Name]]", 15, "property"),
        ("names", '["é", 1]', 16, "property"),
    ]


def test_what_is_no_front_matter() -> None:
    for text in ("---", "---x\na: 1\n---\n", "---\na: 1\nno close\n"):
        note = parse_note(text, "n.md")
        assert note.frontmatter == {}
        assert note.chunks[0].start_line == 1
        assert note.chunks[0].text == text.rstrip("\n")


def test_a_markdown_link_without_an_anchor_has_no_heading_or_block() -> None:
    (link,) = parse_note("[a](b.md)\n", "n.md").links
    assert (link.heading, link.block, link.embed) == (None, None, False)


def test_a_property_named_with_a_colon_at_its_end() -> None:
    """`a:: x` in YAML is the property `a:` (a colon not followed by a space is text)."""
    note = parse_note('---\nx: 1\na:: "[[L]]"\n---\n', "n.md")
    assert [(f.key, f.line) for f in note.fields] == [("x", 2), ("a:", 3)]
    assert [(lk.target, lk.line, lk.relation) for lk in note.links] == [("L", 3, "a:")]


def test_a_colon_inside_a_quoted_key_names_no_other_property() -> None:
    """`"a: b":` is cut at its first colon too; that `"a` is not the property `a` below."""
    note = parse_note('---\n"a: b": 1\na: 2\n\'c\': 3\n"\'": 4\n---\n', "n.md")
    assert note.frontmatter == {"a: b": 1, "a": 2, "c": 3, "'": 4}
    assert [(f.key, f.line) for f in note.fields] == [("a: b", 2), ("a", 3), ("c", 4), ("'", 5)]


def test_an_empty_quoted_key_and_a_quoted_colon() -> None:
    note = parse_note('---\n":": 1\n"": 2\n---\n', "n.md")
    assert note.frontmatter == {":": 1, "": 2}
    assert [(f.key, f.line) for f in note.fields] == [(":", 2), ("", 3)]


def test_a_key_starting_with_a_colon() -> None:
    note = parse_note('---\nx: 1\n:a: "[[L]]"\n---\n', "n.md")
    assert [(f.key, f.line) for f in note.fields] == [("x", 2), (":a", 3)]
    assert [(lk.target, lk.line, lk.relation) for lk in note.links] == [("L", 3, ":a")]
