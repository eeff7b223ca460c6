"""Setting and removing a front matter property, line by line (pure; nothing on disk).

Only the property's own lines change: the others keep their order, comments, quoting and list
style, because the YAML is never dumped again. The new lines are checked by loading them back,
and when the front matter was valid YAML before, it must load afterwards to the same properties
with just this one changed.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from vaultmem.edit.text import Line, Lines, dominant_ending, one_line, plain_text
from vaultmem.errors import EditDoesNotApply
from vaultmem.parser import split_front_matter

try:  # the loader the parser uses
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Scalar = str | int | float | bool | dt.date | None
PropertyValue = Scalar | list[Scalar] | tuple[Scalar, ...]

_KEY_LINE_RE = re.compile(
    r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?\[{,|>][^\t]*?|-[^\s-][^\t]*?)"""
    r"""[ \t]*:(?=[ \t]|$)(?P<value>.*)$"""
)
_ITEM_RE = re.compile(r"^(?P<indent>[ \t]*)-(?:[ \t]|$)")
_COMMENT_START_RE = re.compile(r"[ \t]+#")
_ALIAS_RE = re.compile(r"(?:^|[\s\[{,:-])[&*][^\s\]},]")
_DEFAULT_ITEM_INDENT = "  "  # Obsidian writes `tags:` then `  - a`


@dataclass(frozen=True)
class _Entry:
    key: str  # unquoted
    first: int  # 0-based index of the key line
    last: int  # 0-based index of its last line (continuation lines included)


@dataclass(frozen=True)
class _Style:
    flow: bool = False  # `[a, b]` rather than `- a` lines
    indent: str = _DEFAULT_ITEM_INDENT  # before a block list's `-`
    quote: str | None = None  # the quote a scalar was written with


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # a safe loader


def _front_matter_end(lines: Sequence[Line]) -> int | None:
    """0-based index of the line closing the front matter, or None when there is none."""
    raw, count = split_front_matter(plain_text(lines))
    return None if raw is None else count - 1


def _unquote(key: str) -> str:
    if key.startswith('"'):
        loaded = _load(key)
        return loaded if isinstance(loaded, str) else key
    if key.startswith("'"):
        return key[1:-1].replace("''", "'")
    return key.rstrip()


def _entries(lines: Sequence[Line], end: int) -> list[_Entry]:
    """The top-level properties between line 1 and the closing line `end` (0-based)."""
    entries: list[_Entry] = []
    for i in range(1, end):
        text = lines[i].text
        m = _KEY_LINE_RE.match(text) if text[:1] not in (" ", "\t", "") else None
        if m is not None:
            entries.append(_Entry(_unquote(m["key"]), i, i))
        elif entries and text.strip() and not text.startswith("#"):
            # indented lines, block list items and flow continuations belong to the property
            # above; blank lines and comments only when more of it follows
            entries[-1] = _Entry(entries[-1].key, entries[-1].first, i)
    return entries


def _find(entries: list[_Entry], key: str) -> _Entry | None:
    exact = [e for e in entries if e.key == key]
    if not exact:  # Obsidian treats property names case-insensitively
        exact = [e for e in entries if e.key.casefold() == key.casefold()]
    if len(exact) > 1:
        where = ", ".join(str(e.first + 1) for e in exact)
        raise EditDoesNotApply(
            f"property {key!r} appears more than once in the front matter (lines {where});"
            " merge them by hand first"
        )
    return exact[0] if exact else None


def _style_of(lines: Sequence[Line], entry: _Entry) -> _Style:
    m = _KEY_LINE_RE.match(lines[entry.first].text)
    assert m is not None
    value = m["value"].strip()
    if value.startswith("["):
        return _Style(flow=True)
    for i in range(entry.first + 1, entry.last + 1):
        if item := _ITEM_RE.match(lines[i].text):
            return _Style(indent=item["indent"])
    if value[:1] in ("'", '"'):
        return _Style(quote=value[0])
    return _Style()


def _list_style(lines: Sequence[Line], entries: list[_Entry]) -> _Style:
    """How this note writes lists: the first list property's style, else Obsidian's."""
    for entry in entries:
        style = _style_of(lines, entry)
        if style.flow or any(
            _ITEM_RE.match(lines[i].text) for i in range(entry.first + 1, entry.last + 1)
        ):
            return style
    return _Style()


