"""Time forms people type, as day ranges against a fixed today (Monday 2026-11-30)."""

from __future__ import annotations

import datetime as dt

import pytest

from vaultmem.memory.errors import Refused
from vaultmem.memory.when import parse, resolve

TODAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # delegated to vaultmem.dates.route
        ("2026-11-02", "2026-11-02", "2026-11-02"),
        ("today", "2026-11-30", "2026-11-30"),
        ("Yesterday", "2026-11-29", "2026-11-29"),
        ("7 days ago", "2026-11-23", "2026-11-23"),
        ("last week", "2026-11-23", "2026-11-29"),
        ("this week", "2026-11-30", "2026-11-30"),  # up to today, as dates.route says
        ("this month", "2026-11-01", "2026-11-30"),
        ("last month", "2026-10-01", "2026-10-31"),
        ("last friday", "2026-11-27", "2026-11-27"),
        ("wednesday", "2026-11-25", "2026-11-25"),
        ("Feb 8", "2026-02-08", "2026-02-08"),
        # added here
        ("2026-11-30T14:05:00Z", "2026-11-30", "2026-11-30"),
        ("2026-11-29 23:10", "2026-11-29", "2026-11-29"),
        ("a week ago", "2026-11-23", "2026-11-23"),
        ("3 weeks ago", "2026-11-09", "2026-11-09"),
        ("two months ago", "2026-09-30", "2026-09-30"),
        ("1 year ago", "2025-11-30", "2025-11-30"),
        ("a few days ago", "2026-11-25", "2026-11-28"),
        ("a couple of days ago", "2026-11-26", "2026-11-29"),
        ("last 30 days", "2026-11-01", "2026-11-30"),
        ("past 2 weeks", "2026-11-17", "2026-11-30"),
        ("the last 3 months", "2026-08-31", "2026-11-30"),
        ("this year", "2026-01-01", "2026-11-30"),
        ("last year", "2025-01-01", "2025-12-31"),
        ("2026-02", "2026-02-01", "2026-02-28"),
        ("2024", "2024-01-01", "2024-12-31"),
        ("march", "2026-03-01", "2026-03-31"),
        ("in March 2025", "2025-03-01", "2025-03-31"),
        ("december", "2025-12-01", "2025-12-31"),  # not yet this year: last year's
        ("tomorrow", "2026-12-01", "2026-12-01"),
        ("in 3 days", "2026-12-03", "2026-12-03"),
        ("in 2 weeks", "2026-12-14", "2026-12-14"),
        ("next week", "2026-12-07", "2026-12-13"),
        ("next month", "2026-12-01", "2026-12-31"),
        ("next friday", "2026-12-04", "2026-12-04"),
        ("next monday", "2026-12-07", "2026-12-07"),
    ],
)
def test_forms(text: str, start: str, end: str) -> None:
    found = resolve(text, TODAY)
    assert (found.start.isoformat(), found.end.isoformat()) == (start, end)
    assert found.covers(dt.date.fromisoformat(start)) and found.text == text


def test_future_reads_bare_weekdays_and_months_forward() -> None:
    assert resolve("friday", TODAY, future=True).start == dt.date(2026, 12, 4)
    assert resolve("monday", TODAY, future=True).start == TODAY
    assert resolve("march", TODAY, future=True).start == dt.date(2027, 3, 1)
    assert resolve("december", TODAY, future=True).start == dt.date(2026, 12, 1)


def test_month_ends_are_clamped() -> None:
    assert resolve("1 month ago", dt.date(2026, 3, 31)).start == dt.date(2026, 2, 28)
    assert resolve("in 1 month", dt.date(2024, 1, 31)).start == dt.date(2024, 2, 29)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "7 days ago or so",
        "2026-13",
        "2026-02-30",
        "sat",
        "next blursday",
        "heat pump",
        "99999",
        "2026-11-30T25:00",
    ],
)
def test_not_time_forms(text: str) -> None:
    assert parse(text, TODAY) is None
    with pytest.raises(Refused, match=r"cannot read the date .* use a form such as 2026-11-30"):
        resolve(text, TODAY)
