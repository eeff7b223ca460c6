"""Decay expiry and salience (importance × staleness) with a fixed clock."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.memory.conftest import NOW
from vaultmem.memory.salience import (
    Expiry,
    FactSignals,
    NoteSignals,
    expired,
    expiry,
    rank,
    staleness,
)

FILE_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("frontmatter", "tier", "expires", "is_expired"),
    [
        ({"decay": "permanent", "date": "2000-01-01"}, "permanent", None, False),
        ({"decay": "stable", "date": "2026-09-01"}, "stable", "2026-11-30T00:00:00+00:00", True),
        ({"decay": "stable", "date": "2026-09-02"}, "stable", "2026-12-01T00:00:00+00:00", False),
        (
            {"decay": "Active", "created": "2026-11-20T12:00:00Z"},
            "active",
            "2026-12-04T12:00:00+00:00",
            False,
        ),
        (
            {"decay": "session", "date": "2026-11-29T11:00:00+00:00"},
            "session",
            "2026-11-30T11:00:00+00:00",
            True,
        ),
        (
            {"decay": "checkpoint", "date": "2026-11-30T08:00:00+00:00"},
            "checkpoint",
            "2026-11-30T12:00:00+00:00",
            True,
        ),  # exactly at its end: gone
        ({"decay": "active"}, "active", "2026-01-15T00:00:00+00:00", True),  # the file's time
    ],
)
def test_expiry(
    frontmatter: dict[str, object], tier: str, expires: str | None, is_expired: bool
) -> None:
    found = expiry(frontmatter, FILE_TIME, NOW)
    when = dt.datetime.fromisoformat(expires) if expires else None
    assert found == Expiry(tier, when, is_expired)  # type: ignore[arg-type]


def test_no_tier_no_expiry_and_naive_times_are_utc() -> None:
    assert expiry({}, FILE_TIME, NOW) is None
    assert expiry({"decay": "forever"}, FILE_TIME, NOW) is None
    naive = expiry({"decay": "active"}, FILE_TIME.replace(tzinfo=None), NOW.replace(tzinfo=None))
    assert naive is not None and naive.expired


def test_expired_lists_prune_candidates_longest_expired_first() -> None:
    notes = [
        ("a.md", {"decay": "session", "date": "2026-11-20"}, FILE_TIME),
        ("b.md", {"decay": "session", "date": "2026-11-10"}, FILE_TIME),
        ("c.md", {"decay": "permanent"}, FILE_TIME),
        ("d.md", {}, FILE_TIME),
    ]
    assert [p for p, _ in expired(notes, NOW)] == ["b.md", "a.md"]


def test_staleness_curve() -> None:
    assert staleness(0) == 0.0
    assert staleness(30) == pytest.approx(0.4866, abs=1e-4)
    assert staleness(90) == pytest.approx(0.8647, abs=1e-4)
    assert staleness(-5) == 0.0


def _days_ago(n: int) -> dt.datetime:
    return NOW - dt.timedelta(days=n)


def test_rank_importance_times_staleness() -> None:
    notes = [
        NoteSignals(
            "hub.md",
            "Hub",
            inlinks=20,
            centrality=0.9,
            changed=_days_ago(120),
            open_loops=2,
            facts=3,
        ),
        NoteSignals("fresh-hub.md", "Fresh hub", inlinks=20, centrality=0.9, changed=_days_ago(0)),
        NoteSignals("orphan.md", "Orphan", inlinks=0, centrality=0.0, changed=_days_ago(400)),
        NoteSignals(
            "person.md",
            "Maya",
            inlinks=3,
            centrality=0.3,
            changed=_days_ago(60),
            open_loops=1,
            facts=2,
        ),
        NoteSignals("expired.md", "Old", inlinks=50, centrality=1.0, changed=_days_ago(300)),
    ]
    facts = [
        FactSignals("person.md", "city", "Berlin", dt.date(2026, 1, 5)),
        FactSignals("person.md", "email", "m@x.io", None),  # as old as its note
        FactSignals("expired.md", "k", "v", None),
    ]
    ranked = rank(notes, facts, NOW, top=10, skip=["expired.md"])
    assert [(s.kind, s.path, s.label) for s in ranked] == [
        ("note", "hub.md", "Hub"),
        ("fact", "person.md", "Maya: city = Berlin"),
        ("fact", "person.md", "Maya: email = m@x.io"),  # a stale fact outranks its note
        ("note", "person.md", "Maya"),
        ("note", "fresh-hub.md", "Fresh hub"),
        ("note", "orphan.md", "Orphan"),
    ]
    hub = ranked[0]
    assert hub.reasons == (
        "linked from 20 notes",
        "central (1.00)",
        "2 open loops",
        "unchanged for 120 days",
    )
    assert hub.score == pytest.approx(hub.importance * hub.staleness, abs=1e-3)
    assert ranked[1].reasons == ("value set 329 days ago",) and ranked[1].days == 329
    assert ranked[-1].score == 0.0 and ranked[-2].score == 0.0
    assert rank(notes, facts, NOW, top=2) == rank(notes, facts, NOW)[:2]
    assert rank([], [], NOW) == []
    many = [FactSignals("person.md", f"k{i}", "v", dt.date(2026, 1, 1 + i)) for i in range(6)]
    listed = [s.label for s in rank(notes, many, NOW) if s.kind == "fact"]
    assert listed == ["Maya: k0 = v", "Maya: k1 = v", "Maya: k2 = v"]
