"""Line edits: the plan a memory write hands to the write path (sections: the editor's).

A plan is a tuple of `LineEdit`s over a note's lines (without line ends, as the byte-faithful
reader gives them): replace lines[start:stop] with `lines`. The write path applies them, keeps
the file's line ends and encoding, and writes only if the digest still matches. `apply` here is
the reference semantics the tests use.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.edit.lines import (
    LIST_ITEM_RE,
    body_start,
    find_section,
    indent_of,
    section_append,
    section_end,
    width,
)
from vaultmem.model import ParsedNote
from vaultmem.parser import parse_note

__all__ = [
    "LIST_ITEM_RE",
    "LineEdit",
    "append_to_section",
    "apply",
    "body_start",
    "child_indent",
    "indent_of",
    "parse_lines",
    "section_range",
    "width",
]


@dataclass(frozen=True)
class LineEdit:
    """Replace lines[start:stop] (0-based, stop exclusive) with `lines`; start == stop inserts."""

    start: int
    stop: int
    lines: tuple[str, ...]


def apply(lines: Sequence[str], edits: Sequence[LineEdit]) -> list[str]:
    """The lines after `edits` (which must not overlap), each given against the original lines."""
    out = list(lines)
    ordered = sorted(edits, key=lambda e: (e.start, e.stop), reverse=True)
    for later, earlier in itertools.pairwise(ordered):
        if earlier.stop > later.start or earlier.start == later.start:
            raise ValueError(f"overlapping line edits: {earlier} and {later}")
    for edit in ordered:
        if not 0 <= edit.start <= edit.stop <= len(out):
            raise ValueError(f"line edit {edit} outside a note of {len(lines)} lines")
        out[edit.start : edit.stop] = edit.lines
    return out


def parse_lines(lines: Sequence[str], path: str = "note.md") -> ParsedNote:
    """The parser's view of a note given as lines (1-based line numbers, as the index has)."""
    return parse_note("\n".join(lines) + "\n" if lines else "", path)


def child_indent(parent: str) -> str:
    """The indentation of an item nested one level below a line indented `parent`."""
    return parent + ("\t" if parent.endswith("\t") else "    ")


def section_range(
    lines: Sequence[str], note: ParsedNote, names: Sequence[str]
) -> tuple[int, int] | None:
    """(heading index, stop) of the first section titled one of `names` (0-based; `stop` is
    its first subheading or the next heading), or None: the editor's sections
    (`edit.lines.find_section`), as the memory writes use them."""
    found = find_section(note.headings, names, len(lines))
    if found is None:
        return None
    return found.line - 1, section_end(found, note.headings, len(lines), subsections=False)


def append_to_section(
    lines: Sequence[str],
    note: ParsedNote,
    names: Sequence[str],
    new_lines: Sequence[str],
    heading: str,
) -> tuple[LineEdit, int]:
    """The edit adding `new_lines` (list items) to the first section titled one of `names`,
    before its first subheading, else to a new `## heading` section at the end of the note
    (the editor's `section_append` decides where); and the 0-based index of the first new line
    once applied."""
    at, block, first = section_append(
        lines, names, new_lines, subsections=False, create=heading, headings=note.headings
    )
    return LineEdit(at, at, block), first
