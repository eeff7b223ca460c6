"""Property-based tests of the parser (Hypothesis): any bytes, any markdown built from the
syntax's own fragments, any front matter, never raise, never hang, and everything the parser
reports stays inside the note (line numbers within it, front matter within the limits)."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultmem.config import FrontMatterLimits
from vaultmem.model import ParsedNote
from vaultmem.parser import parse_note, split_front_matter
from vaultmem.scan import Unreadable, decode_note

# No per-example deadline: a 5 s one fails the test when the machine starves it of CPU
# (Hypothesis reruns a slow example, and one fast the second time is "unreliable timings", a
# failure). A hang ends at pytest's per-test timeout; the parser's bounds on hostile bodies
# are checked in tests/test_parser_bounded.py (inputs that took minutes to days before, with
# a 120 s deadline). No example database: nothing is written into the repo.
CHECKED = settings(
    # VAULTMEM_HYPOTHESIS_EXAMPLES=5000 for a longer hunt than CI's
    max_examples=int(os.environ.get("VAULTMEM_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# The syntax the parser knows, as fragments to collide with each other.
FRAGMENTS = [
    "[[",
    "]]",
    "[[Note]]",
    "[[a/b#Head#Sub|shown]]",
    "![[pic.png|600]]",
    "[[#Heading]]",
    "[[N#^blk]]",
    "[[x\\|y]]",
    "[t](note.md)",
    "[t](<a b.md>)",
    "[t](%20x.md#h)",
    "![i](i.png)",
    "[^1]",
    "[^1]: foot",
    "^[inline]",
    "#tag",
    "#nested/tag",
    "#123",
    "#",
    "`",
    "``",
    "```",
    "~~~",
    "    ",
    "\t",
    "%%",
    "<!--",
    "-->",
    "$",
    "$$",
    "\\",
    "key:: value",
    "[k:: v]",
    "(k:: [[L]])",
    "**b**:: x",
    "- ",
    "- [ ] ",
    "- [x] ",
    "1. ",
    "> ",
    "# ",
    "###### ",
    "|",
    "| a | b |\n|---|---|",
    "^block-1",
    "📅 2026-02-30",
    "✅ 2026-01-01",
    "⏫",
    "---",
    "...",
    "***",
    "<div>",
    "</div>",
    "&amp;",
    "\u2028",
    "\x0c",
    "\x00",
    "\ufeff",
    "é",
    "e\u0301",
    "\r",
    "\r\n",
    "\n",
    "\n\n",
    " ",
]

YAML_FRAGMENTS = [
    "a: 1",
    "date: 2026-02-30",
    "when: 2026-01-01 25:00:00",
    "n: " + "9" * 5000,
    "x: !!int abc",
    "t: !!timestamp nope",
    "b: !!binary '%%'",
    "p: !!python/object/apply:os.getcwd []",
    "r: &r [*r]",
    "m: &m {k: *m}",
    "l: &l [x, x, x]",
    "l2: [*l, *l, *l, *l]",
    "? [a, b]\n: c",
    "tags: [a, b]",
    "tags: a, b c",
    "aliases: Solo",
    'related: "[[X]]"',
    "list:\n  - '[[Y]]'\n  - z",
    "deep: " + "[" * 60 + "]" * 60,
    "{",
    "}",
    "[",
    "]",
    "- item",
    "  indented: x",
    '"quoted key": v',
    "a:b: c",
    "<<: *l",
    "&",
    "*",
    "!",
    "%YAML 1.2",
    "\t",
    ":",
    "#",
    '"\\ud800"',
    "1: one",
    "true: yes",
    "null: ~",
    "",
]

markdown = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=60).map(
    "".join
)
front_matter = st.lists(
    st.one_of(st.sampled_from(YAML_FRAGMENTS), st.text(max_size=10)), max_size=25
).map(lambda lines: "---\n" + "\n".join(lines) + "\n---\n")


def assert_inside(note: ParsedNote, text: str) -> None:
    """Everything the parser reports points at a line of the note."""
    last = max(note.line_count, 1)
    normalised = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = normalised.split("\n")
    if lines[-1] == "":
        lines.pop()
    assert note.line_count == len(lines)
    for link in note.links:
        assert 1 <= link.line <= last, link
    for heading in note.headings:
        assert 1 <= heading.line <= heading.end_line <= last, heading
        assert 1 <= heading.level <= 6
    for block in note.blocks:
        assert 1 <= block.line <= last, block
    for task in note.tasks:
        assert 1 <= task.line <= last, task
    for field in note.fields:
        assert 1 <= field.line <= last, field
    assert note.chunks, "every note has at least one chunk"
    for n, chunk in enumerate(note.chunks):
        assert chunk.seq == n
        assert 1 <= chunk.start_line <= chunk.end_line <= last, chunk
    json.dumps(note.frontmatter)  # plain JSON: no dates, sets or cycles left
    for key in note.frontmatter:
        assert key.encode("utf-8")  # storable as UTF-8 (no lone surrogate)


@CHECKED
@given(st.binary(max_size=3000))
def test_any_bytes_decode_and_parse(data: bytes) -> None:
    try:
        text = decode_note(data)
    except Unreadable as exc:
        assert "binary" in str(exc)
        return
    note = parse_note(text.text, "n.md")
    assert_inside(note, text.text)


@CHECKED
@given(st.text(max_size=2000))
def test_any_text_parses(text: str) -> None:
    assert_inside(parse_note(text, "n.md"), text)


@CHECKED
@given(st.one_of(st.just(""), front_matter), markdown)
def test_markdown_from_fragments_parses_inside_the_note(head: str, body: str) -> None:
    text = head + body
    note = parse_note(text, "folder/n.md")
    assert_inside(note, text)
    assert parse_note(text, "folder/n.md") == note  # and the same way every time
    assert note.title == "n"


LIMITS = FrontMatterLimits(front_matter_kb=4, properties=5, yaml_values=40, yaml_depth=4)


def count_values(value: object, depth: int = 1) -> tuple[int, int]:
    """(values, deepest nesting) of a normalised property value."""
    if isinstance(value, dict):
        inner = [count_values(v, depth + 1) for v in value.values()]
    elif isinstance(value, list):
        inner = [count_values(v, depth + 1) for v in value]
    else:
        return 1, depth - 1
    return 1 + sum(n for n, _ in inner), max([depth, *(d for _, d in inner)])


def text_size(value: object) -> int:
    """The characters of every key, string and number digit in a normalised value."""
    if isinstance(value, dict):
        return sum(len(k) + text_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(text_size(v) for v in value)
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return len(str(abs(value))) - 1  # what the parser counts is never more than this
    return 0


@CHECKED
@given(front_matter, markdown)
def test_front_matter_stays_within_the_limits(head: str, body: str) -> None:
    note = parse_note(head + body, "n.md", LIMITS)
    assert_inside(note, head + body)
    assert len(note.frontmatter) <= LIMITS.properties
    values = depth = 0
    for value in note.frontmatter.values():
        n, d = count_values(value)
        values, depth = values + n, max(depth, d)
    assert values <= LIMITS.yaml_values
    assert depth < LIMITS.yaml_depth
    assert text_size(note.frontmatter) <= LIMITS.front_matter_chars
    raw, _ = split_front_matter((head + body).replace("\r\n", "\n").replace("\r", "\n"))
    for field in note.fields:
        if field.source == "property":  # a property's line is inside the front matter
            assert raw is not None and 2 <= field.line <= raw.count("\n") + 2


@CHECKED
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join))
def test_front_matter_syntax_in_a_body_never_leaks_out(body: str) -> None:
    """Text after a broken front matter opening is still the note's text."""
    text = "---\n" + body
    assert_inside(parse_note(text, "n.md"), text)
