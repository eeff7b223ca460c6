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


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/edit/properties.py that the tests above let through
# (docs/TESTING.md, "note editor: the rest"): exact output for each style a note can have, and the
# checks that refuse an edit whose front matter would not load back as intended.


def _set(text: str, key: str, value: PropertyValue) -> str:
    return join_lines(set_property(split_lines(text), key, value))


def test_values_written_exactly() -> None:
    front = "---\na: 1\n---\n"
    for value, line in [
        (False, "a: false"),
        (1e-05, "a: 1.0e-05"),
        (5e-324, "a: 5.0e-324"),
        (1e16, "a: 1.0e+16"),
        ("a, b", "a: a, b"),  # plain in a block value, though not in a flow list
        (["a, b", "c"], "a:\n  - a, b\n  - c"),
    ]:
        assert _set(front, "a", value) == f"---\n{line}\n---\n", value
    assert _set("---\nt: [x]\n---\n", "t", ["a, b", "c"]) == '---\nt: ["a, b", c]\n---\n'


def test_quoting_and_spacing_as_the_note_wrote_them() -> None:
    assert _set('---\ntitle: "A"\n---\n', "title", "B") == '---\ntitle: "B"\n---\n'
    assert _set("---\n'it''s': x\n---\n", "it's", "y") == "---\n'it''s': y\n---\n"
    assert _set('---\n"a b": x\n---\n', "a b", "y") == '---\n"a b": y\n---\n'
    assert _set("---\na : 1\n---\n", "a", 2) == "---\na: 2\n---\n"


def test_comments_kept_only_where_they_end_a_one_line_value() -> None:
    assert _set('---\na: "x #y" # z\n---\n', "a", "w") == '---\na: "w" # z\n---\n'
    assert _set('---\na: "unclosed\n---\n', "a", "w") == '---\na: "w"\n---\n'
    assert _set("---\nl: # my list\n  - a\n---\n", "l", "x") == "---\nl: x\n---\n"
    assert _set("---\nt: [a, b] # c\n---\n", "t", "x") == "---\nt: x\n---\n"


def test_a_list_in_place_of_a_scalar_takes_obsidians_indent_not_its_neighbours() -> None:
    text = "---\nlist:\n    - a\nname: x\n---\n"
    assert _set(text, "name", ["p"]) == "---\nlist:\n    - a\nname:\n  - p\n---\n"


def test_line_ends_of_added_and_rewritten_property_lines() -> None:
    crlf = "---\r\na: 1\r\nb: 2\n---\r\nbody\r\n"
    assert _set(crlf, "a", ["x", "y"]) == "---\r\na:\r\n  - x\r\n  - y\r\nb: 2\n---\r\nbody\r\n"
    assert _set(crlf, "c", 3) == "---\r\na: 1\r\nb: 2\nc: 3\r\n---\r\nbody\r\n"
    assert _set("# no front matter\r\n", "c", 3) == "---\r\nc: 3\r\n---\r\n# no front matter\r\n"


def test_a_name_in_two_cases_is_found_by_its_exact_spelling_first() -> None:
    text = "---\nTag: a\ntag: b\n---\n"
    assert _set(text, "tag", "c") == "---\nTag: a\ntag: c\n---\n"
    with pytest.raises(EditDoesNotApply) as caught:
        _set("---\nTag: a\nTAG: b\n---\n", "tag", "c")
    assert str(caught.value) == (
        "property 'tag' appears more than once in the front matter (lines 2, 3); merge them by"
        " hand first"
    )


def test_refusals_name_the_property_whole() -> None:
    with pytest.raises(EditDoesNotApply) as caught:
        _set("---\na: 1\n---\n", " ", "x")
    assert str(caught.value) == "a property needs a name"
    with pytest.raises(EditDoesNotApply) as caught:
        remove_property(split_lines("# none\n"), "a")
    assert str(caught.value) == "the note has no property 'a'; it has no front matter properties"


def test_a_removal_that_would_take_another_property_with_it_is_refused() -> None:
    text = "---\na: 1\n? b\n: 2\n---\n"  # `b` is a complex key written on the lines below `a`
    with pytest.raises(EditDoesNotApply) as caught:
        remove_property(split_lines(text), "a")
    assert str(caught.value) == "cannot remove 'a' without changing other properties"


def test_front_matter_that_is_not_a_mapping_gets_only_the_new_property_checked() -> None:
    assert _set("---\n- a\n---\n", "k", "v") == "---\n- a\nk: v\n---\n"


def test_yaml_printable_characters_at_every_edge() -> None:
    from vaultmem.edit.properties import _printable

    edges = {
        0x1F: False, 0x20: True, 0x7E: True, 0x7F: False, 0x9F: False, 0xA0: True,
        0x2027: True, 0x2028: False, 0x2029: False, 0x202A: True, 0xD7FF: True,
        0xD800: False, 0xDFFF: False, 0xE000: True, 0xFEFE: True, 0xFEFF: False,
        0xFF00: True, 0xFFFD: True, 0xFFFE: False, 0xFFFF: False, 0x10000: True,
        0x10001: True, 0x10FFFF: True,
    }  # fmt: skip
    assert {c: _printable(chr(c)) for c in edges} == edges


def test_characters_yaml_cannot_print_are_escaped_by_their_width() -> None:
    from vaultmem.edit.properties import _double_quoted

    assert _double_quoted('"\\\t\x85\x7f\u2028\ufeff\uffff\U0001f600é') == (
        '"\\"\\\\\\t\\x85\\x7f\\u2028\\ufeff\\uffff\U0001f600é"'
    )


def test_values_are_the_same_only_when_equal_and_of_the_same_types() -> None:
    from vaultmem.edit.properties import _same

    assert _same([1, "a"], (1, "a")) and _same({"a": [1]}, {"a": [1]})
    assert not _same("a", ["a"]) and not _same(["a"], "a")
    assert not _same({"a": 1}, "a") and not _same({"a": 1}, {"b": 1})
    assert not _same({"a": 1}, {"a": True}) and not _same([1], [True])


def test_the_last_check_refuses_front_matter_that_does_not_load_as_intended() -> None:
    from vaultmem.edit.properties import _check

    def check(text: str, old: dict[str, object] | None, key: str, value: PropertyValue) -> None:
        lines = split_lines(text)
        _check(lines, text.count("\n", 0, text.rindex("---")), old, key, value)

    check("---\na:\n  - x\n---\n", None, "a", ["x"])  # the property's own lines load: good
    check("---\na: 1\n---\n", {"a": 0}, "a", 1)
    for text, old, value in [
        ("---\na: 1\n---\n", {"a": 0}, True),  # 1 == True, yet not the same value
        ("---\na: 1\n---\n", None, "1"),
        ("---\na: [\n---\n", None, "x"),  # does not load at all
    ]:
        with pytest.raises(EditDoesNotApply) as caught:
            check(text, old, "a", value)
        assert str(caught.value) == f"cannot write {value!r} as property 'a' in this front matter"


def test_a_key_yaml_reads_as_a_number_is_never_written_unchecked() -> None:
    """`1:` is the integer 1 to YAML, not the property "1": in front matter that does not
    load, the new line is checked on its own, and a value it cannot find is refused."""
    with pytest.raises(EditDoesNotApply, match=r"^cannot write None as property '1'"):
        _set("---\n1: x\nbad: [\n---\n", "1", None)
