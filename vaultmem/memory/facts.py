"""Facts: a note's `key:: value` lines with their `was::` history, and `fact set` as a plan.

Forms read (docs/memory.md): a list item `- key:: value ^f-1a2b`, a line `key:: value`, an
inline `[key:: value]` or `(key:: value)`, and front matter properties. The history of an item
is nested right below it, newest first:

    - role:: CTO ^f-1a2b
        - source:: call with Maya
        - was:: CEO (until 2026-11-30, source: board minutes)

`plan_set` computes the line edits of `fact set`; it never writes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from vaultmem.memory.errors import Refused
from vaultmem.memory.lines import (
    LIST_ITEM_RE,
    LineEdit,
    append_to_section,
    apply,
    child_indent,
    indent_of,
    parse_lines,
    section_range,
    width,
)
from vaultmem.memory.values import (
    HISTORY_KEY,
    KEY_PATTERN,
    MAX_SOURCE_CHARS,
    SOURCE_KEY,
    check_key,
    check_value,
    key_id,
    normalise,
)
from vaultmem.model import ParsedNote

FactForm = Literal["item", "line", "inline", "property"]
SetStatus = Literal["added", "changed", "unchanged"]

FACTS_HEADINGS = ("Facts", "Key Facts")  # where a new key goes (persona notes: Key Facts)
NEW_SECTION = "Facts"
# Front matter keys that describe the note rather than state a fact about its entity.
NOTE_PROPERTIES = frozenset(
    ["aliases", "alias", "tags", "tag", "cssclasses", "cssclass", "type", "decay", "entity"]
)

_ITEM_RE = re.compile(
    rf"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{{1,9}}[.)])[ \t]+"
    rf"(?P<b>\*\*)?(?P<key>{KEY_PATTERN})(?P=b)?::(?P<value>.*)$"
)
_LINE_RE = re.compile(
    rf"^(?P<indent> {{0,3}})(?P<b>\*\*)?(?P<key>{KEY_PATTERN})(?P=b)?::(?P<value>.*)$"
)
_INLINE_VALUE = r"(?:\[\[[^\]\n]*\]\]|[^\[\]\n])*"
_BRACKET_RE = re.compile(rf"\[(?P<key>{KEY_PATTERN})::[ \t]*(?P<value>{_INLINE_VALUE})\]")
_PAREN_RE = re.compile(
    rf"\((?P<key>{KEY_PATTERN})::[ \t]*(?P<value>(?:\[\[[^\]\n]*\]\]|[^()\n])*)\)"
)
_BLOCK_RE = re.compile(r"[ \t]+\^(?P<id>[A-Za-z0-9][A-Za-z0-9\-]*)[ \t]*$")
_UNTIL_RE = re.compile(
    r"^(?P<value>.*?)[ \t]*\(until (?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:, source: (?P<source>.*))?\)[ \t]*$"
)


@dataclass(frozen=True)
class HistoryEntry:
    """An earlier value of a fact: `- was:: value (until YYYY-MM-DD, source: S)`."""

    value: str
    until: dt.date | None
    source: str | None
    line: int  # 1-based


@dataclass(frozen=True)
class Fact:
    """One current fact in a note, with its history (newest first) when it has one."""

    key: str
    value: str
    line: int  # 1-based; for a property, the line of its key in the front matter
    form: FactForm
    block: str | None = None  # the line's block id, without "^"
    source: str | None = None
    history: tuple[HistoryEntry, ...] = ()

    @property
    def key_id(self) -> str:
        return key_id(self.key)

    @property
    def changed(self) -> dt.date | None:
        """The day the current value was set, when its history says (the newest `until`)."""
        return next((h.until for h in self.history if h.until), None)


@dataclass(frozen=True)
class _Span:
    """Where a fact sits in its line, for rewriting it."""

    fact: Fact
    index: int  # 0-based line index
    value_start: int
    value_end: int
    fields_on_line: int
    children_end: int  # 0-based index after the last nested line
    source_index: int | None  # the nested `source::` line
    history_at: int  # where a new `was::` line goes (0-based)
    history_indent: str


@dataclass(frozen=True)
class FactChange:
    """What `fact set` does to a note: the edits (none when unchanged) and what they mean."""

    status: SetStatus
    key: str
    value: str
    previous: str | None
    block: str
    line: int  # 1-based line of the fact once the edits are applied
    edits: tuple[LineEdit, ...]

    def message(self, where: str) -> str:
        if self.status == "unchanged":
            return f"{where}: {self.key} is already {self.previous!r}; nothing changed"
        if self.status == "added":
            return f"{where}:{self.line}: {self.key} = {self.value!r} (new)"
        return (
            f"{where}:{self.line}: {self.key} = {self.value!r}"
            f" (was {self.previous!r}, kept as history)"
        )


# --------------------------------------------------------------------------- reading


def parse_facts(lines: Sequence[str], note: ParsedNote | None = None) -> tuple[Fact, ...]:
    """Every current fact of a note (body and front matter), in line order, with history."""
    return tuple(s.fact for s in _spans(lines, note or parse_lines(lines)))


def current(facts: Sequence[Fact], key: str) -> list[Fact]:
    """The facts holding `key` (compared as Dataview compares keys)."""
    want = key_id(key)
    return [f for f in facts if f.key_id == want]


def _spans(lines: Sequence[str], note: ParsedNote) -> list[_Span]:
    by_line: dict[int, list[tuple[str, str]]] = {}
    for field in note.fields:
        if field.source == "inline":
            by_line.setdefault(field.line, []).append((field.key, field.value))
    spans: list[_Span] = []
    nested: set[int] = set()  # lines that are a fact's history or source
    for number in sorted(by_line):
        index = number - 1
        if index in nested or index >= len(lines):
            continue
        line = lines[index]
        count = len(by_line[number])
        whole = _ITEM_RE.match(line) or _LINE_RE.match(line)
        if whole and count == 1 and not _BRACKET_RE.search(line) and not _PAREN_RE.search(line):
            if key_id(whole["key"]) in (HISTORY_KEY, SOURCE_KEY):
                continue  # a stray history line, not under a fact
            form: FactForm = "item" if whole.re is _ITEM_RE else "line"
            raw = whole["value"]
            start = whole.start("value") + len(raw) - len(raw.lstrip(" \t"))
            end = whole.end("value")
            block = _BLOCK_RE.search(line, start)
            if block:
                end = block.start()
            spans.append(_whole_span(lines, index, whole["key"], form, start, end, block, nested))
            continue
        for regex in (_BRACKET_RE, _PAREN_RE):
            for m in regex.finditer(line):
                if key_id(m["key"]) in (HISTORY_KEY, SOURCE_KEY):
                    continue
                value = m["value"].strip()
                start = m.start("value")
                block = _BLOCK_RE.search(line)
                fact = Fact(
                    m["key"].strip(), value, number, "inline", block["id"] if block else None
                )
                spans.append(
                    _Span(
                        fact,
                        index,
                        start,
                        start + len(m["value"].rstrip()),
                        count,
                        index + 1,
                        None,
                        index + 1,
                        child_indent(indent_of(line)),
                    )
                )
    spans.sort(key=lambda s: (s.index, s.value_start))
    props = [_property(k, v, note, lines) for k, v in note.frontmatter.items()]
    return [s for s in props if s is not None] + spans


def _whole_span(
    lines: Sequence[str],
    index: int,
    key: str,
    form: FactForm,
    start: int,
    end: int,
    block: re.Match[str] | None,
    nested: set[int],
) -> _Span:
    """A line or item fact and its nested lines: a `source::` and the `was::` history."""
    own = width(indent_of(lines[index]))
    n = index + 1
    children_end = n
    first_child_indent: str | None = None
    source: str | None = None
    source_index: int | None = None
    history: list[HistoryEntry] = []
    history_at: int | None = None
    while n < len(lines):
        line = lines[n]
        if not line.strip():
            # a blank line ends the item unless an indented line follows it
            nxt = next((k for k in range(n + 1, len(lines)) if lines[k].strip()), None)
            if nxt is None or width(indent_of(lines[nxt])) <= own:
                break
            n += 1
            continue
        if width(indent_of(line)) <= own:
            break
        item = _ITEM_RE.match(line)
        if item and first_child_indent is None:
            first_child_indent = item["indent"]
        if item and item["indent"] == first_child_indent:
            kid = key_id(item["key"])
            raw = item["value"].strip()
            if kid == SOURCE_KEY and source is None and not history:
                source, source_index = raw, n
                nested.add(n)
            elif kid == HISTORY_KEY:
                if history_at is None:
                    history_at = n
                found = _UNTIL_RE.match(raw)
                until = _date(found["date"]) if found else None
                history.append(
                    HistoryEntry(
                        found["value"].strip() if found else raw,
                        until,
                        found["source"].strip() if found and found["source"] else None,
                        n + 1,
                    )
                )
                nested.add(n)
        n += 1
        children_end = n
    line = lines[index]
    fact = Fact(
        key.strip(),
        line[start:end].strip(),
        index + 1,
        form,
        block["id"] if block else None,
        source,
        tuple(history),
    )
    if history_at is None:
        history_at = source_index + 1 if source_index is not None else index + 1
    indent = first_child_indent if first_child_indent is not None else child_indent(indent_of(line))
    return _Span(fact, index, start, end, 1, children_end, source_index, history_at, indent)


def _property(key: str, value: object, note: ParsedNote, lines: Sequence[str]) -> _Span | None:
    if key.lower() in NOTE_PROPERTIES or value is None or value == "" or value == []:
        return None
    shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    line = next((f.line for f in note.fields if f.source == "property" and f.key == key), 1)
    fact = Fact(key, shown, line, "property")
    return _Span(fact, line - 1, 0, 0, 1, line, None, line, "")


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


# --------------------------------------------------------------------------- block ids


def block_ids(note: ParsedNote) -> set[str]:
    return {b.id.lower() for b in note.blocks}


def new_block_id(key: str, taken: set[str]) -> str:
    """`f-` and four hex digits derived from the key, so the same key gets the same id in a
    fresh note; the next candidate is tried while one is taken (compared case-insensitively)."""
    for salt in itertools.count():
        seed = f"{key_id(key)}\0{salt}".encode()
        candidate = "f-" + hashlib.blake2b(seed, digest_size=2).hexdigest()
        if candidate not in taken:
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------- fact set


def plan_set(
    lines: Sequence[str],
    key: str,
    value: str,
    today: dt.date,
    *,
    source: str | None = None,
    line: int | None = None,
    note: ParsedNote | None = None,
) -> FactChange:
    """The edits that make `key` hold `value` in a note given as lines (see the module doc);
    `note` is their parse when the caller has it (the index's, for the revision it holds).

    A new key goes to the end of the note's `## Facts` (or `Key Facts`) section, which is
    created at the end of the note when missing. An existing key is rewritten in place and its
    old value kept right below it as `- was:: old (until today)`. A value equal to the current
    one after `normalise` changes nothing. `line` picks one of several lines holding the key.
    """
    key = check_key(key)
    value = check_value(value)
    if source is not None:
        source = check_value(source, "source", MAX_SOURCE_CHARS)
    note = note or parse_lines(lines)
    spans = [s for s in _spans(lines, note) if s.fact.key_id == key_id(key)]
    if line is not None:
        spans = [s for s in spans if s.fact.line == line]
        if not spans:
            raise Refused(f"line {line} holds no `{key}` fact")
    body = [s for s in spans if s.fact.form != "property"]
    if not spans:
        return _add(lines, note, key, value, source, _spans(lines, note))
    if len(body) != len(spans):
        prop = next(s for s in spans if s.fact.form == "property")
        raise Refused(
            f"`{prop.fact.key}` is a front matter property here (line {prop.fact.line}): vaultmem"
            f" keeps history only for body facts. Edit the property in Obsidian, or move it into"
            f" the body as `- {prop.fact.key}:: {prop.fact.value}` and run this again"
        )
    if len(body) > 1:
        where = ", ".join(str(s.fact.line) for s in body)
        raise Refused(
            f"`{key}` is set on {len(body)} lines ({where}); pick one with --line, or merge them"
        )
    return _change(lines, note, body[0], value, today, source)


def _add(
    lines: Sequence[str],
    note: ParsedNote,
    key: str,
    value: str,
    source: str | None,
    spans: Sequence[_Span],
) -> FactChange:
    """A new fact item: after the last top-level fact of the Facts section (and its history),
    else at the end of that section, else in a new `## Facts` section at the end of the note."""
    block = new_block_id(key, block_ids(note))
    new = [f"- {key}:: {value} ^{block}"]
    if source:
        new.append(f"    - {SOURCE_KEY}:: {source}")
    found = section_range(lines, note, FACTS_HEADINGS)
    items = [
        s
        for s in spans
        if found
        and found[0] < s.index < found[1]
        and s.fact.form != "property"
        and not indent_of(lines[s.index])
        and (s.fact.form != "inline" or LIST_ITEM_RE.match(lines[s.index]))
    ]
    if items:
        at = max(s.children_end for s in items)
        edit = LineEdit(at, at, tuple(new))
    else:
        edit, at = append_to_section(lines, note, FACTS_HEADINGS, new, NEW_SECTION)
    # where a note ends inside a code block, comment or math block never closed, whatever is
    # added after it is more of that block: written there, the fact would be lost from view
    # (and the next `fact set` would add it again)
    after = apply(lines, [edit])
    if not any(f.line == at + 1 and f.key_id == key_id(key) for f in parse_facts(after)):
        raise Refused(
            f"a new `{key}` fact at line {at + 1} would not read as a fact: a code block,"
            " comment or math block above it is never closed. Close it in the note (or add"
            f" `- {key}:: ...` where you want it yourself), then try again"
        )
    return FactChange("added", key, value, None, block, at + 1, (edit,))


def _change(
    lines: Sequence[str],
    note: ParsedNote,
    span: _Span,
    value: str,
    today: dt.date,
    source: str | None,
) -> FactChange:
    fact = span.fact
    if normalise(value) == normalise(fact.value):
        return FactChange(
            "unchanged", fact.key, fact.value, fact.value, fact.block or "", fact.line, ()
        )
    if fact.form == "inline" and span.fields_on_line > 1:
        raise Refused(
            f"line {fact.line} holds {span.fields_on_line} inline fields, so the history of"
            f" `{fact.key}` would have no line of its own: move it to a list item"
            f" `- {fact.key}:: {fact.value}` and run this again"
        )
    old_line = lines[span.index]
    if fact.form == "inline" and not LIST_ITEM_RE.match(old_line):
        raise Refused(
            f"`{fact.key}` sits inside paragraph text on line {fact.line}, where no history can"
            f" nest below it: move it to a list item `- {fact.key}:: {fact.value}` and run this"
            " again"
        )
    block = fact.block or new_block_id(fact.key, block_ids(note))
    before = old_line[: span.value_start]
    if before.endswith("::"):
        before += " "  # an empty value (`key::`) had no space after the colons
    rewritten = before + value + old_line[span.value_end :]
    if fact.block is None:
        if fact.form == "inline":
            rewritten = rewritten.rstrip() + f" ^{block}"
        else:
            rewritten = before + value + f" ^{block}"
    if fact.form == "line":
        # only a list item can hold a nested item: the line becomes one
        rewritten = f"{indent_of(old_line)}- {rewritten.lstrip(' ')}"
    until = today.isoformat() + (f", source: {fact.source}" if fact.source else "")
    indent = span.history_indent
    was = f"{indent}- {HISTORY_KEY}:: {fact.value} (until {until})"
    new_source = (f"{indent}- {SOURCE_KEY}:: {source}",) if source else ()
    edits = [LineEdit(span.index, span.index + 1, (rewritten,))]
    if span.source_index is not None:
        # the old source belongs to the old value: it moves into the `was::` line
        edits.append(LineEdit(span.source_index, span.source_index + 1, new_source))
    elif new_source:
        edits.append(LineEdit(span.index + 1, span.index + 1, new_source))
    if fact.value:  # an empty value (`key::`) leaves nothing to keep
        edits.append(LineEdit(span.history_at, span.history_at, (was,)))
    after = span.children_end
    if (
        fact.form == "line"
        and after < len(lines)
        and lines[after].strip()
        and not LIST_ITEM_RE.match(lines[after])
    ):
        # the next paragraph line would otherwise continue the new list item
        edits.append(LineEdit(after, after, ("",)))
    return FactChange(
        "changed", fact.key, value, fact.value, block, fact.line, tuple(_merge(edits))
    )


def _merge(edits: list[LineEdit]) -> list[LineEdit]:
    """Join insertions at one position (a source moving and a history line landing together)."""
    out: list[LineEdit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.stop != e.start)):
        if out and out[-1].start == edit.start and out[-1].stop == out[-1].start:
            prev = out.pop()
            out.append(LineEdit(edit.start, edit.stop, prev.lines + edit.lines))
        else:
            out.append(edit)
    return out
