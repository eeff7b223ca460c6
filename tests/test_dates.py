"""Date routing with a fixed clock: Monday 2026-11-30."""

from __future__ import annotations

import datetime as dt

import pytest

from vaultmem.dates import dates_in, route, since_day

TODAY = dt.date(2026, 11, 30)  # a Monday


@pytest.mark.parametrize(
    ("query", "start", "end", "rest"),
    [
        ("what did I do yesterday", "2026-11-29", "2026-11-29", "what did I do"),
        ("notes from today", "2026-11-30", "2026-11-30", "notes from"),
        ("meeting last Monday", "2026-11-23", "2026-11-23", "meeting"),
        ("run on Saturday", "2026-11-28", "2026-11-28", "run"),
        ("standup Monday", "2026-11-30", "2026-11-30", "standup"),
        ("dentist Feb 8", "2026-02-08", "2026-02-08", "dentist"),
        ("party on 8th of February", "2026-02-08", "2026-02-08", "party"),
        ("trip December 3", "2025-12-03", "2025-12-03", "trip"),  # not yet this year: last year's
        ("review Feb 8, 2024", "2024-02-08", "2024-02-08", "review"),
        ("log 2026-11-28 outage", "2026-11-28", "2026-11-28", "log outage"),
        ("3 days ago", "2026-11-27", "2026-11-27", ""),
        ("what happened last week", "2026-11-23", "2026-11-29", "what happened"),
        ("this month", "2026-11-01", "2026-11-30", ""),
        ("last month budget", "2026-10-01", "2026-10-31", "budget"),
        # a month and a year, no day: the whole month
        ("what did she paint in May 2023?", "2023-05-01", "2023-05-31", "what did she paint ?"),
        ("trip in January, 2022", "2022-01-01", "2022-01-31", "trip"),
        ("leap Feb 2024", "2024-02-01", "2024-02-29", "leap"),
        ("sept. 2021 notes", "2021-09-01", "2021-09-30", "notes"),
        ("december 4, 2023 in May 2022", "2023-12-04", "2023-12-04", "in May 2022"),  # a day first
        ("on 25 December 2024", "2024-12-25", "2024-12-25", ""),
        # a weekend is its Saturday and Sunday, not the week ("last weekend" read as "last week"
        # once, leaving "end" among the words searched for)
        ("hike last weekend", "2026-11-28", "2026-11-29", "hike"),
        ("dinner this weekend?", "2026-12-05", "2026-12-06", "dinner ?"),
    ],
)
def test_route(query: str, start: str, end: str, rest: str) -> None:
    found = route(query, TODAY)
    assert found is not None
    assert (found.start.isoformat(), found.end.isoformat(), found.rest) == (start, end, rest)


@pytest.mark.parametrize(
    "query",
    ["heat pump tariff", "2026-13-45 bad date", "Feb 30", "sun and sat", "may I", "may I ask 2023",
     "May 0000", "mayday 2023", "this monthly report", "last weekday", "yesterdays news",
     "3 days agony", "Sundays"],
)
def test_no_route(query: str) -> None:
    assert route(query, TODAY) is None


def test_dates_in() -> None:
    assert dates_in("daily/2026-11-29.md and 2026-02-30") == [dt.date(2026, 11, 29)]


# --- boundaries: fixed clocks on the first and last days of months and years, on 29 February
# (and the day after it), mid-month and on each weekday. Every answer is checked for both ends,
# inclusive: the day before the start and the day after the end are outside the route.

NEW_YEAR = dt.date(2026, 1, 1)  # a Thursday, first day of a year and of a month
YEAR_END = dt.date(2025, 12, 31)  # a Wednesday, last day of a year
LEAP_DAY = dt.date(2024, 2, 29)  # a Thursday
AFTER_LEAP_DAY = dt.date(2024, 3, 1)  # a Friday
AFTER_FEB_28 = dt.date(2025, 3, 1)  # a Saturday; 2025 has no 29 February
FEB_END = dt.date(2026, 2, 28)  # a Saturday, last day of a February without a 29th
MARCH_END = dt.date(2026, 3, 31)  # a Tuesday: last month is shorter than this one
MID_MONTH = dt.date(2026, 11, 15)  # a Sunday
FEB_8 = dt.date(2026, 2, 8)  # a Sunday


