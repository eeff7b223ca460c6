"""Line edits: the plan a memory write hands to the write path, and where new lines go.

A plan is a tuple of `LineEdit`s over a note's lines (without line ends, as the byte-faithful
reader gives them): replace lines[start:stop] with `lines`. The write path applies them, keeps
the file's line ends and encoding, and writes only if the digest still matches. `apply` here is
the reference semantics the tests use.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.model import ParsedNote
from vaultmem.parser import parse_note
from vaultmem.resolver import heading_key

LIST_ITEM_RE = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|$)")


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


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indent: str) -> int:
    """Columns of leading white space (a tab counts 4, as Obsidian indents lists)."""
    return sum(4 if c == "\t" else 1 for c in indent)


def child_indent(parent: str) -> str:
    """The indentation of an item nested one level below a line indented `parent`."""
    return parent + ("\t" if parent.endswith("\t") else "    ")


def body_start(note: ParsedNote, lines: Sequence[str]) -> int:
    """0-based index of the first line after the front matter."""
    if not note.frontmatter and not (lines and lines[0].rstrip() == "---"):
        return 0
    for n, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return n + 1
    return 0


def section_range(
    lines: Sequence[str], note: ParsedNote, names: Sequence[str]
) -> tuple[int, int] | None:
    """(heading index, stop) of the first section titled one of `names` (0-based; `stop` is
    its first subheading or the next heading), or None."""
    wanted = {heading_key(n) for n in names}
    ordered = sorted(note.headings, key=lambda h: h.line)
    for i, h in enumerate(ordered):
        if heading_key(h.text) in wanted:
            stop = ordered[i + 1].line - 1 if i + 1 < len(ordered) else len(lines)
            return h.line - 1, stop
    return None


def append_to_section(
    lines: Sequence[str],
    note: ParsedNote,
    names: Sequence[str],
    new_lines: Sequence[str],
    heading: str,
) -> tuple[LineEdit, int]:
    """An edit adding `new_lines` (list items) to the first section titled one of `names`, else
    to a new `## heading` section at the end of the note; and the 0-based index of the first
    new line once applied.

    Items go after the section's last non-blank line before its first subheading, so a list
    grows at its end; after paragraph text a blank line separates them (a list right below a
    paragraph line would read as part of it in some renderers).
    """
    found = section_range(lines, note, names)
    if found is not None:
        head, stop = found
        last = head
        for n in range(head + 1, stop):
            if lines[n].strip():
                last = n
        at = last + 1
        if last == head or LIST_ITEM_RE.match(lines[last]) or _in_list(lines, last):
            return LineEdit(at, at, tuple(new_lines)), at
        return LineEdit(at, at, ("", *new_lines)), at + 1
    start = body_start(note, lines)
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1  # trailing blank lines stay at the very end
    lead: tuple[str, ...] = ("",) if end > start else ()
    block = (*lead, f"## {heading}", *new_lines)
    return LineEdit(end, end, block), end + len(lead) + 1


def _in_list(lines: Sequence[str], n: int) -> bool:
    """Whether line n is a nested line of a list item (indented under one above it)."""
    own = width(indent_of(lines[n]))
    if own == 0:
        return False
    for k in range(n - 1, -1, -1):
        line = lines[k]
        if not line.strip():
            continue
        if LIST_ITEM_RE.match(line):
            return width(indent_of(line)) < own
        if width(indent_of(line)) < own:
            return False
    return False