# --------------------------------------------------------------------------- YAML values


def _printable(char: str) -> bool:
    """Whether `char` may stand unescaped in a quoted YAML scalar (YAML's printable characters,
    less NEL, U+2028 and U+2029, which YAML reads as line breaks)."""
    c = ord(char)
    return (
        0x20 <= c <= 0x7E
        or (0xA0 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
        or (0xE000 <= c <= 0xFFFD and c != 0xFEFF)
        or 0x10000 <= c <= 0x10FFFF
    )


def _double_quoted(text: str) -> str:
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\t":
            out.append("\\t")
        elif _printable(char):
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def _agreed(text: str) -> Any:
    """`text` loaded by libyaml and by PyYAML, which must agree: a plain scalar is written only
    when every YAML reader (Obsidian's too) is likely to read it the same way."""
    loaded = _load(text)
    if not _same(yaml.load(text, yaml.SafeLoader), loaded):  # the pure-Python reader
        raise ValueError("YAML readers disagree")
    return loaded


def _loads_as(text: str, value: Any, flow: bool) -> bool:
    try:
        loaded = _agreed(f"k: [{text}]" if flow else f"k: {text}")
    except (yaml.YAMLError, ValueError, RecursionError):
        return False
    expected = [value] if flow else value
    return isinstance(loaded, dict) and _same(loaded.get("k", object()), expected)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types (YAML's `1` is not the string "1", nor `true` the int 1)."""
    if isinstance(a, list) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _scalar(value: Scalar, quote: str | None = None, *, flow: bool = False) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EditDoesNotApply(f"{value!r} is not a number a property can hold")
        mantissa, e, exponent = repr(value).partition("e")
        if "." not in mantissa:  # YAML 1.1 reads `5e-324` as a string, `5.0e-324` as a number
            mantissa += ".0"
        return mantissa + e + exponent
    if isinstance(value, dt.date):  # datetime too: YAML reads both back as such
        return value.isoformat()
    text = one_line(value, "a property value")
    if quote == "'" and _printable_all(text):
        return "'" + text.replace("'", "''") + "'"
    if quote is None and text and _printable_all(text) and _loads_as(text, text, flow):
        return text
    return _double_quoted(text)


def _printable_all(text: str) -> bool:
    return all(_printable(c) for c in text)


def _key(key: str) -> str:
    key = one_line(key, "a property name")
    if not key.strip():
        raise EditDoesNotApply("a property needs a name")
    try:  # plain only when every YAML reader agrees (libyaml accepts more than PyYAML)
        plain = _printable_all(key) and _agreed(f"{key}: 1") == {key: 1} and key == key.strip()
    except (yaml.YAMLError, ValueError, RecursionError):
        plain = False
    return key if plain else _double_quoted(key)


def _render(key_text: str, value: PropertyValue, style: _Style, comment: str) -> list[str]:
    """The lines of property `key_text: value` written in `style`."""
    if isinstance(value, list | tuple):
        if not value:
            return [f"{key_text}: []{comment}"]
        if style.flow:
            items = ", ".join(_scalar(v, flow=True) for v in value)
            return [f"{key_text}: [{items}]{comment}"]
        return [f"{key_text}:{comment}"] + [f"{style.indent}- {_scalar(v)}".rstrip() for v in value]
    scalar = _scalar(value, style.quote)
    return [f"{key_text}: {scalar}{comment}" if scalar else f"{key_text}:{comment}"]


def _trailing_comment(value_text: str) -> str:
    """A ` # comment` after a one-line value, found where cutting it leaves the same value."""
    try:
        whole = _load(f"k:{value_text}")
    except (yaml.YAMLError, ValueError, RecursionError):
        return ""
    for m in _COMMENT_START_RE.finditer(value_text):
        try:
            if _load(f"k:{value_text[: m.start()]}") == whole:
                return value_text[m.start() :]
        except (yaml.YAMLError, ValueError, RecursionError):
            continue
    return ""


# --------------------------------------------------------------------------- the edits


def set_property(lines: Sequence[Line], key: str, value: PropertyValue) -> Lines:
    """Front matter property `key` set to `value` (a scalar, a date or a list of scalars),
    rewritten in place, or added last; front matter is created when the note has none."""
    ending = dominant_ending(lines)
    end = _front_matter_end(lines)
    if end is None:
        added = _render(_key(key), value, _list_style([], []), "")
        block = ["---", *added, "---"]
        new = (*(Line(t, ending) for t in block), *lines)
        _check(new, len(block) - 1, None, key, value)
        return new
    entries = _entries(lines, end)
    entry = _find(entries, key)
    old = _load_front_matter(lines, end)
    if entry is None:
        added = _render(_key(key), value, _list_style(lines, entries), "")
        new = (*lines[:end], *(Line(t, ending) for t in added), *lines[end:])
        _check(new, end + len(added), old, key, value)
        return new
    first = lines[entry.first].text
    m = _KEY_LINE_RE.match(first)
    assert m is not None
    key_text = first[: m.start("value")].rstrip()[:-1].rstrip()  # as written, quotes and all
    style = _style_of(lines, entry)
    one_line_value = entry.first == entry.last and not isinstance(value, list | tuple)
    comment = _trailing_comment(m["value"]) if one_line_value and not style.flow else ""
    rendered = _render(key_text, value, style, comment)
    # the property's lines keep their own endings, in order; lines it gains take the note's
    own = lines[entry.first : entry.last + 1]
    new_entry = [Line(t, own[i].end if i < len(own) else ending) for i, t in enumerate(rendered)]
    new = (*lines[: entry.first], *new_entry, *lines[entry.last + 1 :])
    _check(new, end - (entry.last - entry.first + 1) + len(rendered), old, entry.key, value)
    return new


def remove_property(lines: Sequence[Line], key: str) -> Lines:
    """Front matter property `key` removed with its lines; the rest untouched."""
    end = _front_matter_end(lines)
    entries = _entries(lines, end) if end is not None else []
    entry = _find(entries, key)
    if end is None or entry is None:
        names = ", ".join(e.key for e in entries)
        raise EditDoesNotApply(
            f"the note has no property {key!r}; "
            + (f"its properties are: {names}" if names else "it has no front matter properties")
        )
    old = _load_front_matter(lines, end)
    new = (*lines[: entry.first], *lines[entry.last + 1 :])
    if old is not None:
        loaded = _load_front_matter(new, end - (entry.last - entry.first + 1))
        expected = {k: v for k, v in old.items() if k != entry.key}
        if loaded is None or loaded != expected:
            raise EditDoesNotApply(f"cannot remove {key!r} without changing other properties")
    return new


def _load_front_matter(lines: Sequence[Line], end: int) -> dict[Any, Any] | None:
    """The front matter as YAML loads it, or None when it is not a valid mapping or uses
    anchors and aliases (comparing those can recurse forever or blow up exponentially: the
    "billion laughs"; such a note gets only its edited property checked)."""
    raw = _raw(lines, end)
    if _ALIAS_RE.search(raw):
        return None
    try:
        loaded = _load(raw) or {}
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _raw(lines: Sequence[Line], end: int) -> str:
    return "\n".join(line.text for line in lines[1:end])


def _check(
    new: Sequence[Line], end: int, old: dict[Any, Any] | None, key: str, value: PropertyValue
) -> None:
    """Refuse an edit whose front matter does not load back as intended (never write it)."""
    expected_value = list(value) if isinstance(value, tuple) else value
    loaded = _load_front_matter(new, end)
    if old is None or _ALIAS_RE.search(_raw(new, end)):
        # broken, absent or not to be loaded whole: the new property's own lines must load
        entry = _find(_entries(new, end), key)
        assert entry is not None
        try:
            own = _load("\n".join(line.text for line in new[entry.first : entry.last + 1]))
        except (yaml.YAMLError, ValueError, RecursionError):
            own = None
        good = isinstance(own, dict) and _same(own.get(entry.key, object()), expected_value)
    else:
        expected = {**old, key: expected_value}
        good = loaded is not None and loaded == expected and _same(loaded[key], expected_value)
    if not good:
        raise EditDoesNotApply(f"cannot write {value!r} as property {key!r} in this front matter")
