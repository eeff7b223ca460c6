"""Open loops: reading tasks, stable ids, ranking, REF matching, resolving and adding."""

from __future__ import annotations

import datetime as dt

import pytest

from vaultmem.memory.errors import LoopAmbiguous, LoopChanged, LoopNotFound, Refused
from vaultmem.memory.lines import LineEdit, apply
from vaultmem.memory.loops import (
    Loop,
    loop_id,
    loops_from,
    loops_in,
    match,
    plan_add,
    plan_resolve,
    rank,
    select,
    title_of,
)
from vaultmem.model import Task

TODAY = dt.date(2026, 11, 30)
PATH = "people/Maya Chen.md"
NOTE = [
    "# Maya Chen",
    "- [ ] call [[Tariff sync|the tariff people]] about the quote ⏫ 📅 2026-12-01 ^t1",
    "    - she wants the numbers first",
    "    - [ ] a subtask",
    "- [ ] send invoice [due:: 2026-11-20] [priority:: low]",
    "- [x] done thing ✅ 2026-11-01",
    "- [-] cancelled thing",
    "- [ ] send invoice",
    "  - [ ] renew passport ➕ 2026-06-01 🔁 every year",
    "> - [ ] quoted task [priority:: urgent]",
    "```",
    "- [ ] not a task in code",
    "```",
]


def test_loops_in_a_note() -> None:
    loops = loops_in(PATH, NOTE, dt.date(2026, 10, 1))
    assert [(x.line, x.title, x.due, x.priority, x.created, x.links, x.detail) for x in loops] == [
        (
            2,
            "call [[Tariff sync|the tariff people]] about the quote",
            dt.date(2026, 12, 1),
            "high",
            dt.date(2026, 10, 1),
            ("Tariff sync",),
            "she wants the numbers first",
        ),
        (4, "a subtask", None, None, dt.date(2026, 10, 1), (), ""),
        (5, "send invoice", dt.date(2026, 11, 20), "low", dt.date(2026, 10, 1), (), ""),
        (8, "send invoice", None, None, dt.date(2026, 10, 1), (), ""),
        (9, "renew passport", None, None, dt.date(2026, 6, 1), (), ""),
        (10, "quoted task", None, "highest", dt.date(2026, 10, 1), (), ""),
    ]
    assert loops[2].id == loop_id(PATH, "send invoice")
    assert loops[3].id == loop_id(PATH, "send invoice", 1) != loops[2].id
    assert loops[0].to_json()["text"] == "call [[Tariff sync|the tariff people]] about the quote"


def test_ids_survive_moves_and_new_metadata_but_not_edits_or_renames() -> None:
    first = loops_in(PATH, ["- [ ] pay rent"])[0].id
    assert loops_in(PATH, ["# moved", "", "- [ ] pay rent 📅 2026-12-01 ⏫ ^x1"])[0].id == first
    assert loops_in(PATH, ["- [ ] Pay  rent [due:: 2026-12-03]"])[0].id == first
    assert loops_in(PATH, ["- [ ] pay the rent"])[0].id != first
    assert loops_in("other.md", ["- [ ] pay rent"])[0].id != first
    assert first.startswith("l-") and len(first) == 10


def test_title_of_drops_only_metadata() -> None:
    assert title_of("fix #bug with [[X]] 🔺 ⏳ 2026-01-01 🛫 2026-01-02 (effort:: 2) ^abc") == (
        "fix #bug with [[X]]"
    )


def test_loops_from_index_tasks() -> None:
    tasks = [
        Task(3, " ", "b 📅 2026-12-02", due="2026-12-02"),
        Task(1, "x", "a"),
        Task(2, " ", "c", priority="nonsense"),
    ]
    loops = loops_from("n.md", tasks)
    assert [(x.line, x.due, x.priority, x.created) for x in loops] == [
        (2, None, None, None),
        (3, dt.date(2026, 12, 2), None, None),
    ]


def _loop(
    title: str,
    due: str | None = None,
    priority: str | None = None,
    created: str | None = "2026-11-29",
    path: str = "a.md",
    line: int = 1,
) -> Loop:
    return Loop(
        loop_id(path, title),
        path,
        line,
        title,
        title,
        dt.date.fromisoformat(due) if due else None,
        priority,  # type: ignore[arg-type]
        dt.date.fromisoformat(created) if created else None,
    )


def test_ranking_due_then_priority_then_age() -> None:
    loops = [
        _loop("later low", "2027-03-01", "low"),
        _loop("no due high", None, "high"),
        _loop("overdue", "2026-11-20"),
        _loop("due tomorrow", "2026-12-01"),
        _loop("old plain", None, None, "2026-06-01"),
        _loop("new plain", None, None, "2026-11-29"),
        _loop("due today lowest", "2026-11-30", "lowest"),
        _loop("due in three weeks", "2026-12-21"),
    ]
    ranked = rank(loops, TODAY)
    assert [r.loop.title for r in ranked] == [
        # a lowest-priority task due today sorts below a normal one due tomorrow
        "overdue",
        "due tomorrow",
        "due today lowest",
        "no due high",
        "due in three weeks",
        "old plain",
        "later low",
        "new plain",
    ]
    reasons = {r.loop.title: r.reasons for r in ranked}
    assert reasons["overdue"] == ("overdue 10 days",)
    assert reasons["due tomorrow"] == ("due in 1 day",)
    assert reasons["old plain"] == ("open 182 days",)
    assert reasons["no due high"] == ("high priority",)


def test_ranking_is_stable_for_ties() -> None:
    a, b = _loop("same", path="b.md"), _loop("same", path="a.md")
    assert [r.loop.path for r in rank([a, b], TODAY)] == ["a.md", "b.md"]


