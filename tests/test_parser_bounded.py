"""Hostile note bodies the parser once took minutes or hours on (issue 15): each now parses in
linear time, checked on an input big enough that the former quadratic (or worse) code could
not finish it within a deadline far beyond an honest run. The deadline catches a hang, never
measures speed; bench/hostile.py has the figures."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.token import Token

from vaultmem import parser
from vaultmem.parser import parse_note, wikilinks_in

DEADLINE = 120.0  # seconds; the inputs below took from ten minutes to days before
T = TypeVar("T")


def finishes(work: Callable[[], T], deadline: float = DEADLINE) -> T:
    """`work()`, failing the test when it has not returned by the deadline."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        pytest.fail(f"still running after {deadline:.0f} s")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def test_a_line_of_double_brackets_is_text() -> None:
    # 200,000 `[[`: each searched the rest of the line for `]]` (an hour or more)
    text = "[[" * 200_000 + "\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    assert note.links == ()
    assert "".join(c.text for c in note.chunks).count("[") >= 400_000 - 2 * len(note.chunks)


def test_double_brackets_then_a_real_link_keep_the_link() -> None:
    text = "[[" * 100_000 + " [[Real]] and [[Other|shown]]\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    assert [(lk.target, lk.display) for lk in note.links] == [("Real", None), ("Other", "shown")]


def test_a_megabyte_of_open_brackets_is_text() -> None:
    text = "[" * 1_000_000 + "\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    assert note.links == ()
    assert note.warnings == ()


def test_a_flood_of_brackets_before_links_keeps_the_wikilinks_and_says_so() -> None:
    # with a `]` after them, each `[` cost markdown-it a link scan (tens of microseconds):
    # over a minute for a megabyte; past MAX_LINK_BRACKETS only wikilinks are read
    text = "[x](first.md)\n\n" + "[" * 1_000_000 + " [y](y.md) [[Wiki]]\n\n[z](z.md)\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    assert [lk.target for lk in note.links] == ["first.md", "Wiki", "z.md"]
    assert len(note.warnings) == 1
    assert "[text](target) in the paragraph at line 3 are not read" in note.warnings[0]


def test_without_markdown_links_a_run_of_brackets_still_ends_in_wikilinks() -> None:
    tail = "[[[[[[A]] [[[B]] [[[[C|c]] [[D]]\n"
    text = "[[x](y.md)\n\n" + "[" * 30_000 + "]\n\n" + tail
    note = finishes(lambda: parse_note(text, "a.md"))
    assert note.warnings  # the third paragraph is read without markdown links...
    # ...and gives the wikilinks it gives when read with them
    assert [lk.target for lk in note.links] == [
        "y.md",
        *(lk.target for lk in parse_note(tail, "b.md").links),
    ]
    assert [lk.target for lk in note.links] == ["y.md", "[A", "[B", "[C", "D"]


def test_a_paragraph_of_nested_double_brackets_ends_in_time() -> None:
    text = "[[" * 200_000 + "]]\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    # as a short one reads (`[[[]]` is a link to a note named "[")
    assert [lk.target for lk in note.links] == ["["]
    assert [lk.target for lk in parse_note("[[" * 3 + "]]", "b.md").links] == ["["]


def test_heading_ranges_are_worked_out_in_one_pass() -> None:
    # a slice of the rest of the list per heading: 10^12 steps for a million headings
    found = [(1 + i % 3, i + 1, f"h{i}") for i in range(1_000_000)]
    headings = finishes(lambda: parser._headings_with_ranges(found, 1_000_000))
    assert [(h.level, h.line, h.end_line) for h in headings[:4]] == [
        (1, 1, 3),
        (2, 2, 3),  # its section holds the level-3 heading below it
        (3, 3, 3),
        (1, 4, 6),
    ]
    assert (headings[-1].line, headings[-1].end_line) == (1_000_000, 1_000_000)


def test_forty_thousand_headings_each_end_where_the_next_one_of_its_level_starts() -> None:
    text = "# Top\n" + "".join(f"## Part {i}\nline {i}\n" for i in range(40_000))
    note = finishes(lambda: parse_note(text, "a.md"))
    assert len(note.headings) == 40_001
    top, first, *_, last = note.headings
    assert (top.line, top.end_line) == (1, 80_001)
    assert (first.text, first.line, first.end_line) == ("Part 0", 2, 3)
    assert (last.text, last.line, last.end_line) == ("Part 39999", 80_000, 80_001)


def _distinct_tick_runs(count: int) -> str:
    """Runs of 2, 3, ... `count` + 1 backticks: none closes another, so each is literal text
    (and none closes a code span of one backtick)."""
    return "".join("`" * k + " " for k in range(2, count + 2))


def test_backtick_runs_of_every_length_before_a_comment() -> None:
    # each run searched the rest of the line for its closer, at each `%%`: cubic (days)
    runs = _distinct_tick_runs(3000)  # 4.5 MB on one line
    masked = finishes(lambda: parser._mask_comments(runs + "%% hidden %% shown"))
    assert masked == runs + " shown"


def test_a_comment_inside_a_code_span_among_backtick_runs_stays() -> None:
    runs = _distinct_tick_runs(3000)
    line = runs + "`%% code %%` after %% hidden"
    assert finishes(lambda: parser._mask_comments(line)) == runs + "`%% code %%` after "


def test_wikilinks_among_backtick_runs_and_double_brackets() -> None:
    line = _distinct_tick_runs(3000) + "[[" * 100_000 + " `[[Code]]` [[Real]]"
    found = finishes(lambda: [span.ref.target for span in wikilinks_in(line)])
    assert found == ["Real"]


def test_a_hundred_thousand_empty_lines() -> None:
    text = "first\n" + "\n" * 100_000 + "last [[Link]]\n"
    note = finishes(lambda: parse_note(text, "a.md"))
    assert note.line_count == 100_002
    assert [(lk.target, lk.line) for lk in note.links] == [("Link", 100_002)]
    assert [c.text for c in note.chunks if c.text.strip()][-1].endswith("last [[Link]]")


# --------------------------------------------------------------------------- same answers


def _tokens(tokens: list[Token]) -> list[object]:
    return [
        (t.type, t.content, t.markup, t.map, _tokens(t.children) if t.children else None)
        for t in tokens
    ]


_PLAIN = parser._build_markdown()
_PLAIN.inline.ruler.disable("unclosed_brackets")
_BRACKETY = st.text(alphabet="[]!`()|#^ ax\n\\*", max_size=80)


@settings(max_examples=400, deadline=None)
@given(_BRACKETY)
def test_taking_unclosed_brackets_whole_changes_no_token(text: str) -> None:
    assert _tokens(parser._MD.parse(text)) == _tokens(_PLAIN.parse(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="`%x [] \\", max_size=60))
def test_code_spans_and_comments_as_before(text: str) -> None:
    # the former search, one regex per run of backticks, as the oracle
    import re

    def code_spans(line: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        pos = 0
        while (m := re.compile(r"`+").search(line, pos)) is not None:
            if parser._escaped(line, m.start()):
                pos = m.start() + 1
                continue
            close = re.compile(rf"(?<!`){m.group(0)}(?!`)").search(line, m.end())
            if close is None:
                pos = m.end()
            else:
                spans.append((m.start(), close.end()))
                pos = close.end()
        return spans

    assert parser._code_spans(text) == code_spans(text)
