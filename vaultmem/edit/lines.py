"""Edits of a note's lines as small pure functions: lines in, new lines out, nothing on disk.

Line numbers are 1-based, as the index stores them (a task's, heading's or field's `line`).
New lines take the note's dominant line ending; every line not named keeps its own text and end.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from vaultmem.edit.text import Line, Lines, dominant_ending, new_lines, one_line, plain_text
from vaultmem.errors import EditDoesNotApply
from vaultmem.model import Heading
from vaultmem.parser import parse_note
from vaultmem.resolver import heading_key

# a list item's marker, after any indentation and blockquote/callout `>`s
_MARKER = r"[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+"
_TASK_RE = re.compile(rf"^(?P<lead>{_MARKER})\[(?P<status>[^\]])\](?P<rest>(?:[ \t].*)?)$")
_ITEM_RE = re.compile(
    rf"^(?P<lead>{_MARKER}(?:\[[^\]]\][ \t]+)?)(?P<body>.*?)"
    r"(?P<tail>(?:[ \t]+\^[A-Za-z0-9][A-Za-z0-9-]*)?[ \t]*)$"
)
_TAIL_RE = re.compile(r"(?:[ \t]+\^[A-Za-z0-9][A-Za-z0-9-]*)?[ \t]*$")  # block id, spaces
_DONE_RE = re.compile(r"[ \t]*✅[ \t]*\d{4}-\d{2}-\d{2}")
_COMPLETION_RE = re.compile(r"[ \t]*\[completion::[^\]]*\]", re.IGNORECASE)
_DATAVIEW_TASK_FIELD_RE = re.compile(
    r"\[(?:due|priority|created|start|scheduled|completion)::", re.IGNORECASE
)
_TASKS_EMOJI = ("📅", "⏳", "🛫", "➕", "🔁", "🔺", "⏫", "🔼", "🔽", "⏬", "✅", "❌")


def _line(lines: Sequence[Line], number: int) -> Line:
    if not 1 <= number <= len(lines):
        raise EditDoesNotApply(
            f"line {number} is outside the note (it has {len(lines)} lines);"
            " the note may have changed since it was indexed"
        )
    return lines[number - 1]


def _with_text(lines: Sequence[Line], number: int, text: str) -> Lines:
    old = lines[number - 1]
    return (*lines[: number - 1], Line(text, old.end), *lines[number:])


def replace_line(lines: Sequence[Line], number: int, text: str) -> Lines:
    """Line `number` now reads `text` (one line), keeping its own line end."""
    _line(lines, number)
    return _with_text(lines, number, one_line(text, "the new line"))


def insert_after(lines: Sequence[Line], number: int, text: str) -> Lines:
    """`text` (split into lines on any line end) inserted after line `number` (0: at the top).

    Inserting after the last line of a note without a final line end keeps it without one.
    """
    if not 0 <= number <= len(lines):
        _line(lines, number)  # raises the out-of-range message
    ending = dominant_ending(lines)
    added = new_lines(text, ending)
    before = list(lines[:number])
    if number == len(lines) and lines and not lines[-1].end:
        before[-1] = Line(before[-1].text, ending)
        added[-1] = Line(added[-1].text, "")
    return (*before, *added, *lines[number:])


def find_heading(lines: Sequence[Line], heading: str) -> Heading:
    """The heading `heading` names (`Heading` or `Parent#Child`), matched as Obsidian matches
    `[[Note#Heading]]`: case, punctuation and runs of spaces do not count; the first wins."""
    headings = parse_note(plain_text(lines), "note.md").headings
    if not _heading_keys(heading):
        raise EditDoesNotApply("no heading given")
    found = _find(headings, heading, len(lines))
    if found is None:
        raise _no_heading(heading, headings)
    return found


def _heading_keys(heading: str) -> list[str]:
    return [heading_key(part) for part in heading.split("#") if heading_key(part)]


def _find(headings: Sequence[Heading], heading: str, total: int) -> Heading | None:
    """The first heading `heading` (a name or `Parent#Child` path) names, or None."""
    keys = _heading_keys(heading)
    first, last = 1, total
    found: Heading | None = None
    for key in keys:
        found = next(
            (h for h in headings if first <= h.line <= last and heading_key(h.text) == key), None
        )
        if found is None:
            return None
        first, last = found.line + 1, found.end_line
    return found


def _no_heading(heading: str, headings: Sequence[Heading]) -> EditDoesNotApply:
    there = ", ".join(f"{'#' * h.level} {h.text}" for h in headings)
    return EditDoesNotApply(
        f"the note has no heading {heading!r}; "
        + (f"its headings are: {there}" if there else "it has no headings")
    )


# --------------------------------------------------------------------------- sections
# The one place that knows where a section is and where text appended to it goes: the
# editor's `append_to_section` and the memory writes (`fact set`, `loop add`) both use it.

LIST_ITEM_RE = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|$)")


def indent_of(line: str) -> str:
    """The leading spaces and tabs of a line."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indent: str) -> int:
    """Columns of leading white space (a tab counts 4, as Obsidian indents lists)."""
    return sum(4 if c == "\t" else 1 for c in indent)