def test_select_by_entity_due_and_priority() -> None:
    loops = loops_in(PATH, NOTE)
    assert len(select(loops, entities=["Maya Chen"])) == 6
    assert [x.line for x in select(loops, entities=["projects/Tariff sync.md"])] == [2]
    assert [x.line for x in select(loops, due_before=dt.date(2026, 11, 30))] == [5]
    assert [x.line for x in select(loops, priority="high")] == [2, 10]


def test_match_by_id_and_by_text() -> None:
    loops = loops_in(PATH, NOTE)
    assert match(loops[4].id, loops) == loops[4]
    assert match(loops[4].id.upper(), loops) == loops[4]
    assert match("passport", loops) == loops[4]
    assert match("  RENEW   passport ", loops) == loops[4]
    assert match("a subtask", loops) == loops[1]
    with pytest.raises(LoopNotFound, match="no open loop has id l-00000000: it was resolved"):
        match("l-00000000", loops)
    with pytest.raises(LoopNotFound, match="no open loop matches 'dentist'"):
        match("dentist", loops)
    with pytest.raises(LoopAmbiguous) as err:
        match("invoice", loops)
    assert str(err.value) == (
        "'invoice' matches 2 open loops; nothing was changed. Give an id:\n"
        f"  {loops[2].id}  {PATH}:5  send invoice\n"
        f"  {loops[3].id}  {PATH}:8  send invoice"
    )
    with pytest.raises(Refused, match="empty loop reference"):
        match("  ", loops)


def test_an_exact_title_wins_over_partial_matches() -> None:
    loops = loops_in("n.md", ["- [ ] call Tom", "- [ ] call Tom about the boiler"])
    assert match("call tom", loops) == loops[0]


def test_resolve_checks_in_place_before_the_block_id() -> None:
    loops = loops_in(PATH, NOTE)
    edit = plan_resolve(NOTE, loops[0], TODAY)
    assert edit == LineEdit(
        1,
        2,
        (
            "- [x] call [[Tariff sync|the tariff people]] about the quote ⏫ 📅 2026-12-01"
            " ✅ 2026-11-30 ^t1",
        ),
    )
    assert plan_resolve(NOTE, loops[5], TODAY).lines == (
        "> - [x] quoted task [priority:: urgent] ✅ 2026-11-30",
    )
    after = apply(NOTE, [edit])
    assert loops[0].id not in {x.id for x in loops_in(PATH, after)}


def test_resolve_finds_a_task_that_moved() -> None:
    loop = loops_in(PATH, NOTE)[4]
    moved = ["# new heading", "", *NOTE]
    edit = plan_resolve(moved, loop, TODAY)
    assert edit.start == loop.line + 1
    assert edit.lines == ("  - [x] renew passport ➕ 2026-06-01 🔁 every year ✅ 2026-11-30",)


def test_resolve_refuses_a_task_edited_or_checked_since() -> None:
    loop = loops_in(PATH, NOTE)[4]
    checked = [line.replace("[ ] renew", "[x] renew") for line in NOTE]
    with pytest.raises(LoopChanged, match=r"people/Maya Chen.md:9: 'renew passport' is already"):
        plan_resolve(checked, loop, TODAY)
    edited = [line.replace("renew passport", "renew passport and ID") for line in NOTE]
    with pytest.raises(LoopChanged, match="was edited or removed since it was listed"):
        plan_resolve(edited, loop, TODAY)
    with pytest.raises(LoopChanged):
        plan_resolve([], loop, TODAY)


def test_add_goes_to_the_open_loops_section_with_tasks_metadata() -> None:
    note = ["# Maya", "", "## Tasks", "- [ ] existing", "", "## Notes", "text"]
    edit, loop = plan_add(
        note, "book the venue", due=dt.date(2026, 12, 5), priority="high", path=PATH
    )
    assert edit == LineEdit(4, 4, ("- [ ] book the venue ⏫ 📅 2026-12-05",))
    assert (loop.line, loop.title, loop.due, loop.priority) == (
        5,
        "book the venue",
        dt.date(2026, 12, 5),
        "high",
    )
    assert loop.id == loop_id(PATH, "book the venue")
    edit, loop = plan_add(["Just text."], "call [[Tom]]")
    assert apply(["Just text."], [edit]) == [
        "Just text.",
        "",
        "## Open loops",
        "- [ ] call [[Tom]]",
    ]
    assert loop.links == ("Tom",)


@pytest.mark.parametrize(
    ("text", "kwargs", "says"),
    [
        ("", {}, "empty loop text"),
        ("two\nlines", {}, "line break"),
        ("x" * 1001, {}, "at most 1,000"),
        ("[ ] boxed", {}, "without a checkbox"),
        ("pay 📅 2026-12-01", {"due": dt.date(2026, 12, 2)}, "already has a due date"),
        ("pay ⏫", {"priority": "low"}, "already has a priority"),
        ("📅 2026-12-01", {}, "only dates or fields"),
        ("a %% b", {}, "`%%`"),
        ("bell\x07", {}, "control character"),
    ],
)
def test_add_refusals(text: str, kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(Refused) as err:
        plan_add([], text, **kwargs)  # type: ignore[arg-type]
    assert says in str(err.value)


def test_a_loop_after_a_block_never_closed_is_refused_saying_why() -> None:
    with pytest.raises(Refused) as info:
        plan_add(["# Maya", "```", "code"], "call Ana")
    assert str(info.value).startswith(
        "the loop 'call Ana' would not read back as a task at line 6: its text, or a code"
        " block, comment or math block above it that is never closed"
    )
