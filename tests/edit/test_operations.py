"""The line operations on fixture notes: `fixtures/<case>/before.md` becomes `after.md`, byte for
byte, or the edit is refused with the message in `fixtures/cases.toml`."""

from __future__ import annotations

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