def _case_id(value: object) -> str | None:
    return value.isoformat() if isinstance(value, dt.date) else None


def assert_route(query: str, today: dt.date, start: str, end: str | None = None) -> None:
    found = route(query, today)
    assert found is not None, f"{query!r} on {today}: no route"
    first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end or start)
    assert (found.start, found.end) == (first, last), f"{query!r} on {today}"
    day = dt.timedelta(days=1)
    assert found.covers(first) and found.covers(last)
    assert not found.covers(first - day) and not found.covers(last + day)


@pytest.mark.parametrize(
    ("today", "query", "start", "end"),
    [
        # the first day of a year
        (NEW_YEAR, "today", "2026-01-01", None),
        (NEW_YEAR, "yesterday", "2025-12-31", None),
        (NEW_YEAR, "0 days ago", "2026-01-01", None),
        (NEW_YEAR, "1 day ago", "2025-12-31", None),
        (NEW_YEAR, "7 days ago", "2025-12-25", None),
        (NEW_YEAR, "365 days ago", "2025-01-01", None),
        (NEW_YEAR, "this week", "2025-12-29", "2026-01-01"),
        (NEW_YEAR, "last week", "2025-12-22", "2025-12-28"),
        (NEW_YEAR, "this month", "2026-01-01", "2026-01-01"),
        (NEW_YEAR, "last month", "2025-12-01", "2025-12-31"),
        (NEW_YEAR, "Thursday", "2026-01-01", None),
        (NEW_YEAR, "on Thursday", "2026-01-01", None),
        (NEW_YEAR, "this Thursday", "2026-01-01", None),
        (NEW_YEAR, "last Thursday", "2025-12-25", None),
        (NEW_YEAR, "last Wednesday", "2025-12-31", None),
        (NEW_YEAR, "Friday", "2025-12-26", None),
        (NEW_YEAR, "last Friday", "2025-12-26", None),
        (NEW_YEAR, "Jan 1", "2026-01-01", None),
        (NEW_YEAR, "1 January", "2026-01-01", None),
        (NEW_YEAR, "Jan 2", "2025-01-02", None),  # tomorrow: last year's
        (NEW_YEAR, "Dec 31", "2025-12-31", None),
        (NEW_YEAR, "31st of December", "2025-12-31", None),
        (NEW_YEAR, "Dec 31, 2026", "2026-12-31", None),  # a year given is kept, even ahead
        (NEW_YEAR, "2026-01-01", "2026-01-01", None),
        # the last day of a year
        (YEAR_END, "today", "2025-12-31", None),
        (YEAR_END, "yesterday", "2025-12-30", None),
        (YEAR_END, "30 days ago", "2025-12-01", None),
        (YEAR_END, "this week", "2025-12-29", "2025-12-31"),
        (YEAR_END, "last week", "2025-12-22", "2025-12-28"),
        (YEAR_END, "this month", "2025-12-01", "2025-12-31"),
        (YEAR_END, "last month", "2025-11-01", "2025-11-30"),
        (YEAR_END, "last Wednesday", "2025-12-24", None),
        (YEAR_END, "Sunday", "2025-12-28", None),
        (YEAR_END, "Dec 31", "2025-12-31", None),
        (YEAR_END, "Jan 1", "2025-01-01", None),
        (YEAR_END, "2025-12-31", "2025-12-31", None),
        # 29 February
        (LEAP_DAY, "today", "2024-02-29", None),
        (LEAP_DAY, "yesterday", "2024-02-28", None),
        (LEAP_DAY, "29 days ago", "2024-01-31", None),
        (LEAP_DAY, "365 days ago", "2023-03-01", None),
        (LEAP_DAY, "366 days ago", "2023-02-28", None),
        (LEAP_DAY, "this week", "2024-02-26", "2024-02-29"),
        (LEAP_DAY, "last week", "2024-02-19", "2024-02-25"),
        (LEAP_DAY, "this month", "2024-02-01", "2024-02-29"),
        (LEAP_DAY, "last month", "2024-01-01", "2024-01-31"),
        (LEAP_DAY, "last Thursday", "2024-02-22", None),
        (LEAP_DAY, "Feb 29", "2024-02-29", None),
        (LEAP_DAY, "Mar 1", "2023-03-01", None),
        (LEAP_DAY, "2024-02-29", "2024-02-29", None),
        # the day after 29 February
        (AFTER_LEAP_DAY, "yesterday", "2024-02-29", None),
        (AFTER_LEAP_DAY, "this week", "2024-02-26", "2024-03-01"),
        (AFTER_LEAP_DAY, "last week", "2024-02-19", "2024-02-25"),
        (AFTER_LEAP_DAY, "this month", "2024-03-01", "2024-03-01"),
        (AFTER_LEAP_DAY, "last month", "2024-02-01", "2024-02-29"),
        (AFTER_LEAP_DAY, "last Thursday", "2024-02-29", None),
        (AFTER_LEAP_DAY, "Feb 29", "2024-02-29", None),
        # the day after 28 February, in a year without a 29th
        (AFTER_FEB_28, "yesterday", "2025-02-28", None),
        (AFTER_FEB_28, "last month", "2025-02-01", "2025-02-28"),
        (AFTER_FEB_28, "Feb 28", "2025-02-28", None),
        (AFTER_FEB_28, "Feb 29", "2024-02-29", None),  # this year has none: the last one
        # the last day of a February without a 29th
        (FEB_END, "this month", "2026-02-01", "2026-02-28"),
        (FEB_END, "last month", "2026-01-01", "2026-01-31"),
        # the last day of a month longer than the one before
        (MARCH_END, "this month", "2026-03-01", "2026-03-31"),
        (MARCH_END, "last month", "2026-02-01", "2026-02-28"),
        (MARCH_END, "31 days ago", "2026-02-28", None),
        # mid-month: "this month" runs to today, not to the month's end
        (MID_MONTH, "this month", "2026-11-01", "2026-11-15"),
        (MID_MONTH, "this week", "2026-11-09", "2026-11-15"),
        (MID_MONTH, "last week", "2026-11-02", "2026-11-08"),
        (MID_MONTH, "Sunday", "2026-11-15", None),
        (MID_MONTH, "last Sunday", "2026-11-08", None),
        (MID_MONTH, "Saturday", "2026-11-14", None),
        (MID_MONTH, "Nov 15", "2026-11-15", None),
        (MID_MONTH, "Nov 16", "2025-11-16", None),
        # "Feb 8" typed on, before and after 8 February
        (FEB_8, "Feb 8", "2026-02-08", None),
        (FEB_8, "February 8th", "2026-02-08", None),
        (FEB_8, "Feb. 8", "2026-02-08", None),
        (FEB_8, "8 Feb", "2026-02-08", None),
        (dt.date(2026, 2, 7), "Feb 8", "2025-02-08", None),
        (dt.date(2026, 2, 9), "Feb 8", "2026-02-08", None),
    ],
    ids=_case_id,
)
def test_route_at_the_boundaries(today: dt.date, query: str, start: str, end: str | None) -> None:
    assert_route(query, today, start, end)


