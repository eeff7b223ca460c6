"""Time forms people type for `--since`, `--until`, `--date` and `--due-before`, as date ranges.

`vaultmem.dates.route` finds a date inside a search query; here a whole argument is one time
form, resolved against a fixed `today`. What `route` already reads is delegated to it (ISO
dates, "Feb 8", today, yesterday, "N days ago", this/last week and month, weekday names); the
forms below are added here and should move into `dates.py` once its tests settle:
"N weeks/months/years ago", "a week ago", "a few/couple of days ago", "last N days/weeks/months",
"past N days", this/last year, "YYYY-MM", a bare month ("march", "march 2026"), and the future
forms loops need: tomorrow, "in N days/weeks", next week/month, "next friday".
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from vaultmem.dates import route
from vaultmem.memory.errors import Refused

_UNITS = {"day": 1, "week": 7}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple of": 2,
    "a couple of": 2,
    "few": 3,
    "a few": 3,
}
_FUZZY = frozenset(["few", "a few", "couple of", "a couple of"])
_N = r"(\d+|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"
_AGO_RE = re.compile(rf"^{_N}\s+(day|week|month|year)s?\s+ago$")
_IN_RE = re.compile(rf"^in\s+{_N}\s+(day|week|month|year)s?$")
_LAST_N_RE = re.compile(rf"^(?:last|past|the last|the past)\s+{_N}\s+(day|week|month|year)s?$")
_YEAR_RE = re.compile(r"^(this|last|next) year$")
_NEXT_RE = re.compile(r"^next (week|month)$")
_YEAR_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR_ONLY_RE = re.compile(r"^(\d{4})$")
_MONTHS = (
    {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
    | {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
    | {"sept": 9}
)
_MONTH_RE = re.compile(r"^(?:in\s+)?([a-z]+)\.?(?:\s+(\d{4}))?$")
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NEXT_DAY_RE = re.compile(r"^next\s+([a-z]+)$")
_DATETIME_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?$"
)

EXAMPLES = (
    "2026-11-30, 2026-11, today, yesterday, 7 days ago, last week, this month, last 30 days,"
    " monday, last friday, march, tomorrow, in 3 days, next week"
)


@dataclass(frozen=True)
class DateRange:
    """Inclusive first and last day a time form names ("last week": Monday to Sunday)."""

    start: dt.date
    end: dt.date
    text: str

    def covers(self, day: dt.date) -> bool:
        return self.start <= day <= self.end


def resolve(text: str, today: dt.date, *, future: bool = False) -> DateRange:
    """The days a whole time form means, against `today`; Refused when it is not one.

    `future` reads a bare weekday or month as the coming one (for due dates): "friday" is
    this week's Friday or the next, "march" the next March.
    """
    found = parse(text, today, future=future)
    if found is None:
        raise Refused(f"cannot read the date {text.strip()[:60]!r}: use a form such as {EXAMPLES}")
    return found


def parse(text: str, today: dt.date, *, future: bool = False) -> DateRange | None:
    """Like `resolve`, but None for text that is not a time form."""
    raw = text.strip()
    t = " ".join(raw.lower().split())
    if not t:
        return None
    if _DATETIME_RE.match(t):
        try:
            stamp = dt.datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        return DateRange(stamp.date(), stamp.date(), raw)
    if t == "tomorrow":
        day = today + dt.timedelta(days=1)
        return DateRange(day, day, raw)
    if m := _AGO_RE.match(t):
        return _ago(m[1], m[2], today, raw)
    if m := _IN_RE.match(t):
        day = _shift(today, _count(m[1]), m[2])
        return DateRange(day, day, raw)
    if m := _LAST_N_RE.match(t):
        start = _shift(today, -_count(m[1]), m[2]) + dt.timedelta(days=1)
        return DateRange(start, today, raw)
    if m := _YEAR_RE.match(t):
        year = today.year + {"this": 0, "last": -1, "next": 1}[m[1]]
        end = today if m[1] == "this" else dt.date(year, 12, 31)
        return DateRange(dt.date(year, 1, 1), end, raw)
    if m := _NEXT_RE.match(t):
        if m[1] == "week":
            monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
            return DateRange(monday, monday + dt.timedelta(days=6), raw)
        first = _month_start(today.year, today.month + 1)
        return DateRange(first, _month_end(first), raw)
    if m := _NEXT_DAY_RE.match(t):
        if m[1] in _WEEKDAYS:
            ahead = (_WEEKDAYS[m[1]] - today.weekday()) % 7 or 7
            day = today + dt.timedelta(days=ahead)
            return DateRange(day, day, raw)
        return None
    if m := _YEAR_MONTH_RE.match(t):
        if not 1 <= int(m[2]) <= 12:
            return None
        first = dt.date(int(m[1]), int(m[2]), 1)
        return DateRange(first, _month_end(first), raw)
    if m := _YEAR_ONLY_RE.match(t):
        year = int(m[1])
        if not dt.MINYEAR <= year <= dt.MAXYEAR:
            return None
        return DateRange(dt.date(year, 1, 1), dt.date(year, 12, 31), raw)
    if (m := _MONTH_RE.match(t)) and m[1] in _MONTHS:
        month = _MONTHS[m[1]]
        year = int(m[2]) if m[2] else today.year
        if not m[2] and not future and month > today.month:
            year -= 1  # "march" in November is this year's; in January, last year's
        if not m[2] and future and month < today.month:
            year += 1
        first = dt.date(year, month, 1)
        return DateRange(first, _month_end(first), raw)
    if future and t in _WEEKDAYS:
        day = today + dt.timedelta(days=(_WEEKDAYS[t] - today.weekday()) % 7)
        return DateRange(day, day, raw)
    if found := route(t, today):
        if found.rest:  # not the whole argument: "7 days ago or so"
            return None
        return DateRange(found.start, found.end, raw)
    return None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _ago(word: str, unit: str, today: dt.date, raw: str) -> DateRange:
    """The day N units ago; "a few days ago" is fuzzy, so a window around its day."""
    n = _count(word)
    if unit in ("month", "year"):
        day = _shift(today, -n, unit)
        return DateRange(day, day, raw)
    day = today - dt.timedelta(days=n * _UNITS[unit])
    if word in _FUZZY:
        return DateRange(day - dt.timedelta(days=2), min(today, day + dt.timedelta(days=1)), raw)
    return DateRange(day, day, raw)


def _shift(day: dt.date, n: int, unit: str) -> dt.date:
    if unit == "day":
        return day + dt.timedelta(days=n)
    if unit == "week":
        return day + dt.timedelta(days=7 * n)
    months = n if unit == "month" else 12 * n
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))


def _month_start(year: int, month: int) -> dt.date:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return dt.date(year, month, 1)


def _month_end(first: dt.date) -> dt.date:
    return first.replace(day=calendar.monthrange(first.year, first.month)[1])
