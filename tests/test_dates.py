"""Date routing with a fixed clock: Monday 2026-11-30."""

from __future__ import annotations

import datetime as dt

import pytest

from vaultmem.dates import dates_in, route

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
    ],
)
def test_route(query: str, start: str, end: str, rest: str) -> None:
    found = route(query, TODAY)
    assert found is not None
    assert (found.start.isoformat(), found.end.isoformat(), found.rest) == (start, end, rest)


@pytest.mark.parametrize(
    "query", ["heat pump tariff", "2026-13-45 bad date", "Feb 30", "sun and sat", "may I"]
)
def test_no_route(query: str) -> None:
    assert route(query, TODAY) is None


def test_dates_in() -> None:
    assert dates_in("daily/2026-11-29.md and 2026-02-30") == [dt.date(2026, 11, 29)]