WEEK = [dt.date(2026, 6, 8) + dt.timedelta(days=i) for i in range(7)]  # Monday to Sunday
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@pytest.mark.parametrize("today", WEEK, ids=DAY_NAMES)
def test_weeks_on_each_weekday(today: dt.date) -> None:
    """The week starts on Monday; "this week" runs to today, "last week" is the whole one before."""
    assert_route("this week", today, "2026-06-08", today.isoformat())
    assert_route("last week", today, "2026-06-01", "2026-06-07")
    # the weekend: this week's Saturday and Sunday (ahead of today from Monday to Friday), and
    # "last weekend" the one before this week's, on a Sunday too
    assert_route("this weekend", today, "2026-06-13", "2026-06-14")
    assert_route("last weekend", today, "2026-06-06", "2026-06-07")


@pytest.mark.parametrize("today", WEEK, ids=DAY_NAMES)
@pytest.mark.parametrize("name", DAY_NAMES)
def test_weekday_names_on_each_weekday(today: dt.date, name: str) -> None:
    """A weekday's name is its latest day up to today; "last" is its latest day before today."""
    for query, back in ((name, range(7)), (f"on {name}", range(7)), (f"last {name}", range(1, 8))):
        found = route(f"gym {query}", today)
        assert found is not None and found.start == found.end, query
        assert found.start.strftime("%A") == name, query
        assert (today - found.start).days in back, f"{query!r} on {today:%A}: {found.start}"
        assert found.rest == "gym"


