"""`fact set` on any note: the value is read back, and every line it did not mean to change
(front matter, other facts, text that looks like markdown or YAML) is kept byte for byte."""

from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultmem.edit.text import Line
from vaultmem.memory import facts as fc
from vaultmem.memory.errors import Refused
from vaultmem.memory_writes import apply_edits

TODAY = dt.date(2026, 12, 2)
KEYS = st.sampled_from(["city", "role", "home city", "Role"])

# lines a note holds: its own facts (of the key or others, with history), tasks, headings,
# fences, comments, YAML-looking text, wikilinks, blank lines, odd whitespace
BODY_LINE = st.one_of(
    st.builds(lambda k, v: f"- {k}:: {v}", KEYS, st.sampled_from(["Berlin", "CEO", "[[Paris]]"])),
    st.builds(lambda k, v: f"{k}:: {v}", KEYS, st.sampled_from(["x", "y z"])),
    st.just("    - was:: Bonn (until 2025-01-01)"),
    st.sampled_from(
        [
            "",
            "# Maya",
            "## Facts",
            "## Open loops",
            "- [ ] call back",
            "---",
            "```",
            "%%",
            "<!-- note -->",
            "key: value",
            "\tindented:: tab",
            "text with [[Link]] and #tag",
            "  ",
            "> quote role:: CTO",
            "| a | b |",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12),
)
FRONT_MATTER = st.one_of(
    st.just([]),
    st.lists(
        st.sampled_from(
            [
                "title: Maya",
                "city: Berlin",
                "aliases: [M, May]",
                "tags:\t[a]",
                "key: 1",
                "key: 2",
                "base: &b {x: 1}",
                "other: *b",
                "- a list item",
                "# a comment",
                "broken: [unclosed",
            ]
        ),
        max_size=5,
    ).map(lambda lines: ["---", *lines, "---"]),
)
VALUE = st.one_of(
    st.sampled_from(["Lisbon", "[[Lisbon]]", "a --- b", "🎉 مرحبا שלום", "# not a heading"]),
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30),
)


@given(
    FRONT_MATTER,
    st.lists(BODY_LINE, max_size=12),
    KEYS,
    VALUE,
    st.lists(st.sampled_from(["\n", "\r\n"]), min_size=1, max_size=4),
    st.booleans(),
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fact_set_keeps_every_other_line_and_reads_back(
    front: list[str],
    body: list[str],
    key: str,
    value: str,
    ends: list[str],
    final_newline: bool,
) -> None:
    texts = [*front, *body]
    lines = [Line(t, ends[n % len(ends)]) for n, t in enumerate(texts)]
    if lines and not final_newline:
        lines[-1] = Line(lines[-1].text, "")
    try:
        planned = fc.plan_set(texts, key, value, TODAY)
    except Refused:
        return  # a value or a note vaultmem will not write: nothing is written, fine
    after = apply_edits(lines, planned.edits)
    # every line the plan did not replace is there, in order, with its own line end
    replaced = {n for e in planned.edits for n in range(e.start, e.stop)}
    kept = [line for n, line in enumerate(lines) if n not in replaced]
    assert _in_order(kept, after), (texts, planned.edits, after)
    assert len(replaced) <= 1
    # the front matter is untouched, and so is a missing final line end
    assert [line.text for line in after[: len(front)]] == front
    ended = [line for line in lines[: len(front)] if line.end]
    assert list(after[: len(ended)]) == ended
    if lines and not final_newline:
        assert after[-1].end == ""
    # the value reads back as the key's one current value
    got = fc.current(fc.parse_facts([line.text for line in after]), key)
    assert [f.value for f in got if f.form != "property"] == [planned.value], (texts, after)


def _in_order(kept: list[Line], after: tuple[Line, ...]) -> bool:
    """Whether `kept` are lines of `after` in order; a last line without an end may have
    gained one (the lines added after it need it)."""
    it = iter(after)
    for n, line in enumerate(kept):
        loose = n == len(kept) - 1 and line.end == ""
        if not any(o == line or (loose and o.text == line.text) for o in it):
            return False
    return True


def test_a_new_fact_after_a_block_never_closed_is_refused() -> None:
    # it was written inside the block: `fact set` said "added", nothing read it back, and the
    # next `fact set` of the key added it again
    for opener in ("```", "~~~", "%%"):
        lines = ["# Maya", "", opener, "some code"]
        try:
            fc.plan_set(lines, "city", "Lisbon", TODAY)
        except Refused as exc:
            assert str(exc).startswith("a new `city` fact at line 7 would not read as a fact:")
        else:
            raise AssertionError(f"a fact was planned inside {opener}")
    closed = fc.plan_set(["# Maya", "```", "code", "```"], "city", "Lisbon", TODAY)
    assert closed.status == "added"


def test_a_value_of_only_unicode_spaces_is_empty() -> None:
    for blank in ("\xa0", "\u3000 ", "\u2003"):
        try:
            fc.plan_set(["# Maya"], "city", blank, TODAY)
        except Refused as exc:
            assert str(exc).startswith("empty fact value")
        else:
            raise AssertionError(f"{blank!r} was planned as a value")
    assert fc.plan_set(["# Maya"], "city", "\xa0Lisbon\u3000", TODAY).value == "Lisbon"
