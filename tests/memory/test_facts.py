"""Facts: the line forms, their history, dedup, block ids, refusals and `fact set` plans."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from vaultmem.memory.errors import Refused
from vaultmem.memory.facts import Fact, HistoryEntry, current, new_block_id, parse_facts, plan_set
from vaultmem.memory.lines import LineEdit, apply
from vaultmem.memory.values import MAX_VALUE_CHARS, check_key, check_value, key_id, normalise

TODAY = dt.date(2026, 11, 30)


def lines_of(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


MAYA = lines_of(
    """---
aliases: [Maya]
role: CEO
tags: [person]
---
# Maya Chen

Met at the conference.

## Facts
- city:: Berlin ^f-0001
    - source:: her email
    - was:: Paris (until 2025-01-01, source: LinkedIn (old))
    - was:: Lyon
- email:: maya@example.com
home:: flat 3

Some text with [drink:: tea] here.
- likes [food:: rice] and (sport:: tennis)
- [ ] task:: not a fact
```
code:: not a fact
```

## Notes
Later text.
"""
)


# --------------------------------------------------------------------------- reading


def test_parse_every_form_with_history_and_source() -> None:
    facts = parse_facts(MAYA)
    assert facts == (
        Fact("role", "CEO", 3, "property"),
        Fact(
            "city",
            "Berlin",
            11,
            "item",
            "f-0001",
            "her email",
            (
                HistoryEntry("Paris", dt.date(2025, 1, 1), "LinkedIn (old)", 13),
                HistoryEntry("Lyon", None, None, 14),
            ),
        ),
        Fact("email", "maya@example.com", 15, "item"),
        Fact("home", "flat 3", 16, "line"),
        Fact("drink", "tea", 18, "inline"),
        Fact("food", "rice", 19, "inline"),
        Fact("sport", "tennis", 19, "inline"),
    )
    assert facts[1].changed == dt.date(2025, 1, 1)
    assert [f.key for f in current(facts, "CITY")] == ["city"]


def test_keys_compare_the_way_dataview_reads_them() -> None:
    assert key_id("Home City") == key_id("home-city") == key_id("**home city**") == "home-city"
    facts = parse_facts(["- Home City:: Berlin"])
    assert [f.value for f in current(facts, "home-city")] == ["Berlin"]


def test_values_keep_markup_the_index_hides() -> None:
    facts = parse_facts(["- cmd:: run `npm ci` then [[Deploy|deploy]] ^f-aaaa"])
    assert facts == (Fact("cmd", "run `npm ci` then [[Deploy|deploy]]", 1, "item", "f-aaaa"),)


def test_history_stops_at_the_next_item_and_survives_a_blank_line() -> None:
    facts = parse_facts(
        ["- a:: 1", "", "    - was:: 0 (until 2026-01-02)", "- b:: 2", "    - was:: 1"]
    )
    assert facts[0].history == (HistoryEntry("0", dt.date(2026, 1, 2), None, 3),)
    assert facts[1].history == (HistoryEntry("1", None, None, 5),)


# --------------------------------------------------------------------------- normalising


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Berlin", "berlin."),
        ("New York, NY", "new york ny"),
        ("  CTO  ", "cto"),
        ("**CTO**", "CTO"),
        ("[[Maya Chen|Maya]]", "[[maya chen]]"),
        ("'tea'", "tea"),
        ("ﬁne", "fine"),  # NFKC
    ],
)
def test_normalise_equal(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("3.5", "35"), ("2026-12-01", "20261201"), ("$5", "5"), ("a@b.io", "a b io"), ("C++", "C")],
)
def test_normalise_different(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "empty fact value"),
        ("   ", "empty fact value"),
        ("two\nlines", "line break"),
        ("two\r\nlines", "line break"),
        ("para\u2029graph", "line break"),
        ("a:: b", "`::`"),
        ("x " * 5121, "at most 1,000"),
        ("hidden %% comment", "`%%`"),
        ("looks like ^block-id", "block id"),
        ("[[Unclosed", "unclosed wikilink"),
        ("a ]] b [[", "unclosed wikilink"),
        ("bell\x07", "control character (U+0007)"),
    ],
)
def test_values_refused(value: str, says: str) -> None:
    with pytest.raises(Refused, match=None) as err:
        check_value(value)
    assert says in str(err.value)


def test_ten_kilobytes_refused_with_the_size_and_what_to_do() -> None:
    with pytest.raises(Refused) as err:
        check_value("word " * 2048)
    assert "10,239 characters" in str(err.value)
    assert "store a link to it ([[Note]])" in str(err.value)


@pytest.mark.parametrize(
    "value", ["[[Maya Chen]]", "see [[Deploy#Steps|the steps]]", "x^2", "e = mc^2", "50%"]
)
def test_values_allowed(value: str) -> None:
    assert check_value(value) == value
    assert len(check_value("a" * MAX_VALUE_CHARS)) == MAX_VALUE_CHARS


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("", "empty fact key"),
        ("was", "reserved"),
        ("Source", "reserved"),
        ("1st", "not a Dataview field name"),
        ("a::b", "without `::`"),
        ("two\nlines", "one line"),
    ],
)
def test_keys_refused(key: str, says: str) -> None:
    with pytest.raises(Refused) as err:
        check_key(key)
    assert says in str(err.value)


# --------------------------------------------------------------------------- block ids


def test_block_ids_are_stable_and_skip_taken_ones() -> None:
    first = new_block_id("role", set())
    assert first == new_block_id("Role", set())
    assert first.startswith("f-") and len(first) == 6
    second = new_block_id("role", {first})
    assert second != first and second.startswith("f-")
    assert new_block_id("role", {first.upper().lower()}) == second


# --------------------------------------------------------------------------- fact set: new keys


def test_new_key_goes_to_the_end_of_the_facts_list() -> None:
    change = plan_set(MAYA, "phone", "+49 30 1234", TODAY)
    block = new_block_id("phone", {"f-0001"})
    assert change.status == "added"
    assert change.edits == (LineEdit(19, 19, (f"- phone:: +49 30 1234 ^{block}",)),)
    after = apply(MAYA, change.edits)
    assert after[change.line - 1] == f"- phone:: +49 30 1234 ^{block}"
    assert after[18:21] == [
        "- likes [food:: rice] and (sport:: tennis)",
        f"- phone:: +49 30 1234 ^{block}",
        "- [ ] task:: not a fact",
    ]


def test_new_key_in_a_note_without_facts_gets_a_section_at_the_end() -> None:
    note = ["---", "type: person", "---", "# Tom", "", "Likes jazz.", "", ""]
    change = plan_set(note, "city", "Oslo", TODAY, source="call")
    after = apply(note, change.edits)
    block = new_block_id("city", set())
    assert after == [
        "---",
        "type: person",
        "---",
        "# Tom",
        "",
        "Likes jazz.",
        "",
        "## Facts",
        f"- city:: Oslo ^{block}",
        "    - source:: call",
        "",
        "",
    ]
    assert change.line == 9
    assert parse_facts(after)[0] == Fact("city", "Oslo", 9, "item", block, "call")


def test_new_key_in_an_empty_note_and_after_front_matter_only() -> None:
    block = new_block_id("k", set())
    assert apply([], plan_set([], "k", "v", TODAY).edits) == ["## Facts", f"- k:: v ^{block}"]
    fm = ["---", "a: 1", "---"]
    assert apply(fm, plan_set(fm, "k", "v", TODAY).edits) == [*fm, "## Facts", f"- k:: v ^{block}"]


def test_new_key_goes_under_key_facts_in_a_persona_note() -> None:
    note = ["## Key Facts", "Some intro.", "", "## Decisions Made", "- none"]
    after = apply(note, plan_set(note, "k", "v", TODAY).edits)
    assert after[:5] == [
        "## Key Facts",
        "Some intro.",
        "",
        f"- k:: v ^{new_block_id('k', set())}",
        "",
    ]
    assert after[5:] == ["## Decisions Made", "- none"]


def test_empty_facts_section_gets_the_item_right_below_its_heading() -> None:
    note = ["## Facts", "", "## Other"]
    after = apply(note, plan_set(note, "k", "v", TODAY).edits)
    assert after == ["## Facts", f"- k:: v ^{new_block_id('k', set())}", "", "## Other"]


# --------------------------------------------------------------------------- fact set: changes


def test_changing_a_value_keeps_the_old_one_as_newest_history() -> None:
    change = plan_set(MAYA, "city", "Lisbon", TODAY, source="call with Maya")
    assert (change.status, change.previous, change.block, change.line) == (
        "changed",
        "Berlin",
        "f-0001",
        11,
    )
    after = apply(MAYA, change.edits)
    assert after[10:15] == [
        "- city:: Lisbon ^f-0001",
        "    - source:: call with Maya",
        "    - was:: Berlin (until 2026-11-30, source: her email)",
        "    - was:: Paris (until 2025-01-01, source: LinkedIn (old))",
        "    - was:: Lyon",
    ]
    city = current(parse_facts(after), "city")[0]
    assert city.value == "Lisbon" and city.source == "call with Maya"
    assert [h.value for h in city.history] == ["Berlin", "Paris", "Lyon"]
    assert city.history[0].until == TODAY and city.history[0].source == "her email"
    assert change.message("people/Maya Chen.md") == (
        "people/Maya Chen.md:11: city = 'Lisbon' (was 'Berlin', kept as history)"
    )


def test_changing_without_a_source_drops_the_old_source_line_into_history() -> None:
    after = apply(MAYA, plan_set(MAYA, "city", "Rome", TODAY).edits)
    assert after[10:13] == [
        "- city:: Rome ^f-0001",
        "    - was:: Berlin (until 2026-11-30, source: her email)",
        "    - was:: Paris (until 2025-01-01, source: LinkedIn (old))",
    ]
    assert len(after) == len(MAYA)


def test_a_line_without_block_id_gets_one() -> None:
    change = plan_set(MAYA, "email", "m@x.io", TODAY)
    block = new_block_id("email", {"f-0001"})
    assert apply(MAYA, change.edits)[14:16] == [
        f"- email:: m@x.io ^{block}",
        "    - was:: maya@example.com (until 2026-11-30)",
    ]


def test_a_plain_line_becomes_a_list_item_and_the_next_paragraph_stays_apart() -> None:
    note = ["role:: CTO", "email:: a@b.io", "Paragraph."]
    change = plan_set(note, "role", "CEO", TODAY)
    block = new_block_id("role", set())
    after = apply(note, change.edits)
    assert after == [
        f"- role:: CEO ^{block}",
        "    - was:: CTO (until 2026-11-30)",
        "",
        "email:: a@b.io",
        "Paragraph.",
    ]
    facts = parse_facts(after)
    assert [(f.key, f.value) for f in facts] == [("role", "CEO"), ("email", "a@b.io")]


def test_an_inline_field_in_a_list_item_is_rewritten_in_place() -> None:
    note = ["- Maya likes [drink:: tea] a lot", "- next"]
    after = apply(note, plan_set(note, "drink", "coffee", TODAY).edits)
    block = new_block_id("drink", set())
    assert after == [
        f"- Maya likes [drink:: coffee] a lot ^{block}",
        "    - was:: tea (until 2026-11-30)",
        "- next",
    ]


def test_nested_items_keep_their_indentation_style() -> None:
    note = ["- Maya", "\t- city:: Oslo"]
    after = apply(note, plan_set(note, "city", "Bergen", TODAY).edits)
    block = new_block_id("city", set())
    assert after == ["- Maya", f"\t- city:: Bergen ^{block}", "\t\t- was:: Oslo (until 2026-11-30)"]


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("drink", "inside paragraph text on line 18"),
        ("food", "line 19 holds 2 inline fields"),
        ("role", "front matter property here (line 3)"),
    ],
)
def test_changes_vaultmem_cannot_keep_history_for_are_refused(key: str, says: str) -> None:
    with pytest.raises(Refused) as err:
        plan_set(MAYA, key, "something else", TODAY)
    assert says in str(err.value)


def test_same_value_after_normalising_is_unchanged() -> None:
    change = plan_set(MAYA, "city", "  berlin. ", TODAY)
    assert (change.status, change.edits, change.value) == ("unchanged", (), "Berlin")
    assert (
        change.message("Maya Chen.md") == "Maya Chen.md: city is already 'Berlin'; nothing changed"
    )
    assert plan_set(MAYA, "drink", "TEA", TODAY).status == "unchanged"  # even where refused


def test_a_key_on_two_lines_needs_a_line() -> None:
    note = ["- tel:: 1", "- tel:: 2"]
    with pytest.raises(Refused, match=r"set on 2 lines \(1, 2\); pick one with --line"):
        plan_set(note, "tel", "3", TODAY)
    after = apply(note, plan_set(note, "tel", "3", TODAY, line=2).edits)
    assert after[0] == "- tel:: 1" and after[1].startswith("- tel:: 3 ^f-")
    with pytest.raises(Refused, match="line 5 holds no `tel` fact"):
        plan_set(note, "tel", "3", TODAY, line=5)


def test_a_wikilink_value_round_trips() -> None:
    note = ["- manager:: [[Tom]]"]
    after = apply(note, plan_set(note, "manager", "[[Maya Chen|Maya]]", TODAY).edits)
    fact = parse_facts(after)[0]
    assert fact.value == "[[Maya Chen|Maya]]"
    assert fact.history[0].value == "[[Tom]]"


NASTY = [
    "plain",
    "[[Link]]",
    "emoji 🎉 and ünïcödé",
    "tab\there",
    "trailing (until 2020-01-01)",
    "(parens) [brackets]",
    "#tag and `code`",
    "a: b",
    "x ^",
    "^lead",
    "100%",
    "*stars*",
    "<b>html</b>",
    "a::b",
    "new\nline",
    "[[x",
    "%%",
    "",
    "a" * 1001,
]


def test_every_value_is_refused_or_reads_back_exactly() -> None:
    """Fuzz: nothing is silently mangled; the old value always stays in the history."""
    rng = random.Random(11)
    for _ in range(300):
        value = " ".join(rng.sample(NASTY, rng.randint(1, 3)))
        note = ["# N", "", "## Facts", "- k:: old value ^f-0000", "- other:: x"]
        try:
            change = plan_set(note, "k", value, TODAY)
        except Refused:
            continue
        after = apply(note, change.edits)
        fact = current(parse_facts(after), "k")[0]
        assert fact.value == value.strip(" \t"), (value, after)
        assert fact.history[0].value == "old value"
        assert current(parse_facts(after), "other")[0].value == "x"


def test_filling_an_empty_value_leaves_no_empty_history() -> None:
    note = ["- phone::", "- next:: x"]
    after = apply(note, plan_set(note, "phone", "123", TODAY).edits)
    assert after == [f"- phone:: 123 ^{new_block_id('phone', set())}", "- next:: x"]
