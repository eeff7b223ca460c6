"""The line operations on fixture notes: `fixtures/<case>/before.md` becomes `after.md`, byte for
byte, or the edit is refused with the message in `fixtures/cases.toml`."""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem import edit
from vaultmem.edit.text import decode, dominant_ending, encode, join_lines, split_lines
from vaultmem.errors import EditDoesNotApply

FIXTURES = Path(__file__).parent / "fixtures"
CASES: list[dict[str, Any]] = tomllib.loads((FIXTURES / "cases.toml").read_text())["case"]
OPERATIONS: dict[str, Callable[..., edit.Lines]] = {
    "replace_line": edit.replace_line,
    "insert_after": edit.insert_after,
    "append_to_section": edit.append_to_section,
    "set_property": edit.set_property,
    "remove_property": edit.remove_property,
    "check_task": edit.check_task,
    "uncheck_task": edit.uncheck_task,
    "strike_item": edit.strike_item,
}


def test_every_fixture_folder_has_a_case() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders == {c["name"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_operation(case: dict[str, Any]) -> None:
    folder = FIXTURES / case["name"]
    before = (folder / "before.md").read_bytes()
    text, encoding = decode(before)
    lines = split_lines(text)
    operation = OPERATIONS[case["op"]]
    if "error" in case:
        assert not (folder / "after.md").exists()
        with pytest.raises(EditDoesNotApply) as caught:
            operation(lines, **case["args"])
        assert case["error"] in str(caught.value)
        return
    after = operation(lines, **case["args"])
    assert encode(join_lines(after), encoding) == (folder / "after.md").read_bytes()


LINE_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"))
NOTE_LINES = st.lists(
    st.builds(edit.Line, LINE_TEXT, st.sampled_from(["\n", "\r\n", "\r"])), max_size=10
)


@given(NOTE_LINES, st.data())
@settings(max_examples=300, deadline=None)  # loaded machines: no time limit
def test_edits_keep_every_other_line_as_it_was(lines: list[edit.Line], data: st.DataObject) -> None:
    number = data.draw(st.integers(0, len(lines)))
    text = data.draw(st.text(st.characters(blacklist_categories=("Cs",))))
    after = edit.insert_after(lines, number, text)
    added = len(after) - len(lines)
    assert added >= 1
    assert list(after[:number]) == lines[:number]
    assert list(after[number + added :]) == lines[number:]
    assert {line.end for line in after[number : number + added]} == {dominant_ending(lines)}
    if lines and number:
        one = text.replace("\r", " ").replace("\n", " ")
        replaced = edit.replace_line(lines, number, one)
        assert replaced[number - 1] == edit.Line(one, lines[number - 1].end)
        assert [x for i, x in enumerate(replaced) if i != number - 1] == [
            x for i, x in enumerate(lines) if i != number - 1
        ]


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/edit/lines.py and text.py that the fixture cases let
# through (docs/TESTING.md, "note editor").


def _lines(text: str) -> list[edit.Line]:
    return list(split_lines(text))


def test_edits_outside_the_note_or_over_two_lines_are_refused_with_the_reason() -> None:
    lines = _lines("a\nb\n")
    for number in (3, -1):
        with pytest.raises(
            EditDoesNotApply,
            match=rf"^line {number} is outside the note \(it has 2 lines\); the note may have"
            r" changed since it was indexed$",
        ):
            edit.insert_after(lines, number, "x")
    with pytest.raises(
        EditDoesNotApply, match=r"^the new line must be one line; it holds a line break$"
    ):
        edit.replace_line(lines, 1, "x\ny")


def test_inserting_after_the_last_line_without_an_end_ends_that_line_only() -> None:
    lines = _lines("a\nb\nc")
    assert join_lines(edit.insert_after(lines, 3, "d")) == "a\nb\nc\nd"


def test_new_lines_drop_one_final_line_end_of_any_kind() -> None:
    from vaultmem.edit.text import new_lines

    assert new_lines("a\r\n", "\n") == [edit.Line("a", "\n")]
    assert new_lines("a\r", "\n") == [edit.Line("a", "\n")]
    assert new_lines("a\n", "\r\n") == [edit.Line("a", "\r\n")]
    assert new_lines("a\r\n\r\n", "\n") == [edit.Line("a", "\n"), edit.Line("", "\n")]


def test_headings_are_found_at_the_end_of_the_note_and_nested_under_themselves() -> None:
    lines = _lines("# A\ntext\n## A\nmore\n# End")
    assert edit.find_heading(lines, "End").line == 5  # on the last line
    assert edit.find_heading(lines, "A#A").line == 3  # the child, not the parent again
    with pytest.raises(EditDoesNotApply, match=r"^no heading given$"):
        edit.find_heading(lines, "#")
    with pytest.raises(EditDoesNotApply, match=r"; it has no headings$"):
        edit.append_to_section(_lines("plain\n"), "Plans", "x")


def test_checking_a_task_checked_without_a_date_adds_it_and_a_dated_one_is_left() -> None:
    day = dt.date(2026, 12, 1)
    checked = edit.check_task(_lines("- [x] done\n"), 1, day)
    assert join_lines(checked) == "- [x] done ✅ 2026-12-01\n"
    for text in ("- [X] done ✅ 2026-01-01\n", "- [X] done [completion:: 2026-01-01]\n"):
        assert join_lines(edit.check_task(_lines(text), 1, day)) == text


def test_striking_items_that_hold_tildes() -> None:
    struck = edit.strike_item(_lines("- a ~~b~~\n"), 1)
    assert join_lines(struck) == "- ~~a ~~b~~~~\n"  # ends with ~~ but was not struck whole
    assert join_lines(edit.strike_item(_lines("- ~~~~\n"), 1)) == "- ~~~~\n"  # struck already
    assert join_lines(edit.strike_item(_lines("- ~~~\n"), 1)) == "- ~~~~~~~\n"
    with pytest.raises(EditDoesNotApply, match=r"^line 1 is an empty list item; there is nothing"):
        edit.strike_item(_lines("- \n"), 1)


def test_unified_diff_is_a_patch_with_a_line_end_on_every_row() -> None:
    before = _lines("one\ntwo\nthree")
    after = _lines("one\n2\nthree")
    assert edit.unified_diff("x/n.md", before, after) == (
        "--- a/x/n.md\n+++ b/x/n.md\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )


def test_broken_utf16_names_the_byte_in_the_file() -> None:
    from vaultmem.edit.text import Undecodable

    with pytest.raises(Undecodable, match=r"not valid UTF-16 \(byte 4\)"):
        decode(b"\xff\xfe" + b"a\x00b")  # the BOM, "a", then half a character at byte 4
