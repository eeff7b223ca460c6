"""The memory service over a real index: facts read at index time, episodes, loops, recall, the
gate, and the planning of every memory write (nothing written here: see test_memory_writes)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import MakeVault
from tests.fake_model_server import FakeModelServer, unused_url
from vaultmem import store
from vaultmem.edit.text import Line, dominant_ending
from vaultmem.errors import ChangedOnDisk, NoteNotFound
from vaultmem.llm import OllamaLLM
from vaultmem.memories import apply_edits
from vaultmem.memory.errors import LoopAmbiguous, LoopChanged, LoopNotFound, Refused
from vaultmem.memory.lines import LineEdit
from vaultmem.memory.lines import apply as reference_apply
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
TODAY = NOW.date()

MAYA = """---
aliases: [Maya]
role: founder
---
# Maya Chen

## Facts
- employer:: Heatwise GmbH ^f-0001
    - source:: call with Maya
    - was:: Acme (until 2025-03-01, source: LinkedIn)
    - was:: Initech (until 2023-01-10)
- home_city:: Berlin ^f-0002

Drinks [drink:: tea] every morning.

## Open loops
- [ ] Send Maya the tariff sheet ⏫ 📅 2026-12-02
- [ ] Ask [[Priya]] about the freeze
- [x] Old thing ✅ 2026-11-01
"""

EPISODES = {
    "episodes/2026-11-20 Gateway rollback.md": (
        "---\ntype: episode\ndate: 2026-11-20T10:00:00+00:00\noutcome: failure\n"
        'entities:\n  - "[[Maya Chen]]"\n---\n\nThe 2.4.0 rollout rebooted gateways.\n'
    ),
    "episodes/2026-11-27 Hotfix shipped.md": (
        "---\ntype: episode\ndate: 2026-11-27\noutcome: success\n"
        'entities:\n  - "[[Maya Chen]]"\n  - "[[Tariff sync]]"\n---\n\nRetries fixed it.\n'
    ),
    "episodes/2026-10-02 Kickoff.md": (
        "---\ntype: episode\ndate: 2026-10-02\noutcome: resolved\nentities: []\n---\n\nStart.\n"
    ),
}


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault({"people/Maya Chen.md": MAYA, "Priya.md": "# Priya\n", **EPISODES})
    v.reindex(embed=False)
    return v


# --------------------------------------------------------------------------- facts


def test_facts_are_read_at_index_time_with_their_history(vault: Vault) -> None:
    got = vault.memory.facts("Maya")
    assert got.path == "people/Maya Chen.md"
    by_key = {f.key: f for f in got.facts}
    assert set(by_key) == {"role", "employer", "home_city", "drink"}
    employer = by_key["employer"]
    assert (employer.value, employer.block, employer.source, employer.form) == (
        "Heatwise GmbH",
        "f-0001",
        "call with Maya",
        "item",
    )
    assert [(h.value, h.until, h.source) for h in employer.history] == [
        ("Acme", dt.date(2025, 3, 1), "LinkedIn"),
        ("Initech", dt.date(2023, 1, 10), None),
    ]
    assert employer.changed == dt.date(2025, 3, 1)
    assert by_key["role"].form == "property"
    assert by_key["drink"].form == "inline"


def test_fact_get_one_key_compares_keys_as_dataview(vault: Vault) -> None:
    got = vault.memory.facts("people/Maya Chen.md", "HOME_CITY")
    assert [(f.key, f.value) for f in got.facts] == [("home_city", "Berlin")]


def test_fact_history_of_a_missing_key_says_how_to_list(vault: Vault) -> None:
    with pytest.raises(NoteNotFound, match="fact get"):
        vault.memory.fact_history("Maya", "shoe size")


def test_fact_list_filters_by_key_and_since(vault: Vault) -> None:
    rows = vault.memory.fact_list(key="employer")
    assert [(r.path, r.fact.value) for r in rows] == [("people/Maya Chen.md", "Heatwise GmbH")]
    # employer changed 2025-03-01; the other facts' note changed today (file time)
    recent = vault.memory.fact_list(since=dt.date(2025, 1, 1))
    assert "employer" in {r.fact.key for r in recent}
    future = vault.memory.fact_list(since=dt.date.today() + dt.timedelta(days=2))
    assert future == ()


def test_fact_list_since_keeps_an_undated_fact_only_when_its_note_changed_since(
    make_vault: MakeVault,
) -> None:
    """A fact without history counts from its note's last change; one with history from the
    day its newest `was::` ends, however recently its note changed."""
    import os

    vault = make_vault(
        {
            "Old.md": "---\nowner: Lena\n---\n- colour:: red\n",
            "New.md": "- colour:: blue\n- size:: L ^f-1\n    - was:: M (until 2020-05-01)\n",
        }
    )
    old = dt.datetime(2021, 3, 1, 12, tzinfo=dt.UTC).timestamp()
    os.utime(vault.root / "Old.md", (old, old))
    vault.reindex(embed=False)

    def listed(since: dt.date) -> set[tuple[str, str]]:
        return {(r.path, r.fact.key) for r in vault.memory.fact_list(since=since)}

    # New.md changed today: its undated colour counts; size was set on 2020-05-01
    assert listed(dt.date(2022, 1, 1)) == {("New.md", "colour")}
    assert listed(dt.date(2021, 1, 1)) == {
        ("New.md", "colour"),
        ("Old.md", "colour"),
        ("Old.md", "owner"),  # a front matter property is undated too
    }
    assert ("New.md", "size") in listed(dt.date(2020, 5, 1))
    assert ("New.md", "size") not in listed(dt.date(2020, 5, 2))


def test_a_reindex_after_an_edit_replaces_the_facts(vault: Vault) -> None:
    note = vault.root / "people" / "Maya Chen.md"
    note.write_text(MAYA.replace("Berlin", "Hamburg"), encoding="utf-8")
    vault.reindex(embed=False)
    assert vault.memory.facts("Maya", "home_city").facts[0].value == "Hamburg"
    assert len(store.all_facts(vault.conn, "home_city")) == 1


def test_entity_that_is_a_folder_or_ambiguous(vault: Vault, make_vault: MakeVault) -> None:
    with pytest.raises(NoteNotFound, match="is a folder"):
        vault.memory.facts("episodes")
    two = make_vault({"a/Bob.md": "x:: 1\n", "b/Bob.md": "x:: 2\n"})
    two.reindex(embed=False)
    with pytest.raises(NoteNotFound, match="names 2 notes"):
        two.memory.facts("Bob")


# --------------------------------------------------------------------------- search weighting


def test_current_value_outranks_history_yet_history_is_found(make_vault: MakeVault) -> None:
    fact = "# {}\n\n## Facts\n- employer:: {}\n    - was:: {} (until 2025-01-01)\n"
    v = make_vault(
        {
            "Old.md": fact.format("Old", "Heatwise", "Zephyrcorp"),
            "Now.md": fact.format("Now", "Zephyrcorp", "Heatwise"),
        }
    )
    v.reindex(embed=False)
    hits = v.search("Zephyrcorp", mode="keyword").hits
    assert [h.path for h in hits] == ["Now.md", "Old.md"]
    hits = v.search("Heatwise", mode="keyword").hits
    assert [h.path for h in hits] == ["Old.md", "Now.md"]


# --------------------------------------------------------------------------- episodes, loops


def test_episodes_with_time_forms_and_filters(vault: Vault) -> None:
    eps = vault.memory.episodes(since=dt.date(2026, 11, 1))
    assert [e.title for e in eps] == ["Hotfix shipped", "Gateway rollback"]
    assert [e.title for e in vault.memory.episodes(outcome="failure")] == ["Gateway rollback"]
    assert [e.title for e in vault.memory.episodes(entities=["Tariff sync"])] == ["Hotfix shipped"]
    assert vault.memory.episodes(since=dt.date(2026, 11, 1))[0].summary == "Retries fixed it."


def test_trends_per_week(vault: Vault) -> None:
    rows = vault.memory.trends("Maya Chen", "week")
    assert [(r.period, r.success, r.failure) for r in rows] == [
        ("2026-W47", 0, 1),
        ("2026-W48", 1, 0),
    ]
    assert rows[0].failure_rate == 1.0


def test_loops_ranked_with_entities(vault: Vault) -> None:
    ranked = vault.memory.loops(TODAY)
    assert [r.loop.title for r in ranked] == [
        "Send Maya the tariff sheet",
        "Ask [[Priya]] about the freeze",
    ]
    assert ranked[0].loop.due == dt.date(2026, 12, 2)
    about_priya = vault.memory.loops(TODAY, entities=["Priya"])
    assert [r.loop.title for r in about_priya] == ["Ask [[Priya]] about the freeze"]


def test_a_capture_notes_items_are_not_loops(make_vault: MakeVault) -> None:
    """A capture note's unchecked items are candidates its review decides: no open loop, so
    neither `loops` nor `loop resolve` nor recall takes them; a note of another type keeps its
    tasks as loops."""
    vault = make_vault(
        {
            "inbox/capture-1.md": "---\ntype: capture\nstatus: pending\n---\n# Capture\n"
            "- [ ] fact: Maya home_city = Hamburg\n- [ ] loop: renew the walrus permit\n",
            "inbox/other.md": "---\ntype: Capture notes\n---\n- [ ] renew the walrus licence\n",
            "Work.md": "# Work\n- [ ] renew the walrus lease\n",
        }
    )
    vault.reindex(embed=False)
    titles = sorted(r.loop.title for r in vault.memory.loops(TODAY))
    assert titles == ["renew the walrus lease", "renew the walrus licence"]
    with pytest.raises(LoopNotFound):
        vault.memory.writer.plan_resolve("renew the walrus permit", TODAY)
    got = vault.memory.recall("what is next on the walrus permit?", NOW)
    assert not [c for c in got.lines if c.kind == "loop" and "permit" in c.text]


# --------------------------------------------------------------------------- recall, gate


def test_recall_blends_the_entity_loops_episodes_and_facts(vault: Vault) -> None:
    got = vault.memory.recall("where did we leave off with Maya?", NOW, search=False)
    assert got.continuation is not None
    assert got.entities == ("people/Maya Chen.md",)
    kinds = [line.kind for line in got.lines]
    assert kinds.index("loop") < kinds.index("episode") < kinds.index("fact")
    assert "Send Maya the tariff sheet" in got.text
    assert "Hotfix shipped" in got.text
    assert "employer" in got.text


def test_recall_within_its_budget(vault: Vault) -> None:
    got = vault.memory.recall("where did we leave off with Maya?", NOW, budget=120)
    assert 0 < len(got.text) <= 120


def test_recall_leaves_expired_notes_out(make_vault: MakeVault) -> None:
    v = make_vault(
        {
            "Scratch.md": "---\ndecay: session\ndate: 2026-01-01\n---\n- [ ] zebra crossing fix\n",
            "Keep.md": "- [ ] zebra crossing paint\n",
        }
    )
    v.reindex(embed=False)
    got = v.memory.recall("what's next for the zebra crossing?", NOW)
    assert "Scratch.md" not in got.text and "Keep.md" in got.text
    assert (
        "Scratch.md"
        in v.memory.recall("what's next for the zebra crossing?", NOW, include_expired=True).text
    )


def test_the_gate_spares_a_search_for_a_greeting(vault: Vault) -> None:
    got = vault.memory.gate("hi, thanks a lot!", NOW)
    assert (got.decision.verdict, got.decision.search, got.context) == ("no-memory", False, None)


def test_the_gate_gives_context_when_memory_helps(vault: Vault) -> None:
    got = vault.memory.gate("what did we decide with Maya about the tariff sheet?", NOW)
    assert got.decision.verdict == "needs-memory"
    assert got.context is not None and "tariff sheet" in got.context.text


def test_the_gate_nothing_stored(vault: Vault) -> None:
    got = vault.memory.gate("what did my dentist say about the crown last time?", NOW)
    assert got.decision.verdict == "nothing-stored"


# --------------------------------------------------------------------------- planning writes


def test_apply_edits_keeps_line_ends_and_adds_the_dominant_one() -> None:
    lines = (Line("a", "\r\n"), Line("b", "\r\n"), Line("c", ""))
    got = apply_edits(lines, [LineEdit(1, 2, ("B", "b2")), LineEdit(3, 3, ("d",))])
    assert got == (
        Line("a", "\r\n"),
        Line("B", "\r\n"),
        Line("b2", "\r\n"),
        Line("c", "\r\n"),
        Line("d", ""),
    )


def test_plan_fact_changes_the_value_and_keeps_history(vault: Vault) -> None:
    plan = vault.memory.writer.plan_fact("Maya", "home_city", "Hamburg", today=TODAY, source="chat")
    assert plan.status == "changed" and plan.change is not None
    text = plan.change.data.decode()
    assert "- home_city:: Hamburg ^f-0002\n    - source:: chat\n" in text
    assert "    - was:: Berlin (until 2026-11-30)\n" in text
    assert plan.change.before == store.note_digest(vault.conn, "people/Maya Chen.md")


def test_plan_fact_same_value_plans_nothing(vault: Vault) -> None:
    plan = vault.memory.writer.plan_fact("Maya", "employer", "heatwise  gmbh.", today=TODAY)
    assert (plan.status, plan.change) == ("unchanged", None)
    assert "nothing changed" in plan.message


def test_plan_fact_refuses_bad_values(vault: Vault) -> None:
    for bad in ("a:: b", "two\nlines", "x" * 10_000, "[[broken", ""):
        with pytest.raises(Refused):
            vault.memory.writer.plan_fact("Maya", "note", bad, today=TODAY)


def test_plan_fact_keeps_a_wikilink_value(vault: Vault) -> None:
    plan = vault.memory.writer.plan_fact("Maya", "manager", "[[Priya]]", today=TODAY)
    assert plan.change is not None and "- manager:: [[Priya]] ^f-" in plan.change.data.decode()


def test_plan_fact_with_a_stale_digest_is_changed_on_disk(vault: Vault) -> None:
    with pytest.raises(ChangedOnDisk):
        vault.memory.writer.plan_fact("Maya", "x", "y", today=TODAY, digest="0" * 32)


def test_plan_fact_unknown_entity_needs_create(vault: Vault) -> None:
    with pytest.raises(NoteNotFound):
        vault.memory.writer.plan_fact("Tariff sync", "status", "green", today=TODAY)
    plan = vault.memory.writer.plan_fact("Tariff sync", "status", "green", today=TODAY, create=True)
    assert plan.path == "entities/Tariff sync.md" and plan.change is not None
    assert plan.change.before is None
    assert plan.change.data.decode().startswith("## Facts\n- status:: green ^f-")


def test_plan_fact_keeps_the_notes_encoding(make_vault: MakeVault) -> None:
    v = make_vault({"Old.md": "# Caf\xe9\r\nkey:: v\r\n".encode("cp1252")})
    v.reindex(embed=False)
    plan = v.memory.writer.plan_fact("Old", "key", "w", today=TODAY)
    assert plan.change is not None
    assert plan.change.data.startswith("# Caf\xe9\r\n".encode("cp1252"))
    with pytest.raises(Exception, match="Windows-1252"):
        v.memory.writer.plan_fact("Old", "key", "日本", today=TODAY)


def test_plan_episode_refuses_the_future_and_takes_a_free_name(vault: Vault) -> None:
    with pytest.raises(Refused):
        vault.memory.writer.plan_episode(
            "Later", "success", now=NOW, when=NOW + dt.timedelta(days=2)
        )
    plan = vault.memory.writer.plan_episode(
        "Gateway rollback", "success", now=NOW, when=dt.date(2026, 11, 20)
    )
    assert plan.path == "episodes/2026-11-20 Gateway rollback 2.md"


def test_plan_loop_and_resolve(vault: Vault) -> None:
    plan = vault.memory.writer.plan_loop("Call Priya", "Maya", due=dt.date(2026, 12, 5))
    assert plan.change is not None
    assert "- [ ] Call Priya 📅 2026-12-05\n" in plan.change.data.decode()
    done = vault.memory.writer.plan_resolve("tariff sheet", TODAY)
    assert done.change is not None
    assert "- [x] Send Maya the tariff sheet ⏫ 📅 2026-12-02 ✅ 2026-11-30" in (
        done.change.data.decode()
    )


def test_resolve_several_matches_lists_them(vault: Vault) -> None:
    with pytest.raises(LoopAmbiguous, match="l-"):
        vault.memory.writer.plan_resolve("a", TODAY)


def test_resolve_a_task_checked_in_obsidian_since_listing(vault: Vault) -> None:
    note = vault.root / "people" / "Maya Chen.md"
    note.write_text(MAYA.replace("- [ ] Send", "- [x] Send"), encoding="utf-8")
    with pytest.raises(LoopChanged, match="already checked"):
        vault.memory.writer.plan_resolve("tariff sheet", TODAY)  # the index still lists it open


# --------------------------------------------------------------------------- the gate's model


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        monkeypatch.setenv("OLLAMA_URL", fake.url)
        yield fake


def test_the_gate_asks_a_model_and_follows_a_clear_answer(
    vault: Vault, model: FakeModelServer
) -> None:
    model.reply = "NONE"
    got = vault.memory.gate(
        "what did we decide with Maya?", NOW, llm=OllamaLLM("llama3.2", model.url)
    )
    assert (got.llm, got.decision.verdict, got.notice) == ("no-memory", "no-memory", None)
    assert got.decision.reasons[-1] == "the model says it needs no memory"
    assert got.context is None  # the model said no: nothing searched or sent


@pytest.mark.parametrize(
    "reply",
    [
        "Well, it depends on MEMORY and on NONE of the above.",
        '{"thoughts": "hmm"}',
        "",
        "x" * 2000,
    ],
    ids=["both-words", "json-without-verdict", "empty", "overlong"],
)
def test_a_nonsensical_model_falls_back_to_the_offline_gate(
    vault: Vault, model: FakeModelServer, reply: str
) -> None:
    model.reply = reply
    got = vault.memory.gate("hello there!", NOW, llm=OllamaLLM("llama3.2", model.url))
    assert got.decision.verdict == "no-memory" and got.llm is None
    assert got.notice is not None and "is not MEMORY or NONE" in got.notice
    assert model.posts("/api/generate")  # it was asked


def test_a_down_model_falls_back_to_the_offline_gate(vault: Vault) -> None:
    got = vault.memory.gate("hi!", NOW, llm=OllamaLLM("m", unused_url()))
    assert got.decision.verdict == "no-memory"
    assert got.notice is not None and "could not answer" in got.notice


def test_a_model_saying_memory_tips_an_undecided_message(
    vault: Vault, model: FakeModelServer
) -> None:
    model.reply = "MEMORY"
    plain = vault.memory.gate("what is a tariff sheet?", NOW)
    asked = vault.memory.gate("what is a tariff sheet?", NOW, llm=OllamaLLM("llama3.2", model.url))
    assert plain.decision.verdict == "no-memory"
    assert asked.decision.verdict == "needs-memory" and asked.llm == "needs-memory"
    assert asked.context is not None and "tariff sheet" in asked.context.text


@given(
    st.lists(st.text(alphabet="ab -[]:x", max_size=6), max_size=8),
    st.lists(
        st.tuples(
            st.integers(0, 8),
            st.integers(0, 2),
            st.lists(st.text(alphabet="cd ", max_size=4), max_size=3),
        ),
        max_size=3,
    ),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_apply_edits_matches_the_cores_reference_semantics(
    texts: list[str],
    raw: list[tuple[int, int, list[str]]],
    end: str,
    final_newline: bool,
) -> None:
    """The editor's operations give the lines `memory.lines.apply` defines, with line ends."""
    lines = tuple(Line(t, end) for t in texts)
    if lines and not final_newline:
        lines = (*lines[:-1], Line(lines[-1].text, ""))
    edits: list[LineEdit] = []
    taken = -1
    for start, length, new in sorted(raw):
        start = min(start, len(lines))
        stop = min(start + length, len(lines))
        if start <= taken or any(e.start == start for e in edits):
            continue
        edits.append(LineEdit(start, stop, tuple(new)))
        taken = max(stop - 1, start)
    got = apply_edits(lines, edits)
    assert [line.text for line in got] == reference_apply(texts, edits)
    want = dominant_ending(lines)  # a note without any line end gets LF
    assert all(line.end == want for line in got[:-1])
    if got and lines:
        assert (got[-1].end == "") == (not final_newline)
