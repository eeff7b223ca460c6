"""Dates said in a sentence ("yesterday", "next Friday", "on 3 June"), resolved against the
transcript's own date rather than today's, so an old chat's "yesterday" lands on its day."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from vaultmem.memory import when

_WEEKDAY = "|".join(name.lower() for name in calendar.day_name)
_MONTH = "|".join(name.lower() for name in calendar.month_name if name)
_MONTH_ABBR = "|".join(name.lower() for name in calendar.month_abbr if name)
_N = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of|few"
_PHRASE_RE = re.compile(
    rf"""\b(?:
        (?P<iso>\d{{4}}-\d{{2}}-\d{{2}})
      | (?P<dm>(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+
               (?:{_MONTH}|{_MONTH_ABBR})\.?(?:,?\s+\d{{4}})?)
      | (?P<md>(?:on\s+)?(?:{_MONTH}|{_MONTH_ABBR})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?)
      | (?P<simple>yesterday|today|tonight|tomorrow|last\s+night|this\s+morning|this\s+evening)
      | (?P<weekend>(?:last|this|next)\s+weekend)
      | (?P<rel>(?:last|this|next)\s+(?:week|month|year|{_WEEKDAY}))
      | (?P<ago>(?:{_N})\s+(?:day|week|month|year)s?\s+ago)
      | (?P<inn>in\s+(?:{_N})\s+(?:day|week|month)s?)
      | (?P<on>on\s+(?:{_WEEKDAY}))
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class Spoken:
    """A date phrase found in a sentence and the days it means."""

    phrase: str
    start: dt.date
    end: dt.date
    at: tuple[int, int]  # where the phrase is in the sentence

    @property
    def text(self) -> str:
        """The days as a note would say them: a day, a month, a year, or `a..b`."""
        if self.start == self.end:
            return self.start.isoformat()
        first_of_month = self.start.day == 1 and self.start.month == self.end.month
        if first_of_month and (self.end + dt.timedelta(days=1)).day == 1:
            return self.start.isoformat()[:7]
        if (self.start.month, self.start.day, self.end.month, self.end.day) == (1, 1, 12, 31):
            return str(self.start.year)
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


def find(sentence: str, today: dt.date, *, future: bool = False) -> Spoken | None:
    """The first date phrase in `sentence`, resolved against `today` (the transcript's day).

    `future` reads an open weekday ("on Friday") as the coming one, for due dates; otherwise
    as the last one.
    """
    for m in _PHRASE_RE.finditer(sentence):
        found = _resolve(m, today, future)
        if found is not None:
            return Spoken(m.group(0), found[0], found[1], m.span())
    return None


def _resolve(m: re.Match[str], today: dt.date, future: bool) -> tuple[dt.date, dt.date] | None:
    text = " ".join(m.group(0).lower().split())
    if m["simple"]:
        shift = {"yesterday": -1, "last night": -1, "tomorrow": 1}.get(text, 0)
        day = today + dt.timedelta(days=shift)
        return day, day
    if m["weekend"]:
        saturday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=5)
        saturday += dt.timedelta(days={"last": -7, "this": 0, "next": 7}[text.split()[0]])
        return saturday, saturday + dt.timedelta(days=1)
    if m["on"]:
        name = text.split()[-1]
        target = list(calendar.day_name).index(name.capitalize())
        if future:
            day = today + dt.timedelta(days=(target - today.weekday()) % 7 or 7)
        else:
            day = today - dt.timedelta(days=(today.weekday() - target) % 7 or 7)
        return day, day
    if m["dm"] or m["md"]:
        words = re.sub(r"\b(on|the|of)\b|(?<=\d)(st|nd|rd|th)\b|[.,]", " ", text)
        return _month_day(" ".join(words.split()), today, future)
    found = when.parse(text, today, future=future)
    if found is None:
        return None
    return found.start, found.end


def _month_day(text: str, today: dt.date, future: bool) -> tuple[dt.date, dt.date] | None:
    parts = text.split()
    month_word = next((p for p in parts if not p.isdigit()), "")
    numbers = [int(p) for p in parts if p.isdigit()]
    month = _month_number(month_word)
    if month is None or not numbers:
        return None
    day_of_month = numbers[0] if numbers[0] <= 31 else (numbers[1] if len(numbers) > 1 else 0)
    year = next((n for n in numbers if n > 31), None)
    try:
        if year is not None:
            day = dt.date(year, month, day_of_month)
        else:
            day = dt.date(today.year, month, day_of_month)
            if future and day < today:
                day = dt.date(today.year + 1, month, day_of_month)
            elif not future and day > today:
                day = dt.date(today.year - 1, month, day_of_month)
    except ValueError:
        return None
    return day, day


def _month_number(word: str) -> int | None:
    word = word.lower().rstrip(".")
    for i in range(1, 13):
        if word in (calendar.month_name[i].lower(), calendar.month_abbr[i].lower()):
            return i
    return None
