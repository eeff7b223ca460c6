"""New notes from templates with Obsidian's core Templates placeholders (pure)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import PurePosixPath

from vaultmem.edit.text import one_line
from vaultmem.edit.writing import Change, plan_new_note

# `{{title}}`, `{{date}}`, `{{time}}`, `{{date:YYYY-MM-DD}}`, spaces and case free, as Obsidian's
# core Templates plugin reads them; anything else in braces stays as written.
_PLACEHOLDER_RE = re.compile(r"\{\{\s*(title|date|time)\s*(?::([^}]*))?\}\}", re.IGNORECASE)
# moment.js format tokens (the subset dates and times need); `[text]` is literal
_TOKEN_RE = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|ss|A|a")
_DEFAULT_FORMAT = {"date": "YYYY-MM-DD", "time": "HH:mm"}


def _format(when: dt.datetime, pattern: str) -> str:
    def token(m: re.Match[str]) -> str:
        t = m.group()
        if t.startswith("["):
            return t[1:-1]
        hour12 = when.hour % 12 or 12
        return {
            "YYYY": f"{when.year:04d}",
            "YY": f"{when.year % 100:02d}",
            "MMMM": when.strftime("%B"),
            "MMM": when.strftime("%b"),
            "MM": f"{when.month:02d}",
            "M": str(when.month),
            "DD": f"{when.day:02d}",
            "D": str(when.day),
            "dddd": when.strftime("%A"),
            "ddd": when.strftime("%a"),
            "HH": f"{when.hour:02d}",
            "H": str(when.hour),
            "hh": f"{hour12:02d}",
            "h": str(hour12),
            "mm": f"{when.minute:02d}",
            "ss": f"{when.second:02d}",
            "A": "AM" if when.hour < 12 else "PM",
            "a": "am" if when.hour < 12 else "pm",
        }[t]

    return _TOKEN_RE.sub(token, pattern)


def render_template(template: str, *, title: str, now: dt.datetime) -> str:
    """`template` with `{{title}}`, `{{date}}` and `{{time}}` (optionally `{{date:FORMAT}}`)
    filled in; other text, other placeholders included, is kept as written."""
    one_line(title, "a note title")

    def fill(m: re.Match[str]) -> str:
        name = m.group(1).lower()
        if name == "title":
            return title
        return _format(now, (m.group(2) or "").strip() or _DEFAULT_FORMAT[name])

    return _PLACEHOLDER_RE.sub(fill, template)


def plan_note_from_template(path: str, template: str, *, now: dt.datetime) -> Change:
    """The write creating note `path` from `template` (its title is the file name)."""
    title = PurePosixPath(path).name
    title = title[:-3] if title.lower().endswith(".md") else title
    return plan_new_note(path, render_template(template, title=title, now=now))
