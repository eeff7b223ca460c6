"""The store answers in typed rows, JSON columns decoded once: whole values over a real index."""

from __future__ import annotations

import pytest

from vaultmem import store
from vaultmem.errors import NoteNotFound
from vaultmem.store import (
    BacklinkRow,
    ChunkRow,
    FieldRow,
    FolderNote,
    HeadingInfo,
    LinkResolution,
    LinkRow,
    NoteRow,
    NoteSummary,
    ProblemLink,
    PropertyValue,
    StoredLink,
    TagCount,
    TaskInfo,
)
from vaultmem.vault import Vault

from .conftest import MakeVault

PEOPLE = (
    "---\n"
    "aliases: [Maya]\n"
    "role: lead\n"
    "date: 2026-11-20\n"
    "decay: active\n"
    "---\n"
    "# Maya Chen\n"
    "Works on [[Heat pump#Tariffs|tariffs]] and [[Nowhere]]. #team/energy\n"
    "- [ ] call back 📅 2026-12-01\n"
    "team:: energy ^fact-1\n"
    "## Notes\n"
    "See [[Heat pump#No such heading]].\n"
)
HEAT_PUMP = "# Heat pump\n## Tariffs\nAsk [[Maya]] (an alias: wanted, fixable).\n"


def indexed(make_vault: MakeVault) -> Vault:
    vault = make_vault(
        {
            "people/Maya Chen.md": PEOPLE,
            "Heat pump.md": HEAT_PUMP,
            "a/Dup.md": "x\n",
            "b/Dup.md": "links to [[Dup]]\n",
            "personas/helper.md": "---\ntype: persona\n---\nHi\n",
        }
    )
    vault.reindex()
    return vault


def test_a_note_row_has_its_json_columns_decoded(make_vault: MakeVault) -> None:
    conn = indexed(make_vault).conn
    path = "people/Maya Chen.md"
    assert store.note(conn, path) == NoteRow(
        path=path,
        title="Maya Chen",
        kind="note",
        size=len(PEOPLE.encode()),
        line_count=12,
        date="2026-11-20",
        aliases=("Maya",),
        frontmatter={"aliases": ["Maya"], "role": "lead", "date": "2026-11-20", "decay": "active"},
        warnings=(),
    )
    assert store.note(conn, "missing.md") is None
    assert store.direct_tags(conn, path) == ("team/energy",)
    assert store.headings_of(conn, path) == (
        HeadingInfo(1, "Maya Chen", 7, 12),
        HeadingInfo(2, "Notes", 11, 12),
    )
    assert store.tasks_of(conn, path) == (
        TaskInfo(9, " ", "call back 📅 2026-12-01", "2026-12-01", None),
    )
    assert store.fields_of(conn, [path])[path][-1] == FieldRow(
        "team", "energy ^fact-1", 10, "inline"
    )
    assert store.task_lines(conn, [path, "Heat pump.md"]) == {path: {9}, "Heat pump.md": set()}
    assert store.property_values(conn, "role") == [PropertyValue(path, "lead")]


def test_a_property_value_lists_its_items() -> None:
    assert PropertyValue("p.md", '["a", "[[b]]"]').items == ["a", "[[b]]"]  # a list, as JSON
    assert PropertyValue("p.md", "[[b]]").items == ["[[b]]"]  # a link, as written
    assert PropertyValue("p.md", "plain").items == ["plain"]


def test_note_facts_decode_front_matter_on_first_use(make_vault: MakeVault) -> None:
    conn = indexed(make_vault).conn
    facts = store.note_facts(conn, ["people/Maya Chen.md", "Heat pump.md"])
    maya, pump = facts["people/Maya Chen.md"], facts["Heat pump.md"]
    assert (maya.date, sorted(maya.tags), maya.may_decay) == (
        "2026-11-20",
        ["team", "team/energy"],
        True,
    )
    assert maya.frontmatter["decay"] == "active"
    assert (pump.tags, pump.may_decay, pump.frontmatter) == ((), False, {})
    decaying = store.decaying_notes(conn)
    assert [(d.path, d.frontmatter["decay"]) for d in decaying] == [
        ("people/Maya Chen.md", "active")
    ]