def body_start(texts: Sequence[str]) -> int:
    """0-based index of the first line after the front matter (0 when there is none)."""
    if not (texts and texts[0].rstrip() == "---"):
        return 0
    for n, line in enumerate(texts[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return n + 1
    return 0


def find_section(headings: Sequence[Heading], names: Sequence[str], total: int) -> Heading | None:
    """The first heading of the note (in line order) that one of `names` names (each a
    heading or a `Parent#Child` path, matched as `find_heading` matches), or None."""
    found = [h for h in (_find(headings, name, total) for name in names) if h is not None]
    return min(found, key=lambda h: h.line) if found else None


def section_end(
    heading: Heading, headings: Sequence[Heading], total: int, *, subsections: bool = True
) -> int:
    """The last line (1-based) of the section under `heading`: with its subsections (up to
    the next heading of its level or higher), or only its own text up to its first
    subheading."""
    if subsections:
        return heading.end_line
    later = [h.line for h in headings if h.line > heading.line]
    return min(later) - 1 if later else total


def section_append(
    texts: Sequence[str],
    names: Sequence[str],
    new: Sequence[str],
    *,
    subsections: bool = True,
    create: str | None = None,
    headings: Sequence[Heading] | None = None,
) -> tuple[int, tuple[str, ...], int]:
    """Where the lines `new` go when appended to the section under the first heading one of
    `names` names: (0-based index to insert at, the lines to insert there, 0-based index of
    the first of `new` once inserted).

    They go after the section's last non-blank line (its subsections' too, unless
    `subsections` is False: then before its first subheading), so a list grows at its end and
    the blank lines before the next heading stay. After paragraph text a blank line comes
    first: a line right below a paragraph line would read as part of it. With no such section,
    `create` names a `## create` section made at the end of the note (before trailing blank
    lines); without it, EditDoesNotApply names the note's headings.
    """
    if headings is None:
        headings = parse_note("\n".join(texts) + "\n" if texts else "", "note.md").headings
    found = find_section(headings, names, len(texts))
    if found is not None:
        stop = section_end(found, headings, len(texts), subsections=subsections)
        last = found.line - 1  # 0-based, the heading
        for n in range(found.line, stop):
            if texts[n].strip():
                last = n
        at = last + 1
        if last == found.line - 1 or LIST_ITEM_RE.match(texts[last]) or _in_list(texts, last):
            return at, tuple(new), at
        return at, ("", *new), at + 1
    if create is None:
        raise _no_heading(" or ".join(names), headings)
    start = body_start(texts)
    end = len(texts)
    while end > start and not texts[end - 1].strip():
        end -= 1  # trailing blank lines stay at the very end
    lead: tuple[str, ...] = ("",) if end > start else ()
    return end, (*lead, f"## {create}", *new), end + len(lead) + 1


def _in_list(texts: Sequence[str], n: int) -> bool:
    """Whether line n is a nested line of a list item (indented under one above it)."""
    own = width(indent_of(texts[n]))
    if own == 0:
        return False
    for k in range(n - 1, -1, -1):
        line = texts[k]
        if not line.strip():
            continue
        if LIST_ITEM_RE.match(line):
            return width(indent_of(line)) < own
        if width(indent_of(line)) < own:
            return False
    return False


def append_to_section(lines: Sequence[Line], heading: str, text: str) -> Lines:
    """`text` added at the end of the section under `heading` (see `section_append`: after
    its last non-blank line, subsections included, with a blank line first after paragraph
    text), so the blank line before the next heading stays."""
    if not _heading_keys(heading):
        raise EditDoesNotApply("no heading given")
    new = text.splitlines() or [""]
    at, block, _ = section_append([line.text for line in lines], [heading], new)
    if len(block) > len(new):  # a blank line first, after paragraph text
        text = "\n" + text
    return insert_after(lines, at, text)


# --------------------------------------------------------------------------- tasks and items


def _task(lines: Sequence[Line], number: int) -> re.Match[str]:
    text = _line(lines, number).text
    m = _TASK_RE.match(text)
    # the parser has the last word: a task-looking line in a code block is no task
    if m is None or all(t.line != number for t in parse_note(plain_text(lines), "n.md").tasks):
        raise EditDoesNotApply(f"line {number} is not a task (`- [ ] text`): {text.strip()!r}")
    return m


def _without_done_date(rest: str) -> str:
    return _COMPLETION_RE.sub("", _DONE_RE.sub("", rest))


def check_task(lines: Sequence[Line], number: int, done: dt.date) -> Lines:
    """Task `number` checked with its completion date as the Tasks plugin writes it:
    `- [x] text ✅ 2026-12-01` (before a block id; other fields such as 📅 and ⏫ kept).

    A task written with Dataview fields (`[due:: …]`) gets `[completion:: …]` instead. A task
    already checked with a date is left as it is.
    """
    m = _task(lines, number)
    rest = m["rest"]
    if m["status"] in "xX" and (_DONE_RE.search(rest) or _COMPLETION_RE.search(rest)):
        return tuple(lines)
    rest = _without_done_date(rest)
    dataview = _DATAVIEW_TASK_FIELD_RE.search(rest) and not any(e in rest for e in _TASKS_EMOJI)
    stamp = f" [completion:: {done.isoformat()}]" if dataview else f" ✅ {done.isoformat()}"
    at = _TAIL_RE.search(rest)
    assert at is not None  # the pattern matches at the end of any string
    rest = rest[: at.start()] + stamp + rest[at.start() :]
    return _with_text(lines, number, f"{m['lead']}[x]{rest}")


def uncheck_task(lines: Sequence[Line], number: int) -> Lines:
    """Task `number` open again (`- [ ]`), without its completion date; the rest kept."""
    m = _task(lines, number)
    return _with_text(lines, number, f"{m['lead']}[ ]{_without_done_date(m['rest'])}")


def strike_item(lines: Sequence[Line], number: int) -> Lines:
    """List item `number` struck through: `- ~~text~~ ^id`, the marker, a task's checkbox and
    a block id outside the strike. An item struck already is left as it is."""
    text = _line(lines, number).text
    m = _ITEM_RE.match(text)
    if m is None:
        raise EditDoesNotApply(f"line {number} is not a list item: {text.strip()!r}")
    body = m["body"]
    if not body:
        raise EditDoesNotApply(f"line {number} is an empty list item; there is nothing to strike")
    if len(body) >= 4 and body.startswith("~~") and body.endswith("~~"):
        return tuple(lines)
    return _with_text(lines, number, f"{m['lead']}~~{body}~~{m['tail']}")
