"""Front matter properties: any value set reads back as itself, and nothing else moves."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.edit import remove_property, set_property
from vaultmem.edit.properties import PropertyValue
from vaultmem.edit.text import join_lines, split_lines
from vaultmem.errors import EditDoesNotApply
from vaultmem.parser import parse_note

NOTE = "---\n# kept\ntitle: 'A'  # also kept\ntags: [x, y]\nlist:\n  - 1\n---\n# Body\n"
ONE_LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"))
SCALARS = st.one_of(
    ONE_LINE,
    st.integers(),
    st.booleans(),
    st.dates(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def front_matter(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text.split("---\n")[1])
    assert isinstance(loaded, dict)
    return loaded


@given(ONE_LINE.filter(lambda k: k.strip()), st.one_of(SCALARS, st.lists(SCALARS, max_size=4)))
@settings(max_examples=400, deadline=None)  # loaded machines: no time limit
def test_any_property_reads_back_as_set_and_the_rest_is_untouched(
    key: str, value: PropertyValue
) -> None:
    before = split_lines(NOTE)
    after = join_lines(set_property(before, key, value))
    assert front_matter(after)[key] == value
    assert {k: v for k, v in front_matter(after).items() if k != key} == {
        k: v for k, v in front_matter(NOTE).items() if k != key
    }
    kept = [line for line in NOTE.splitlines() if not line.startswith((key, "  - 1"))]
    if key not in ("title", "tags", "list"):
        assert all(line in after.splitlines() for line in kept)
    assert parse_note(after, "n.md").warnings == ()


def test_values_of_every_kind() -> None:
    lines = split_lines("---\na: 1\n---\n")
    cases: list[tuple[PropertyValue, str]] = [
        (None, "a:"),
        (True, "a: true"),
        (2.5, "a: 2.5"),
        ([], "a: []"),
        (("x", 1), "a:\n  - x\n  - 1"),
        (dt.datetime(2026, 12, 1, 9, 30), "a: 2026-12-01T09:30:00"),
        ("null", 'a: "null"'),
        ("  padded ", 'a: "  padded "'),
        ("tab\there", 'a: "tab\\there"'),
        ("bell\x07", 'a: "bell\\x07"'),
        ("", 'a: ""'),
        ("#tag", 'a: "#tag"'),
    ]
    for value, line in cases:
        text = join_lines(set_property(lines, "a", value))
        assert text == f"---\n{line}\n---\n", value


def test_values_a_property_cannot_hold_are_refused() -> None:
    lines = split_lines("---\na: 1\n---\n")
    with pytest.raises(EditDoesNotApply, match="is not a number"):
        set_property(lines, "a", float("nan"))
    with pytest.raises(EditDoesNotApply, match="needs a name"):
        set_property(lines, " ", "x")
    with pytest.raises(EditDoesNotApply, match="a property name must be one line"):
        set_property(lines, "a\nb", "x")


def test_a_key_line_inside_a_block_scalar_is_not_a_property() -> None:
    text = "---\nnote: |\n  status: inside\nstatus: outside\n---\n"
    after = join_lines(set_property(split_lines(text), "status", "new"))
    assert after == "---\nnote: |\n  status: inside\nstatus: new\n---\n"


def test_removing_the_last_property_keeps_the_empty_front_matter() -> None:
    assert join_lines(remove_property(split_lines("---\na: 1\n---\nx\n"), "a")) == "---\n---\nx\n"


def test_removing_from_a_note_without_front_matter() -> None:
    with pytest.raises(EditDoesNotApply, match="it has no front matter properties"):
        remove_property(split_lines("# just text\n"), "a")


def test_hostile_yaml_anchors_do_not_hang_or_crash_an_edit() -> None:
    laughs = "---\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]\n" for n in range(9)
    )
    for front in (laughs, "---\nloop: &l [*l]\n"):
        text = front + "---\nbody\n"
        after = join_lines(set_property(split_lines(text), "status", "done"))
        assert after == front + "status: done\n---\nbody\n"
        assert join_lines(remove_property(split_lines(after), "status")) == text
