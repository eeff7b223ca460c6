"""Linear-time searches of inline markdown for the parser: backtick runs, `]` and `]]`.

The parser's searches for what closes a code span or a wikilink started again from every run
of backticks or every `[[`, which is quadratic on a hostile line (100,000 `[[`, or backtick
runs of every length): a note of a megabyte took minutes. These give the same answers in
linear time by keeping what one search already found.
"""

from __future__ import annotations

import bisect
import re
import weakref

from markdown_it.rules_inline import StateInline

_TICKS_RE = re.compile(r"`+")


class TickRuns:
    """The maximal runs of backticks of one line, by length: where a code span closes."""

    def __init__(self, line: str) -> None:
        self._starts: dict[int, list[int]] = {}
        for m in _TICKS_RE.finditer(line):
            self._starts.setdefault(m.end() - m.start(), []).append(m.start())

    def closing(self, length: int, after: int) -> tuple[int, int] | None:
        """The first run of exactly `length` backticks starting at `after` or later (what
        closes a code span opened by such a run), as (start, end); None when there is none."""
        starts = self._starts.get(length)
        if not starts:
            return None
        i = bisect.bisect_left(starts, after)
        return None if i == len(starts) else (starts[i], starts[i] + length)


class NextClose:
    """Where the next `]]` is, for a scan that moves forward through one text: one search
    per `]]` found rather than one per `[[` (the text is fixed; `after` may go back)."""

    def __init__(self, text: str, mark: str = "]]") -> None:
        self.text = text
        self._mark = mark
        self._asked = -1  # the last position searched from, and what was found (-1: none)
        self._found = -1

    def after(self, start: int) -> int:
        """The position of the first mark at `start` or later; -1 when there is none."""
        asked, found = self._asked, self._found
        if asked >= 0 and asked <= start and (found < 0 or found >= start):
            return found
        found = self.text.find(self._mark, start)
        self._asked, self._found = start, found
        return found


# The finders of each inline state (one per paragraph or heading being parsed).
_NEXT_CLOSE: weakref.WeakKeyDictionary[StateInline, dict[str, NextClose]] = (
    weakref.WeakKeyDictionary()
)


def _next(state: StateInline, mark: str, start: int) -> int:
    finders = _NEXT_CLOSE.get(state)
    if finders is None:
        finders = _NEXT_CLOSE[state] = {}
    finder = finders.get(mark)
    if finder is None:
        finder = finders[mark] = NextClose(state.src, mark)
    return finder.after(start)


def next_wikilink_close(state: StateInline, start: int) -> int:
    """The first `]]` at `start` or later in the inline text being parsed, or -1."""
    return _next(state, "]]", start)


def next_bracket_close(state: StateInline, start: int) -> int:
    """The first `]` at `start` or later in the inline text being parsed, or -1."""
    return _next(state, "]", start)
