"""Line edits: the reference semantics the write path must match, and where lines go."""

from __future__ import annotations

import pytest

from vaultmem.memory.lines import LineEdit, append_to_section, apply, body_start, parse_lines


def test_apply_replaces_inserts_and_deletes_against_the_original_lines() -> None:
    lines = ["a", "b", "c", "d"]
    edits = [LineEdit(0, 1, ("A",)), LineEdit(2, 2, ("x", "y")), LineEdit(3, 4, ())]
    assert apply(lines, edits) == ["A", "b", "x", "y", "c"]
    assert apply(lines, list(reversed(edits))) == ["A", "b", "x", "y", "c"]
    assert apply(lines, [LineEdit(4, 4, ("e",))]) == ["a", "b", "c", "d", "e"]
    assert lines == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    "edits",
    [
        [LineEdit(0, 2, ("x",)), LineEdit(1, 3, ("y",))],
        [LineEdit(1, 1, ("x",)), LineEdit(1, 1, ("y",))],
        [LineEdit(0, 2, ()), LineEdit(1, 1, ("y",))],
        [LineEdit(3, 9, ())],
        [LineEdit(2, 1, ())],
    ],
)
def test_apply_refuses_overlaps_and_out_of_range(edits: list[LineEdit]) -> None:
    with pytest.raises(ValueError):
        apply(["a", "b", "c", "d"], edits)


def test_body_start_skips_front_matter() -> None:
    lines = ["---", "a: 1", "---", "text"]
    assert body_start(lines) == 3
    assert body_start(["text"]) == 0
    assert body_start(["---", "no end"]) == 0


def test_append_goes_after_the_last_list_item_or_after_a_blank_line() -> None:
    lines = ["## Loops", "- [ ] a", "    - detail", "", "## Next"]
    edit, at = append_to_section(lines, parse_lines(lines), ["loops"], ["- [ ] b"], "Loops")
    assert apply(lines, [edit]) == ["## Loops", "- [ ] a", "    - detail", "- [ ] b", "", "## Next"]
    assert at == 3
    lines = ["## Loops", "Some paragraph.", "## Next"]
    edit, at = append_to_section(lines, parse_lines(lines), ["loops"], ["- [ ] b"], "Loops")
    assert apply(lines, [edit]) == ["## Loops", "Some paragraph.", "", "- [ ] b", "## Next"]
    assert at == 3


def test_append_ignores_headings_in_code_and_creates_the_section() -> None:
    lines = ["```", "## Loops", "```"]
    edit, at = append_to_section(lines, parse_lines(lines), ["Loops"], ["- [ ] b"], "Open loops")
    assert apply(lines, [edit]) == ["```", "## Loops", "```", "", "## Open loops", "- [ ] b"]
    assert at == 5


def test_append_stops_at_the_first_subheading_and_takes_the_first_named_section() -> None:
    lines = ["## Tasks", "- [ ] t", "## Open loops", "- [ ] a", "### Notes", "text", "## End"]
    edit, at = append_to_section(
        lines, parse_lines(lines), ["Open loops", "Tasks"], ["- [ ] b"], "Loops"
    )
    assert apply(lines, [edit]) == [
        "## Tasks", "- [ ] t", "- [ ] b", "## Open loops", "- [ ] a", "### Notes", "text", "## End"
    ]  # fmt: skip
    assert at == 2
    lines = lines[2:]
    edit, at = append_to_section(lines, parse_lines(lines), ["Open loops"], ["- [ ] b"], "Loops")
    assert apply(lines, [edit])[:4] == ["## Open loops", "- [ ] a", "- [ ] b", "### Notes"]
