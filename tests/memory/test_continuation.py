"""Names in messages, continuation cues, and the recall block built from values."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.memory.conftest import NOW
from vaultmem.memory.continuation import cue_of, detect
from vaultmem.memory.episodes import Episode
from vaultmem.memory.facts import Fact, HistoryEntry
from vaultmem.memory.loops import Loop, loop_id
from vaultmem.memory.mentions import (
    EntityMatch,
    EntityName,
    NameIndex,
    find,
    overlap,
    stem,
    words,
)
from vaultmem.memory.recall import NoteFact, RecallHit, recall, timely

NAMES = [
    EntityName("people/Maya Chen.md", ("Maya Chen", "Maya")),
    EntityName("projects/Health Dashboard.md", ("Health Dashboard",)),
    EntityName("projects/Risk Dashboard.md", ("Risk Dashboard",)),
    EntityName("projects/Tariff sync.md", ("Tariff sync",)),
    EntityName("Home.md", ("Home",)),
    EntityName("JHF.md", ("JHF",)),
    EntityName("", ("OmniRoute",)),
]


def test_words_cut_possessives_and_fold_case() -> None:
    assert words("Maya’s install, the TARIFF-sync fix!") == [
        "maya",
        "install",
        "the",
        "tariff",
        "sync",
        "fix",
    ]
    assert stem("cards") == "card" and stem("fixing") == "fix" and stem("is") == "is"
    assert overlap("stale vitals cards", "the stale vitals card bug") == 1.0
    assert overlap("the", "anything") == 0.0


def test_find_whole_names_before_partial_ones() -> None:
    found = find("what was next for Maya's install on the health dashboard", NAMES)
    assert found == [
        EntityMatch(
            "projects/Health Dashboard.md", "Health Dashboard", 1.0, ("health", "dashboard")
        ),
        EntityMatch("people/Maya Chen.md", "Maya", 1.0, ("maya",)),
        EntityMatch("projects/Risk Dashboard.md", "Risk Dashboard", 0.5, ("dashboard",)),
    ]
    assert find("omniroute outage", NAMES) == [EntityMatch("", "OmniRoute", 1.0, ("omniroute",))]


def test_everyday_words_need_a_capital_to_name_a_note() -> None:
    assert find("I want to go home", NAMES) == []
    assert [m.path for m in find("update Home", NAMES)] == ["Home.md"]
    assert [m.path for m in find("the jhf numbers", NAMES)] == ["JHF.md"]


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("where did we leave off on the dashboard", "next"),
        ("continue the tariff sync fix", "next"),
        ("what was next for Maya's install", "next"),
        ("what's left to do on the migration", "next"),
        ("is that bug still open?", "next"),
        ("what happened with hermes a few days ago?", "past"),
        ("what was the omniroute outage again?", "past"),
        ("how did the deploy go", "past"),
        ("what did we decide about pricing", "state"),
        ("status of the grant application?", "state"),
        ("any update on the OmniRoute outage?", "state"),
    ],
)
def test_cues(message: str, kind: str) -> None:
    found = cue_of(message)
    assert found is not None and found[1] == kind


@pytest.mark.parametrize(
    "message",
    [
        "hello",
        "write a python function to sort a list",
        "fix this regex",
        "translate 'next' to German",
    ],
)
def test_not_continuations(message: str) -> None:
    assert detect(message, NAMES) is None


def test_detect_needs_a_name_beside_a_work_verb() -> None:
    found = detect("update the tariff sync", NAMES)
    assert found is not None and found.cue == "" and found.entities[0].name == "Tariff sync"
    assert detect("update the readme", NAMES) is None
    found = detect("did Maya sign?", NAMES)
    assert found is not None and found.kind == "state"
    found = detect("where were we?", [])
    assert found is not None and found.entities == () and found.cue == "where were we"


# --------------------------------------------------------------------------- recall

DASH = "projects/Health Dashboard.md"
RISK = "projects/Risk Dashboard.md"


def _loop(path: str, title: str, line: int, detail: str = "", **kw: object) -> Loop:
    return Loop(loop_id(path, title), path, line, title, title, detail=detail, **kw)  # type: ignore[arg-type]


LOOPS = [
    _loop(DASH, "Review anomaly thresholds", 10, "before the release", priority="high"),
    _loop(DASH, "Fix stale vitals card bug", 11, due=dt.date(2026, 11, 20)),
    _loop(
        "people/Maya Chen.md",
        "Send [[Health Dashboard]] mockups to Maya",
        4,
        links=("Health Dashboard",),
    ),
    _loop("projects/Other.md", "Water the plants", 3),
]
EPISODES = [
    Episode(
        "episodes/2026-11-25 Planning.md",
        "Planning",
        dt.datetime(2026, 11, 25, tzinfo=dt.UTC),
        "resolved",
        ("Health Dashboard",),
        summary="Settled on core metrics for v1.",
    ),
    Episode(
        "episodes/2026-10-01 Kickoff.md",
        "Kickoff",
        dt.datetime(2026, 10, 1, tzinfo=dt.UTC),
        "success",
        ("Health Dashboard",),
        summary="Old kickoff, outside the window.",
    ),
    Episode(
        "episodes/2026-11-28 Outage.md",
        "Outage",
        dt.datetime(2026, 11, 28, tzinfo=dt.UTC),
        "failure",
        ("OmniRoute",),
        summary="502s during health checks.",
    ),
]
FACTS = [
    NoteFact(
        DASH,
        "Health Dashboard",
        Fact(
            "scope",
            "vitals and medications",
            5,
            "item",
            "f-1a2b",
            history=(HistoryEntry("everything", dt.date(2026, 11, 1), None, 6),),
        ),
    ),
    NoteFact(RISK, "Risk Dashboard", Fact("focus", "concentration risk", 3, "item")),
]


def _recall(message: str, **kw: object) -> object:
    return recall(message, NOW, names=NAMES, facts=FACTS, episodes=EPISODES, loops=LOOPS, **kw)  # type: ignore[arg-type]


def test_recall_block_for_what_is_next() -> None:
    result = recall(
        "where did we leave off on the health dashboard?",
        NOW,
        names=NAMES,
        facts=FACTS,
        episodes=EPISODES,
        loops=LOOPS,
    )
    assert result.entities == (DASH,)
    bug, review, send = (LOOPS[1].id, LOOPS[0].id, LOOPS[2].id)
    assert result.text == (
        "# Continuing: Health Dashboard\n"
        "## Open loops\n"
        f"- Fix stale vitals card bug (overdue since 2026-11-20) [{bug}, {DASH}:11]\n"
        f"- Review anomaly thresholds — before the release (high) [{review}, {DASH}:10]\n"
        f"- Send [[Health Dashboard]] mockups to Maya [{send}, people/Maya Chen.md:4]\n"
        "## Recent episodes\n"
        "- 2026-11-25 resolved: Settled on core metrics for v1. [episodes/2026-11-25 Planning.md]\n"
        "## Facts\n"
        f"- Health Dashboard: scope = vitals and medications (since 2026-11-01) [{DASH}#^f-1a2b]"
    )
    assert [c.kind for c in result.lines] == ["loop", "loop", "loop", "episode", "fact"]
    assert result.to_json()["chars"] == len(result.text)


def test_recall_orders_sections_by_what_is_asked() -> None:
    past = recall(
        "what happened with the omniroute outage?",
        NOW,
        names=NAMES,
        episodes=EPISODES,
        loops=LOOPS,
        facts=FACTS,
    )
    assert [c.kind for c in past.lines] == ["episode"]
    assert past.lines[0].text.startswith("2026-11-28 failure: 502s during health checks.")
    state = recall(
        "what did we decide on the risk dashboard?",
        NOW,
        names=NAMES,
        facts=FACTS,
        episodes=EPISODES,
        loops=LOOPS,
    )
    assert [c.kind for c in state.lines] == ["fact"]
    assert state.entities == (RISK,)


def test_an_ambiguous_name_goes_to_the_note_with_work_going_on() -> None:
    result = recall(
        "what's next on the dashboard?",
        NOW,
        names=NAMES,
        facts=FACTS,
        episodes=EPISODES,
        loops=LOOPS,
    )
    assert result.entities == (DASH,)


def test_without_a_name_word_overlap_chooses_and_hits_fill_in() -> None:
    hits = [
        RecallHit("notes/Plants.md", "Plants", "water   them weekly", 7, 1.0),
        RecallHit("projects/Other.md", "Other", "already shown", 1, 0.5),
    ]
    result = recall(
        "is watering the plants still pending?",
        NOW,
        names=NAMES,
        loops=LOOPS,
        episodes=EPISODES,
        facts=FACTS,
        hits=hits,
    )
    assert result.entities == ()
    assert [(c.kind, c.path) for c in result.lines] == [
        ("loop", "projects/Other.md"),
        ("hit", "notes/Plants.md"),
    ]
    assert result.lines[1].text == "Plants: water them weekly [notes/Plants.md:7]"


def test_not_a_continuation_gives_the_hits_only() -> None:
    hits = [RecallHit("a.md", "A", "text", 1, 1.0)]
    result = recall("write a poem about autumn", NOW, names=NAMES, loops=LOOPS, hits=hits)
    assert result.continuation is None
    assert result.text == "# Search results\n## Related notes\n- A: text [a.md:1]"
    assert recall("hello", NOW).text == ""


def test_the_budget_keeps_whole_lines_then_cuts_one_and_counts_the_rest() -> None:
    full = _recall("where did we leave off on the health dashboard?")
    for budget in (60, 120, 200, 300, len(full.text) - 1, len(full.text)):
        cut = _recall("where did we leave off on the health dashboard?", budget=budget)
        assert len(cut.text) <= budget
        assert cut.text == "" or cut.text.startswith("# Continuing: Health Dashboard")
        assert len(cut.lines) + cut.left_out >= len(full.lines) or budget >= len(full.text)
    tight = _recall("where did we leave off on the health dashboard?", budget=130)
    assert tight.text.endswith("…") and len(tight.lines) == 1
    assert _recall("where did we leave off on the health dashboard?", budget=10).text == ""
    assert full == _recall("where did we leave off on the health dashboard?")  # same bytes


def test_the_window_and_time_words_choose_episodes() -> None:
    old = _recall("what happened with the health dashboard?", days=90)
    assert [c.path for c in old.lines if c.kind == "episode"] == [
        "episodes/2026-11-25 Planning.md",
        "episodes/2026-10-01 Kickoff.md",
    ]
    recent = _recall("what happened with the health dashboard a few days ago?", days=90)
    assert [c.path for c in recent.lines if c.kind == "episode"] == [
        "episodes/2026-11-25 Planning.md"
    ]


def _hit(path: str, day: str | None, episode: bool = True) -> RecallHit:
    return RecallHit(path, path, "", 1, 0.0, dt.date.fromisoformat(day) if day else None, episode)


def test_timely_drops_future_episodes_only() -> None:
    hits = [
        _hit("future.md", "2026-12-05"),
        _hit("plan.md", "2026-12-05", episode=False),
        _hit("past.md", "2026-11-01"),
        _hit("undated.md", None),
    ]
    # a note planned for later stays (only episodes cannot lie ahead), without a recency boost
    assert [h.path for h in timely(hits, "what did I do", NOW)] == [
        "past.md",
        "plan.md",
        "undated.md",
    ]


def test_timely_prefers_recent_and_the_days_named() -> None:
    hits = [
        _hit("old.md", "2026-06-01"),
        _hit("mid.md", "2026-11-16"),
        _hit("new.md", "2026-11-29"),
    ]
    assert [h.path for h in timely(hits, "what is my current plan", NOW)] == [
        "new.md",
        "mid.md",
        "old.md",
    ]
    assert [h.path for h in timely(hits, "what did I do two weeks ago?", NOW)] == [
        "mid.md",
        "new.md",
        "old.md",
    ]
    far = [_hit(f"{n}.md", "2025-01-01") for n in range(12)] + [_hit("recent.md", "2026-11-30")]
    assert timely(far, "anything", NOW)[0].path == "0.md"  # recency never beats a far better rank
    assert timely(far[:3] + far[-1:], "anything", NOW)[0].path == "recent.md"


def test_recall_without_a_continuation_orders_hits_in_time() -> None:
    hits = [_hit("episodes/later.md", "2026-12-24"), _hit("episodes/before.md", "2026-11-20")]
    result = recall("what did I cook two weeks ago?", NOW, hits=hits)
    assert [c.path for c in result.lines] == ["episodes/before.md"]


def test_a_name_index_is_built_once_and_reused() -> None:
    index = NameIndex(iter(NAMES))  # any iterable, read once
    assert index.size == 8
    assert index.names_of("people/Maya Chen.md") == ("Maya Chen", "Maya")
    assert index.names_of("nowhere.md") == ()
    for _ in range(2):
        assert [m.path for m in index.find("did Maya reply?")] == ["people/Maya Chen.md"]
    assert find("did Maya reply?", iter(NAMES)) == index.find("did Maya reply?")
    result = recall("what's next on the health dashboard?", NOW, names=index, loops=LOOPS)
    assert result.entities == (DASH,)