@pytest.mark.parametrize(
    ("query", "today"),
    [
        ("2025-02-29", AFTER_FEB_28),  # no such day
        ("2026-02-29", FEB_END),
        ("Feb 29", FEB_END),  # neither this year nor last has one
        ("Feb 30", LEAP_DAY),
        ("April 31", MID_MONTH),
        ("1000000 days ago", NEW_YEAR),  # before the year 1: no route, and no crash
        ("99999999999999999999 days ago", NEW_YEAR),
    ],
    ids=_case_id,
)
def test_impossible_dates_route_nowhere(query: str, today: dt.date) -> None:
    assert route(query, today) is None


def test_dates_in_knows_29_february() -> None:
    assert dates_in("daily/2024-02-29.md daily/2023-02-29.md") == [dt.date(2024, 2, 29)]


# --------------------------------------------------------------------------- found by mutation
# (docs/TESTING.md, "dates"): `--since` values, the phrase a route names, dates_in past a bad date


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("2026-03-10", "2026-03-10"),
        ("yesterday", "2026-11-29"),
        ("  yesterday\t", "2026-11-29"),  # spaces around the words are nothing
        ("last   week", "2026-11-23"),  # nor runs of spaces between them
        ("last\nmonth", "2026-10-01"),
        ("3 days ago", "2026-11-27"),
        ("Feb 8", "2026-02-08"),
        ("this month", "2026-11-01"),
    ],
)
def test_since_day_names_the_first_day_of_what_the_words_say(text: str, day: str) -> None:
    assert since_day(text, TODAY) == dt.date.fromisoformat(day)


@pytest.mark.parametrize("text", ["", "soon", "yesterday evening", "notes since Feb 8", "2026"])
def test_since_day_refuses_anything_but_a_day(text: str) -> None:
    assert since_day(text, TODAY) is None


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("notes from last Monday please", "last Monday"),
        ("dentist on Feb 8, 2024 at noon", "on Feb 8, 2024"),
        ("log 2026-11-28 outage", "2026-11-28"),
        ("what  happened   3 days ago", "3 days ago"),
    ],
)
def test_a_route_names_the_words_that_said_the_date(query: str, phrase: str) -> None:
    found = route(query, TODAY)
    assert found is not None and found.phrase == phrase


def test_dates_in_reads_past_an_impossible_date() -> None:
    assert dates_in("2026-02-30 then 2026-03-01, 2026-13-01 and 2026-03-02") == [
        dt.date(2026, 3, 1),
        dt.date(2026, 3, 2),
    ]


@pytest.mark.parametrize("word", ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
def test_a_bare_short_weekday_is_an_ordinary_word(word: str) -> None:
    """ "sat", "wed": too often plain words; "on wed", "last sat" and "Wednesday" are days."""
    assert route(f"the cat {word} here", TODAY) is None
    assert route(f"the cat {word.upper()} here", TODAY) is None
    on = route(f"gym on {word}", TODAY)
    assert on is not None and on.rest == "gym" and on.start == on.end
    assert TODAY - dt.timedelta(days=6) <= on.start <= TODAY
    assert on.start.strftime("%a").lower() == word
