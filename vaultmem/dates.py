"""Date routing: the day or days a query talks about ("yesterday", "last Monday", "Feb 8"). Pure."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_ISO_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY_RE = re.compile(
    rf"\b(?:on\s+)?(?:({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?|(\d{{1,2}})(?:st|nd|rd|th)?"
    rf"\s+(?:of\s+)?({_MONTH})\.?)(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_MONTH_YEAR_RE = re.compile(rf"\b(?:in\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_RELATIVE_RE = re.compile(
    rf"\b(?:(today|yesterday)\b|(\d+)\s+days?\s+ago\b|(last|this)\s+(weekend|week|month)\b"
    rf"|(?:(last|on|this)\s+)?({_WEEKDAY})\b)",
    re.IGNORECASE,
)


_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class DateRoute:
    """The dates a query is about (inclusive), the words saying so, and the query without them."""

    start: dt.date
    end: dt.date
    phrase: str
    rest: str

    def covers(self, day: dt.date) -> bool:
        return self.start <= day <= self.end


def route(query: str, today: dt.date) -> DateRoute | None:
    """The first date expression in `query`, resolved against `today` (an injectable clock)."""
    if m := _ISO_RE.search(query):
        try:
            day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None
        return _found(query, m, day, day)
    if m := _MONTH_DAY_RE.search(query):
        month = _MONTHS[(m[1] or m[4]).lower().rstrip(".")]
        day_of_month = int(m[2] or m[3])
        year = int(m[5]) if m[5] else today.year
        named = _date(year, month, day_of_month)
        # "Feb 8" in November means this year's; in January, last year's ("Feb 29" too, when
        # this year has none)
        if not m[5] and (named is None or named > today):
            named = _date(year - 1, month, day_of_month)
        return None if named is None else _found(query, m, named, named)
    if m := _MONTH_YEAR_RE.search(query):
        month, year = _MONTHS[m[1].lower().rstrip(".")], int(m[2])
        first = _date(year, month, 1)
        if first is not None:
            end = first.replace(day=calendar.monthrange(year, month)[1])
            return _found(query, m, first, end)
    if m := _RELATIVE_RE.search(query):
        if m[1]:
            day = today if m[1].lower() == "today" else today - dt.timedelta(days=1)
            return _found(query, m, day, day)
        if m[2]:
            try:
                day = today - dt.timedelta(days=int(m[2]))
            except OverflowError:  # "1000000 days ago" is before the year 1
                return None
            return _found(query, m, day, day)
        if m[4]:
            last = m[3].lower() == "last"
            monday = today - dt.timedelta(days=today.weekday())
            if m[4].lower() == "weekend":  # Saturday and Sunday: this week's, or the week before's
                saturday = monday + dt.timedelta(days=-2 if last else 5)
                return _found(query, m, saturday, saturday + _DAY)
            if m[4].lower() == "week":
                if last:
                    return _found(query, m, monday - dt.timedelta(days=7), monday - _DAY)
                return _found(query, m, monday, today)  # like "this month": up to today
            first = today.replace(day=1)
            if last:
                end = first - dt.timedelta(days=1)
                return _found(query, m, end.replace(day=1), end)
            return _found(query, m, first, today)
        weekday = _WEEKDAYS[m[6].lower()]
        back = (today.weekday() - weekday) % 7
        if back == 0 and (m[5] or "").lower() == "last":
            back = 7
        if m[5] is None and m[6].lower() in ("sat", "sun", "wed", "mon", "fri", "tue", "thu"):
            return None  # a bare short form ("sat", "sun") is too often an ordinary word
        day = today - dt.timedelta(days=back)
        return _found(query, m, day, day)
    return None


def since_day(text: str, today: dt.date) -> dt.date | None:
    """The first day a `--since` value names: YYYY-MM-DD, or the words queries take
    ("yesterday", "last week", "3 days ago", "Feb 8"); None when it is anything else."""
    found = route(" ".join(text.split()), today)
    if found is None or found.rest:  # other words beside the date: not a day
        return None
    return found.start


_DAY_LIKE_RE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*")


def no_such_day(text: str) -> str | None:
    """Why a YYYY-MM-DD that names no day is none ("2026-02-30: February 2026 has 28
    days"), or None when `text` is a real day or not written so."""
    m = _DAY_LIKE_RE.fullmatch(text)
    if m is None:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    written = text.strip()
    if not 1 <= month <= 12:
        return f"{written} is not a day: there is no month {month} (months run 01 to 12)"
    if year < 1:
        return f"{written} is not a day: years start at 0001"
    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        name = calendar.month_name[month]
        return f"{written} is not a day: {name} {year} has {last} days"
    return None


SINCE_HELP = "a day as YYYY-MM-DD, or words such as 'yesterday', 'last week', '3 days ago', 'Feb 8'"


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _found(query: str, m: re.Match[str], start: dt.date, end: dt.date) -> DateRoute:
    rest = " ".join((query[: m.start()] + " " + query[m.end() :]).split())
    return DateRoute(start, end, m[0].strip(), rest)


def dates_in(text: str) -> list[dt.date]:
    """ISO dates written in a path, title or property ("daily/2026-11-29.md")."""
    found = []
    for m in _ISO_RE.finditer(text):
        try:
            found.append(dt.date(int(m[1]), int(m[2]), int(m[3])))
        except ValueError:
            continue
    return found


def note_day(path: str, date: str | None) -> dt.date | None:
    """The day a note is dated: its `date` (or `created`, `captured_at`) property as the index
    keeps it, else an ISO date in its path (a daily note, "daily/2026-11-29.md"); None for an
    undated note. A file's modification time is never a note's date: a fresh copy of a vault
    would date every note today."""
    found = dates_in(date[:10]) if date else []
    if not found:
        found = dates_in(path)
    return found[0] if found else None