def test_links_come_typed_with_their_resolution(make_vault: MakeVault) -> None:
    conn = indexed(make_vault).conn
    assert store.outgoing(conn, "people/Maya Chen.md") == (
        LinkRow(8, "Heat pump", "links_to", "wiki", False, "Tariffs", None, "tariffs",
                "Heat pump.md", "note", (), True, None),
        LinkRow(8, "Nowhere", "links_to", "wiki", False, None, None, None,
                None, None, (), None, None),
        LinkRow(12, "Heat pump", "links_to", "wiki", False, "No such heading", None, None,
                "Heat pump.md", "note", (), False, None),
    )  # fmt: skip
    assert store.backlinks(conn, "Heat pump.md") == [
        BacklinkRow("people/Maya Chen.md", 8, "links_to", "Tariffs", None),
        BacklinkRow("people/Maya Chen.md", 12, "links_to", "No such heading", None),
    ]
    (ambiguous,) = store.ambiguous_links(conn)
    assert ambiguous == ProblemLink(
        "b/Dup.md", 1, "wiki", "Dup", None, None, None, False, "b/Dup.md",
        ("a/Dup.md", "b/Dup.md"), None,
    )  # fmt: skip
    assert [x.heading for x in store.broken_anchor_links(conn)] == ["No such heading"]
    (fixable,) = store.alias_fix_links(conn)
    assert (fixable.src_path, fixable.target, fixable.alias_fix) == (
        "Heat pump.md",
        "Maya",
        "people/Maya Chen.md",
    )
    stored = {s.target: s for s in store.all_links(conn)}
    assert stored["Dup"] == StoredLink(
        stored["Dup"].id,
        "b/Dup.md",
        "Dup",
        None,
        None,
        LinkResolution("b/Dup.md", ("a/Dup.md", "b/Dup.md"), None, None),
    )


def test_rows_for_search_browsing_and_personas(make_vault: MakeVault) -> None:
    conn = indexed(make_vault).conn
    matches = store.keyword_chunks(conn, '"tariffs"', 10)
    assert [(m.path, m.heading) for m in matches] == [
        ("Heat pump.md", "Heat pump > Tariffs"),
        ("people/Maya Chen.md", "Maya Chen"),
    ]
    assert all(m.bm25 < 0 for m in matches)
    first = matches[0]
    rows = store.chunk_rows(conn, [first.id])
    assert rows == {
        first.id: ChunkRow(first.id, "Heat pump.md", "Heat pump", 2, 3, "Heat pump > Tariffs")
    }
    mentions = store.mentions(conn, ["heat", "pump"], 5)
    assert sorted((m.path, m.line) for m in mentions) == [
        ("Heat pump.md", 1),
        ("people/Maya Chen.md", 7),
        ("people/Maya Chen.md", 11),
    ]
    assert store.tag_counts(conn) == [TagCount("team", 1), TagCount("team/energy", 1)]
    summaries = store.note_summaries(conn, 2)
    assert len(summaries) == 2 and all(isinstance(s, NoteSummary) for s in summaries)
    assert [s.aliases for s in store.note_summaries(conn) if s.title == "Maya Chen"] == [("Maya",)]
    assert store.notes_in_folder(conn, "personas") == [
        FolderNote("personas/helper.md", "helper", {"type": "persona"}, ())
    ]


def test_counts_and_doctor_rows(make_vault: MakeVault) -> None:
    conn = indexed(make_vault).conn
    counts = store.index_counts(conn)
    assert (counts.notes, counts.links, counts.wanted_links, counts.ambiguous_links) == (5, 5, 2, 1)
    totals = store.file_totals(conn)
    assert (totals.notes, totals.attachments, totals.links, totals.wanted_links) == (5, 0, 5, 2)
    assert store.note_warnings(conn) == []
    assert store.skipped_files(conn) == []
    assert store.quick_check(conn) == "ok"
    assert store.dirty_count(conn) == 0


def test_paths_spelled_finds_what_a_scan_of_every_path_finds(make_vault: MakeVault) -> None:
    """The lookup by name key (an index) answers as comparing every lower-cased path did."""
    vault = make_vault(
        {
            "Work/Plan.md": "x\n",
            "work/plan.md": "y\n",
            "a/Dup.md": "x\n",
            "b/dup.md.md": "x\n",
            "img/Photo.JPG": "",
            "日本/旅行.md": "x\n",
            "top.md": "x\n",
        }
    )
    vault.reindex()
    conn = vault.conn
    refs = ["work/plan", "Work/Plan.md", "WORK/PLAN.MD", "a/dup", "b/dup.md", "b/DUP.md.md",
            "img/photo.jpg", "日本/旅行", "top", "Top.md", "plan", "dup", "nowhere/x"]  # fmt: skip
    for ref in refs:
        folded = ref.lower()
        stem = folded.removesuffix(".md")
        scanned = [
            r[0]
            for r in conn.execute(
                "SELECT path FROM notes WHERE lower(path) IN (?, ?) OR lower(path) = ? || '.md'",
                (folded, stem, stem),
            )
        ]
        assert sorted(store.paths_spelled(conn, folded, stem)) == sorted(scanned), ref
    assert sorted(store.paths_spelled(conn, "work/plan", "work/plan")) == [
        "Work/Plan.md",
        "work/plan.md",
    ]
    assert store.paths_spelled(conn, "img/photo.jpg", "img/photo.jpg") == ["img/Photo.JPG"]
    # a path spelled exactly as indexed names that file; other spellings name both
    assert vault.find_note("Work/Plan.md") == "Work/Plan.md"
    assert vault.find_note("work/plan") == "work/plan.md"
    with pytest.raises(NoteNotFound, match="names 2 notes"):
        vault.find_note("WORK/Plan")
