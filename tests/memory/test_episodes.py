"""Episode notes: their text and file name, reading them back, selecting and trends."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.memory.conftest import NOW
from vaultmem.memory.episodes import (
    Episode,
    TrendRow,
    episode_from,
    episode_note,
    episode_path,
    parse_duration,
    safe_title,
    select,
    summary_of,
    trends,
)
from vaultmem.memory.errors import Refused
from vaultmem.parser import parse_note


def test_episode_note_text_follows_the_conventions() -> None:
    new = episode_note(
        "Tariff sync fix: retry/backoff",
        "success",
        dt.datetime(2026, 11, 29, 14, 5, tzinfo=dt.UTC),
        NOW,
        entities=["Maya Chen", "[[Tariff sync]]", "projects/Heat pump.md", "Maya Chen"],
        duration="1.5 hours",
        procedure="Deploy checklist",
        body="Retries with backoff fixed the 502s.\n\nMaya confirmed on the call.",
    )
    assert new.path == "episodes/2026-11-29 Tariff sync fix - retry-backoff.md"
    assert new.text == (
        "---\n"
        "type: episode\n"
        "date: 2026-11-29T14:05:00+00:00\n"
        "outcome: success\n"
        "entities:\n"
        '  - "[[Maya Chen]]"\n'
        '  - "[[Tariff sync]]"\n'
        '  - "[[projects/Heat pump]]"\n'
        "duration: 1h30m\n"
        'procedure: "[[Deploy checklist]]"\n'
        "---\n"
        "\n"
        "Retries with backoff fixed the 502s.\n"
        "\n"
        "Maya confirmed on the call.\n"
    )
    note = parse_note(new.text, new.path)
    back = episode_from(new.path, dict(note.frontmatter), new.text.split("---\n", 2)[2])
    assert back == Episode(
        new.path,
        "Tariff sync fix - retry-backoff",
        dt.datetime(2026, 11, 29, 14, 5, tzinfo=dt.UTC),
        "success",
        ("Maya Chen", "Tariff sync", "projects/Heat pump"),
        "1h30m",
        "Deploy checklist",
        "Retries with backoff fixed the 502s.",
    )
    assert {link.target for link in note.links} == {
        "Maya Chen",
        "Tariff sync",
        "projects/Heat pump",
        "Deploy checklist",
    }


def test_a_day_alone_is_written_as_a_date_and_no_entities_as_an_empty_list() -> None:
    new = episode_note("Quiet day", "ongoing", dt.date(2026, 11, 28), NOW)
    assert new.text == (
        "---\ntype: episode\ndate: 2026-11-28\noutcome: ongoing\nentities: []\n---\n"
    )
    note = parse_note(new.text, new.path)
    back = episode_from(new.path, dict(note.frontmatter))
    assert back is not None and back.day == dt.date(2026, 11, 28) and back.entities == ()


def test_a_body_starting_with_dashes_never_becomes_front_matter() -> None:
    new = episode_note("x", "success", dt.date(2026, 11, 28), NOW, body="---\nnot: yaml\n---")
    note = parse_note(new.text, new.path)
    assert note.frontmatter["type"] == "episode" and "not" not in note.frontmatter


@pytest.mark.parametrize(
    ("title", "safe"),
    [
        ("a/b\\c", "a-b-c"),
        ("What? #1 [[link]] | x^y", "What 1 link - xy"),
        ("  .hidden.  ", "hidden"),
        ("tab\tand\nnewline", "tab and newline"),
        ("café ☕", "café ☕"),
        ("é" * 200, "é" * 90),
    ],
)
def test_safe_titles(title: str, safe: str) -> None:
    assert safe_title(title) == safe


@pytest.mark.parametrize("title", ["", "///", "[[]]", "#?*", "..."])
def test_titles_with_nothing_left_are_refused(title: str) -> None:
    with pytest.raises(Refused, match="nothing usable in a file name"):
        safe_title(title)


def test_paths_are_numbered_past_taken_names() -> None:
    day = dt.date(2026, 11, 30)
    taken = ["episodes/2026-11-30 Deploy.md", "EPISODES/2026-11-30 deploy 2.md"]
    assert episode_path(day, "Deploy", taken) == "episodes/2026-11-30 Deploy 3.md"
    assert episode_path(day, "Deploy", [], folder="") == "2026-11-30 Deploy.md"


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("45m", "45m"),
        ("45", "45m"),
        ("90 min", "1h30m"),
        ("1h 30m", "1h30m"),
        ("2 hours", "2h"),
        ("1.5h", "1h30m"),
        ("30s", "30s"),
        ("1h and 5 minutes", "1h5m"),
    ],
)
def test_durations(text: str, out: str) -> None:
    assert parse_duration(text) == out


@pytest.mark.parametrize("text", ["", "soon", "0m", "2h garbage", "-5m", "h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(Refused, match="cannot read the duration"):
        parse_duration(text)


def test_refusals() -> None:
    with pytest.raises(Refused, match="unknown outcome 'great'"):
        episode_note("x", "great", NOW, NOW)
    with pytest.raises(Refused, match="is in the future"):
        episode_note("x", "success", NOW + dt.timedelta(days=2), NOW)
    with pytest.raises(Refused, match="is in the future"):
        episode_note("x", "success", dt.date(2026, 12, 2), NOW)
    with pytest.raises(Refused, match="cannot be a wikilink"):
        episode_note("x", "success", NOW, NOW, entities=["a|b"])
    with pytest.raises(Refused, match="procedure"):
        episode_note("x", "success", NOW, NOW, procedure="[[a#b]]")
    # a few hours ahead is a time zone, not the future
    assert episode_note("x", "success", NOW + dt.timedelta(hours=10), NOW).path


def test_episode_from_rejects_other_notes_and_reads_what_it_can() -> None:
    assert episode_from("a.md", {"type": "note", "date": "2026-01-01"}) is None
    assert episode_from("a.md", {"type": "episode"}) is None
    assert episode_from("a.md", {"type": "episode", "date": "yesterday"}) is None
    e = episode_from(
        "e/2026-01-01 x.md",
        {"type": "Episode", "date": "2026-01-01", "outcome": "weird", "entities": "[[Solo]]"},
    )
    assert e is not None and (e.outcome, e.entities, e.title) == (None, ("Solo",), "x")


def test_summary_is_the_first_paragraph() -> None:
    assert (
        summary_of("\n# Title\n\nFirst line\nsecond line.\n\nOther.") == "First line second line."
    )
    assert summary_of("- a bullet\n- another") == "a bullet another"
    assert summary_of("word " * 200).endswith("…")


def _ep(path: str, day: str, outcome: str | None, *entities: str) -> Episode:
    when = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    return Episode(path, path, when, outcome, tuple(entities))  # type: ignore[arg-type]


EPISODES = [
    _ep("a", "2026-11-02", "success", "Maya Chen"),
    _ep("b", "2026-11-03", "failure", "Tariff sync"),
    _ep("c", "2026-11-20", "resolved", "people/Maya Chen", "Tariff sync"),
    _ep("d", "2026-11-29", "ongoing"),
]


def test_select_by_dates_outcome_and_entity_newest_first() -> None:
    assert [e.path for e in select(EPISODES)] == ["d", "c", "b", "a"]
    since, until = dt.date(2026, 11, 3), dt.date(2026, 11, 20)
    assert [e.path for e in select(EPISODES, since=since, until=until)] == ["c", "b"]
    assert [e.path for e in select(EPISODES, outcome="failure")] == ["b"]
    assert [e.path for e in select(EPISODES, entities=["maya chen.md"])] == ["c", "a"]
    assert [e.path for e in select(EPISODES, entities=["people/Maya Chen.md", "tariff sync"])] == [
        "c",
        "b",
        "a",
    ]


def test_trends_per_week_with_empty_weeks_and_rates() -> None:
    points = [(e.day, e.outcome) for e in EPISODES] + [(dt.date(2026, 11, 4), "success")]
    rows = trends(points, "week")  # type: ignore[arg-type]
    assert rows == (
        TrendRow("2026-W45", dt.date(2026, 11, 2), 2, 1, 0, 0),
        TrendRow("2026-W46", dt.date(2026, 11, 9), 0, 0, 0, 0),
        TrendRow("2026-W47", dt.date(2026, 11, 16), 0, 0, 1, 0),
        TrendRow("2026-W48", dt.date(2026, 11, 23), 0, 0, 0, 1),
    )
    assert rows[0].success_rate == pytest.approx(2 / 3) and rows[0].failure_rate == pytest.approx(
        1 / 3
    )
    assert rows[1].success_rate is None and rows[3].decided == 0
    assert rows[2].success_rate == 1.0  # a resolved problem counts as a success


def test_trends_per_day_and_month_within_bounds() -> None:
    points = [(e.day, e.outcome) for e in EPISODES]
    months = trends(points, "month", since=dt.date(2026, 10, 15))  # type: ignore[arg-type]
    assert [(r.period, r.success, r.failure, r.resolved, r.ongoing) for r in months] == [
        ("2026-10", 0, 0, 0, 0),
        ("2026-11", 1, 1, 1, 1),
    ]
    days = trends(points, "day", since=dt.date(2026, 11, 2), until=dt.date(2026, 11, 4))  # type: ignore[arg-type]
    assert [(r.period, r.success, r.failure) for r in days] == [
        ("2026-11-02", 1, 0),
        ("2026-11-03", 0, 1),
        ("2026-11-04", 0, 0),
    ]
    assert trends([], "week") == ()
    assert trends([(dt.date(2026, 1, 1), None)], "week") == ()
    with pytest.raises(Refused, match="unknown granularity"):
        trends(points, "year")  # type: ignore[arg-type]
