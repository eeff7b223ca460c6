"""The gaps report on the sample vault, the graph commands, and the alias fix's safety."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, MakeVault, write_files
from vaultmem.edit import Change
from vaultmem.gaps import (
    GAP_CLASSES,
    ExpiredNote,
    GapRow,
    GapsReport,
    Suggestion,
    WantedNote,
    apply_alias_fixes,
    gap_class,
    gap_counts,
    gap_rows,
    gaps_report,
    plan_alias_fixes,
)
from vaultmem.health import LinkProblem
from vaultmem.vault import Applied, Vault

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def test_every_gap_class_shows_up_in_the_sample_vault(sample_vault: Vault) -> None:
    report = gaps_report(sample_vault, now=NOW)
    assert report.notes == 43
    assert report.orphans == ("personal/Gift Ideas.md",)
    assert report.dead_ends == ("work/people/Jonas Berg.md",)
    assert [(w.name, len(w.linked_from)) for w in report.wanted] == [
        ("Load Forecasting", 4),
        ("Marathon Training", 2),
        ("firmware-rollback v1", 1),
        ("Priya", 1),
    ]
    assert [(p.src_path, p.fix) for p in report.alias_fixable] == [
        ("work/Meeting notes.md", "[[Priya Raman|Priya]]")
    ]
    assert "personal/recipes/Shakshuka.md" in report.weakly_linked
    assert ("Maya Chen.md", 2) in report.articulation_points
    assert report.isolated_clusters == (
        ("hobbies/Darkroom Chemistry.md", "hobbies/Film Photography.md"),
    )
    assert [(e.path, e.tier) for e in report.expired] == [
        ("work/Scratch - tariff sync debugging.md", "session")
    ]
    assert any(
        s.source == "personal/recipes/Shakshuka.md" and "#recipe" in s.evidence
        for s in report.suggestions
    )


def test_the_gap_classes_are_the_reports_fields_in_one_order(sample_vault: Vault) -> None:
    report = gaps_report(sample_vault, now=NOW)
    assert [g.key for g in GAP_CLASSES] == list(report.totals())
    for gap in GAP_CLASSES:
        assert gap_class(gap.key) is gap and gap.label and gap.description and gap.empty
        rows = gap_rows(report, gap.key)
        assert len(rows) == report.totals()[gap.key]
        assert all(len(row.cells) == len(gap.columns) for row in rows), gap.key
    counts = {c.gap.key: (c.count, c.percent) for c in gap_counts(report)}
    assert counts["orphans"] == (1, 2.3) and counts["wanted"] == (4, None)
    assert gap_rows(report, "wanted")[0] == GapRow(
        (
            "Load Forecasting",
            "4 notes: daily/2026-11-29.md, work/Architecture Decisions.md, work/Q4 Roadmap.md …",
        ),
        "daily/2026-11-29.md",
    )
    assert GapRow(("Maya Chen.md", "2"), "Maya Chen.md") in gap_rows(report, "articulation_points")
    assert gap_rows(report, "isolated_clusters") == (
        GapRow(
            ("2", "hobbies/Darkroom Chemistry.md, hobbies/Film Photography.md"),
            "hobbies/Darkroom Chemistry.md",
        ),
    )
    with pytest.raises(KeyError):
        gap_class("nope")


def test_decay_tiers_follow_the_clock(sample_vault: Vault) -> None:
    before = gaps_report(sample_vault, now=dt.datetime(2026, 11, 26, 17, tzinfo=dt.UTC))
    assert before.expired == ()  # the session note lives one day from 16:40 on the 26th
    later = gaps_report(sample_vault, now=dt.datetime(2027, 3, 1, tzinfo=dt.UTC))
    assert {e.path for e in later.expired} >= {"work/Meeting notes.md"}  # stable: 90 days


def test_unlinked_mentions_are_suggested(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "Solar Inverter.md": "An orphan about the device.",
            "log.md": "Today the solar inverter tripped twice. [[other]]",
            "other.md": "[[log]]",
        }
    )
    vault.reindex()
    report = gaps_report(vault, now=NOW)
    assert report.orphans == ("Solar Inverter.md",)
    (suggestion,) = [s for s in report.suggestions if s.target == "Solar Inverter.md"]
    assert suggestion.source == "log.md" and "Solar Inverter" in suggestion.evidence


def test_alias_fix_rewrites_only_the_link(make_vault: MakeVault) -> None:
    original = (
        "---\r\ntitle: keep: this\r\n---\r\n"
        "Met [[Bob]] and ![[ bob #Plans]] and [[Bob|Robert]] today.\r\n"
        "`[[Bob]]` stays code.\r\n"
    )
    vault = make_vault(
        {
            "log.md": original.encode(),
            "people/Robert Smith.md": "---\naliases: [Bob]\n---\n## Plans\n",
        }
    )
    vault.reindex()
    plan = plan_alias_fixes(vault)
    assert [p.path for p in plan.files] == ["log.md"] and plan.refused == ()
    result = apply_alias_fixes(vault, plan)
    assert (result.fixed, result.written, result.refused) == (3, ("log.md",), ())
    text = (vault.root / "log.md").read_bytes().decode()
    assert text == (
        "---\r\ntitle: keep: this\r\n---\r\n"
        "Met [[Robert Smith|Bob]] and ![[Robert Smith#Plans|bob]] and [[Robert Smith|Robert]]"
        " today.\r\n`[[Bob]]` stays code.\r\n"
    )
    assert vault.alias_fixable() == ()  # reindexed by the write itself
    assert {link.dst_path for link in vault.show("log").links} == {"people/Robert Smith.md"}


def test_alias_fix_skips_code_and_escapes_on_the_same_line(make_vault: MakeVault) -> None:
    """The rewrite finds links as the parser does: not in inline code, not escaped."""
    vault = make_vault(
        {
            "log.md": "`[[Bob]]` and \\[[Bob]] are text; [[bob]] is a link.\n",
            "people/Robert Smith.md": "---\naliases: [Bob]\n---\n",
        }
    )
    vault.reindex()
    assert apply_alias_fixes(vault, plan_alias_fixes(vault)).fixed == 1
    text = (vault.root / "log.md").read_text(encoding="utf-8")
    assert text == "`[[Bob]]` and \\[[Bob]] are text; [[Robert Smith|bob]] is a link.\n"


def test_alias_fix_refuses_a_file_changed_since_indexing(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "log.md": "[[Bob]]\n",
            "other.md": "[[Bob]] too\n",
            "Robert.md": "---\naliases: [Bob]\n---\n",
        }
    )
    vault.reindex()
    (vault.root / "log.md").write_text("[[Bob]]\nmy new line\n")
    plan = plan_alias_fixes(vault)
    assert [f.path for f in plan.files] == ["other.md"]
    ((path, changed, reason),) = [(r.path, r.changed, r.reason) for r in plan.refused]
    assert (path, changed) == ("log.md", True) and "run `vaultmem reindex`" in reason
    vault.reindex()
    plan = plan_alias_fixes(vault)
    assert [f.path for f in plan.files] == ["log.md", "other.md"]
    (vault.root / "log.md").write_text("[[Bob]]\nedited again while the diff was shown\n")
    result = apply_alias_fixes(vault, plan)
    assert result.written == ("other.md",) and result.fixed == 1
    assert [(r.path, r.changed) for r in result.refused] == [("log.md", True)]
    assert (vault.root / "log.md").read_text().endswith("while the diff was shown\n")
    assert (vault.root / "other.md").read_text() == "[[Robert|Bob]] too\n"
    assert not [p for p in os.listdir(vault.root) if "vaultmem-tmp" in p]
    # the note written is reindexed; the refused one is not yet (the index says what it read)
    assert [p.src_path for p in vault.alias_fixable()] == ["log.md"]


def test_fix_aliases_says_which_notes_were_written_when_one_changed_meanwhile(
    make_vault: MakeVault,
) -> None:
    """Issue 15 defect 18: a note changed while the command waits for confirmation. It used to
    say "nothing was written" after rewriting the notes before it, and left the index behind."""
    vault = make_vault(
        {"a.md": "[[Bob]]\n", "b.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"}
    )
    vault.reindex(embed=False)
    code = (
        "import sys, click\n"
        "from pathlib import Path\n"
        "from vaultmem.cli import root\n"
        "VAULT = sys.argv[1]\n"
        "def confirm(*a, **k):\n"
        "    Path(VAULT, 'b.md').write_text('[[Bob]] changed meanwhile\\n')\n"
        "    return True\n"
        "click.confirm = confirm\n"
        "sys.stdin.isatty = lambda: True\n"
        "sys.argv = ['vaultmem', '--vault', VAULT, 'gaps', 'fix-aliases']\n"
        "root.main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(vault.root)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 6, result.stderr
    assert "fixed 1 link in 1 note (written and reindexed)" in result.stdout
    assert "nothing was written" not in result.stdout
    assert "not written b.md" in result.stderr and "changed on disk" in result.stderr
    assert (vault.root / "a.md").read_text() == "[[Robert|Bob]]\n"
    assert (vault.root / "b.md").read_text() == "[[Bob]] changed meanwhile\n"
    vault.close()
    assert [p.src_path for p in vault.alias_fixable()] == ["b.md"]  # a.md's fix is indexed


def test_alias_fix_after_a_form_feed_finds_the_link_doctor_reports(make_vault: MakeVault) -> None:
    """Issue 16: `splitlines()` also splits at a form feed (and \\v, \\x1c-\\x1e, \\x85,
    U+2028, U+2029), the parser does not: the fix plan looked at the wrong line and dropped it."""
    text = "page one\fstill line one\nline two\u2028same line [[Bob]]\nend\x85 [[bob]]\n"
    vault = make_vault({"log.md": text, "Robert.md": "---\naliases: [Bob]\n---\n"})
    vault.reindex(embed=False)
    assert [(p.line, p.written) for p in vault.alias_fixable()] == [(2, "[[Bob]]"), (3, "[[bob]]")]
    plan = plan_alias_fixes(vault)
    assert plan.fixes == 2
    apply_alias_fixes(vault, plan)
    assert (vault.root / "log.md").read_text(encoding="utf-8") == text.replace(
        "[[Bob]]", "[[Robert|Bob]]"
    ).replace("[[bob]]", "[[Robert|bob]]")
    assert vault.alias_fixable() == ()


def test_alias_fix_keeps_a_latin_1_note_in_its_encoding(make_vault: MakeVault) -> None:
    """Issue 15 defect 10: a Latin-1 note with an alias link ended in a traceback, even with
    --dry-run. It is fixed in its own encoding, or refused with a reason when the fix needs a
    character the encoding lacks; the other notes are fixed either way."""
    latin = "Caf\xe9 with [[Bob]]\r\n".encode("cp1252")
    vault = make_vault(
        {
            "latin.md": latin,
            "greek.md": "na\xefve [[Zed]]\n".encode("cp1252"),
            "Robert.md": "---\naliases: [Bob]\n---\n",
            "Ζήτα.md": "---\naliases: [Zed]\n---\n",
        }
    )
    vault.reindex(embed=False)
    plan = plan_alias_fixes(vault)
    assert [f.path for f in plan.files] == ["latin.md"]
    ((refused, reason),) = [(r.path, r.reason) for r in plan.refused]
    assert refused == "greek.md" and "Windows-1252" in reason and "nothing was written" in reason
    apply_alias_fixes(vault, plan)
    assert (vault.root / "latin.md").read_bytes() == "Caf\xe9 with [[Robert|Bob]]\r\n".encode(
        "cp1252"
    )
    dry = subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(vault.root), "gaps", "fix-aliases",
         "--dry-run"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in dry.stderr
    assert dry.returncode == 1 and "skipped greek.md" in dry.stderr


def test_alias_fix_writes_through_a_symlinked_note_and_keeps_the_link(
    make_vault: MakeVault,
) -> None:
    """Issue 15 defect 2: the symlink was replaced by a regular copy."""
    vault = make_vault({"real/log.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"})
    (vault.root / "log.md").symlink_to("real/log.md")
    vault.reindex(embed=False)
    result = apply_alias_fixes(vault, plan_alias_fixes(vault))
    assert result.refused == ()
    assert (vault.root / "log.md").is_symlink()
    assert os.readlink(vault.root / "log.md") == "real/log.md"
    assert (vault.root / "real/log.md").read_text() == "[[Robert|Bob]]\n"
    assert vault.alias_fixable() == ()


def test_alias_fix_refuses_a_symlink_out_of_the_vault(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("[[Bob]]\n")
    vault = make_vault({"Robert.md": "---\naliases: [Bob]\n---\n", "log.md": "[[Bob]]\n"})
    vault.reindex(embed=False)
    (vault.root / "log.md").unlink()
    (vault.root / "log.md").symlink_to(outside)  # swapped after the reindex
    plan = plan_alias_fixes(vault)
    assert plan.files == () and "outside the vault" in plan.refused[0].reason
    assert outside.read_text() == "[[Bob]]\n"


def test_alias_fix_refuses_a_read_only_note(make_vault: MakeVault) -> None:
    """Issue 15 defect 2: a 0444 note was rewritten (the rename needs only the folder's write
    permission). Refused with a clear message, even for root; the other notes are fixed."""
    vault = make_vault(
        {"ro.md": "[[Bob]]\n", "rw.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"}
    )
    (vault.root / "ro.md").chmod(0o444)
    vault.reindex(embed=False)
    result = apply_alias_fixes(vault, plan_alias_fixes(vault))
    assert result.written == ("rw.md",)
    ((path, reason),) = [(r.path, r.reason) for r in result.refused]
    assert path == "ro.md" and "read-only" in reason
    assert (vault.root / "ro.md").read_text() == "[[Bob]]\n"
    assert (vault.root / "ro.md").stat().st_mode & 0o777 == 0o444


def test_alias_fix_refuses_a_read_only_note_without_roots_override(make_vault: MakeVault) -> None:
    """The same through the CLI as root without the capabilities that bypass permissions (a
    0644 note owned by another user, in a folder writable by us: only the note is protected)."""
    from tests.edit.conftest import without_override

    prefix = without_override()
    vault = make_vault({"log.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"})
    vault.reindex(embed=False)
    note = vault.root / "log.md"
    os.chown(note, 12345, 12345)  # someone else's note, 0644: we may read, not write
    note.chmod(0o644)
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "vaultmem", "--vault", str(vault.root), "gaps",
         "fix-aliases", "--yes"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    assert "log.md" in result.stderr and "nothing was written" in result.stderr
    assert note.read_text() == "[[Bob]]\n"
    assert (note.stat().st_uid, note.stat().st_mode & 0o777) == (12345, 0o644)


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,  # a deadline, not a wait: generous for a loaded machine
    )


def test_graph_and_gaps_commands(tmp_path: Path) -> None:
    base = ["--vault", str(SAMPLE_VAULT), "--index", str(tmp_path / "i.db")]
    assert run(*base, "reindex").returncode == 0
    path = json.loads(run(*base, "graph", "path", "Shakshuka", "Jonas Berg", "--json").stdout)
    assert path["found"] and len(path["hops"]) == 4
    assert path["hops"][1] == {
        "from": {
            "path": "personal/recipes/Weekly Meal Plan.md",
            "title": "Weekly Meal Plan",
            "kind": "note",
        },
        "to": {"path": "Maya Chen.md", "title": "Maya Chen", "kind": "note"},
        "relation": "links_to",
        "direction": "<--",
    }
    missing = run(*base, "graph", "path", "Gift Ideas", "Maya")
    assert missing.returncode == 1
    assert missing.stderr.splitlines() == [
        "No path from Gift Ideas to Maya Chen within 5 hops.",
        "  Gift Ideas: 0 linked notes, in a group of 1.",
        "  Maya Chen: 14 linked notes, in a group of 46.",
        "  They are in separate groups: no chain of links joins them.",
    ]
    why = run(*base, "graph", "path", "Gift Ideas", "Maya", "--json")
    assert why.returncode == 1
    assert json.loads(why.stdout)["why_not"] == " ".join(
        line.strip() for line in missing.stderr.splitlines()
    )
    unknown = run(*base, "graph", "path", "Shakshuk", "Maya")
    assert unknown.returncode == 1 and "did you mean 'Shakshuka'" in unknown.stderr
    same = run(*base, "graph", "path", "Maya", "M. Chen")
    assert "same note" in same.stdout
    clusters = json.loads(run(*base, "graph", "clusters", "--json").stdout)
    assert clusters == json.loads(run(*base, "graph", "clusters", "--json").stdout)  # cached
    assert sum(c["size"] for c in clusters["clusters"]) <= 43
    assert clusters["total"] == len(clusters["clusters"])
    fragile = json.loads(run(*base, "graph", "fragile", "--json").stdout)
    assert {"path": "Maya Chen.md", "title": "Maya Chen", "pieces": 2} in (
        fragile["articulation_points"]
    )
    gaps = json.loads(run(*base, "gaps", "--json", "--limit", "0").stdout)
    assert gaps["totals"]["orphans"] == 1 and gaps["totals"]["alias_fixable"] == 1
    text = run(*base, "gaps").stdout
    assert "orphans: notes with no links in or out" in text and "personal/Gift Ideas.md" in text
    assert "work/Meeting notes.md:20  link: [[Priya]]  fix: [[Priya Raman|Priya]]" in text
    dry = run(*base, "gaps", "fix-aliases", "--dry-run")
    assert "+Short one. [[Priya Raman|Priya]]" in dry.stdout and "nothing written" in dry.stdout
    refused = run(*base, "gaps", "fix-aliases")  # no terminal to confirm on, no --yes
    assert refused.returncode == 2 and "--yes" in refused.stderr


def test_graph_on_vaults_without_links(make_vault: MakeVault) -> None:
    empty = make_vault({})
    empty.reindex()
    report = gaps_report(empty, now=NOW)
    assert report.notes == 0 and report.orphans == ()
    write_files(empty.root, {"a.md": "no links", "b.md": "none here [[b]]"})
    empty.reindex()
    report = gaps_report(empty, now=NOW)
    assert report.orphans == ("a.md", "b.md")  # a self-link is not a connection
    assert [c.members for c in empty.clusters(min_size=1)] == [("a.md",), ("b.md",)]


def test_sections_close_in_meaning_are_suggested(tmp_path: Path) -> None:
    vault = Vault(SAMPLE_VAULT, tmp_path / "i.db")
    vault.embedder_spec = "wordllama"  # the real bundled model: similarity must mean something
    vault.reindex()
    close = [s for s in gaps_report(vault, now=NOW).suggestions if "close in meaning" in s.evidence]
    assert ("personal/recipes/Shakshuka.md", "personal/recipes/Miso Soup.md") in {
        (s.source, s.target) for s in close
    }
    assert all(s.source != s.target for s in close)


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/gaps.py that the tests above let through
# (docs/TESTING.md, "gap report").


def _report(**fields: object) -> GapsReport:
    empty: dict[str, object] = {key: () for key in GapsReport.__dataclass_fields__}
    return GapsReport(**{**empty, "notes": 0, **fields})  # type: ignore[arg-type]


def test_a_share_of_all_notes_is_a_percentage_to_one_decimal() -> None:
    report = _report(notes=8)
    assert [report.percent(n) for n in (0, 1, 3, 8)] == [0.0, 12.5, 37.5, 100.0]
    assert _report(notes=3).percent(2) == 66.7
    assert _report(notes=0).percent(2) == 0.0  # no notes: no share, and no division by zero


def test_gap_rows_name_the_note_each_row_opens() -> None:
    problem = LinkProblem("log.md", 4, "[[Bob]]", "'Bob' is an alias of Robert.md", None)
    report = _report(
        notes=9,
        orphans=("o.md",),
        dead_ends=("d.md",),
        weakly_linked=("w.md",),
        wanted=(
            WantedNote("Three", ("a.md", "b.md", "c.md")),
            WantedNote("Two", ("a.md", "b.md")),
            WantedNote("One", ("a.md",)),
            WantedNote("Nobody", ()),
        ),
        alias_fixable=(problem,),
        bridges=(("a.md", "b.md"),),
        suggestions=(Suggestion("s.md", "t.md", "both have #x"),),
        expired=(ExpiredNote("e.md", "session", "2026-11-02T00:00:00+00:00"),),
    )
    assert gap_rows(report, "orphans") == (GapRow(("o.md",), "o.md"),)
    assert gap_rows(report, "dead_ends") == (GapRow(("d.md",), "d.md"),)
    assert gap_rows(report, "weakly_linked") == (GapRow(("w.md",), "w.md"),)
    assert gap_rows(report, "wanted") == (
        GapRow(("Three", "3 notes: a.md, b.md, c.md"), "a.md"),  # three: no "…" yet
        GapRow(("Two", "2 notes: a.md, b.md"), "a.md"),
        GapRow(("One", "1 note: a.md"), "a.md"),
        GapRow(("Nobody", "0 notes: "), None),
    )
    # a problem without a fix shows an empty fix cell
    assert gap_rows(report, "alias_fixable") == (GapRow(("log.md:4", "[[Bob]]", ""), "log.md"),)
    assert gap_rows(report, "bridges") == (GapRow(("a.md — b.md",), "a.md"),)
    assert gap_rows(report, "suggestions") == (GapRow(("s.md", "t.md", "both have #x"), "s.md"),)
    assert gap_rows(report, "expired") == (GapRow(("e.md", "session", "2026-11-02"), "e.md"),)
    with pytest.raises(KeyError) as raised:
        gap_class("nope")
    assert raised.value.args == ("nope",)
    with pytest.raises(KeyError) as raised:
        gap_rows(report, "nope")  # type: ignore[arg-type]
    assert raised.value.args == ("nope",)


def test_expiry_without_a_date_counts_from_the_files_modification_time(
    make_vault: MakeVault,
) -> None:
    """The clock starts at the file's mtime (an aware UTC time); expired *at* that moment."""
    vault = make_vault({"scratch.md": "---\ndecay: session\n---\nthrowaway\n"})
    written = dt.datetime(2026, 11, 1, 6, 30, 15, tzinfo=dt.UTC)
    os.utime(vault.root / "scratch.md", (written.timestamp(), written.timestamp()))
    vault.reindex(embed=False)
    end = written + dt.timedelta(days=1)
    assert gaps_report(vault, now=end - dt.timedelta(microseconds=1)).expired == ()
    (expired,) = gaps_report(vault, now=end).expired
    assert (expired.path, expired.tier, expired.expired_at) == (
        "scratch.md",
        "session",
        "2026-11-02T06:30:15+00:00",
    )
    # without a clock given, now (an aware time: it is compared with the note's expiry)
    assert [e.path for e in gaps_report(vault).expired] == ["scratch.md"]


def test_suggestions_never_involve_a_persona_on_either_side(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "Solar Inverter.md": "An orphan about the device.\n",
            "coach.md": "---\ntype: persona\n---\nAsk about the solar inverter first.\n",
            "log.md": "The solar inverter tripped. [[other]]\n",
            "other.md": "[[log]]\n",
        }
    )
    vault.reindex(embed=False)
    pairs = {(s.source, s.target) for s in gaps_report(vault, now=NOW).suggestions}
    assert ("log.md", "Solar Inverter.md") in pairs
    assert not any("coach.md" in pair for pair in pairs)


def test_mentions_suggest_each_unlinked_note_once_and_never_a_linked_one(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(
        {
            "Ax.md": "A short title is never searched for: ax ax ax.\n",
            "Kiln.md": "The kiln is mine: it mentions itself. [[glaze]]\n",
            "glaze.md": "Linked from the kiln's note: the kiln is not suggested here.\n",
            "Dead.md": "A dead end, mentioned only by the note linking it.\n",
            "sink.md": "[[Dead]] is dead, we know. [[one]]\n",
            "one.md": "We fired the kiln at noon. [[two]]\n",
            "two.md": "The kiln cracked. [[one]]\n",
            "Große Straße.md": "Linked from nowhere.\n",
            "walk.md": "Down the große straße again. [[one]]\n",
        }
    )
    vault.reindex(embed=False)
    found = [
        (s.source, s.target, s.evidence)
        for s in gaps_report(vault, now=NOW).suggestions
        if "mentions" in s.evidence
    ]
    assert found == [
        ("walk.md", "Große Straße.md", "mentions “Große Straße” (section at line 1)"),
        ("one.md", "Kiln.md", "mentions “Kiln” (section at line 1)"),
        ("two.md", "Kiln.md", "mentions “Kiln” (section at line 1)"),
    ]


def test_mentions_are_capped_at_five_notes(make_vault: MakeVault) -> None:
    files = {f"m{i}.md": f"The kiln again, note {i}. [[hub]]\n" for i in range(8)}
    vault = make_vault({**files, "Kiln.md": "alone\n", "hub.md": "[[m0]]\n"})
    vault.reindex(embed=False)
    mentions = [s for s in gaps_report(vault, now=NOW).suggestions if s.target == "Kiln.md"]
    assert len(mentions) == 5


def test_shared_rare_labels_suggest_each_unlinked_pair_once(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "a.md": "#kiln #glaze #clay #wheel alone\n",
            "b.md": "#kiln #glaze #clay #wheel alone too\n",
            "c.md": "#kiln [[d]]\n",
            "d.md": "#kiln\n",
        }
    )
    vault.reindex(embed=False)
    found = {
        (s.source, s.target): s.evidence
        for s in gaps_report(vault, now=NOW).suggestions
        if s.evidence.startswith("both have")
    }
    # the three first labels, sorted; c and d are linked already, so never suggested together
    assert found["a.md", "b.md"] == "both have #clay, #glaze, #kiln"
    assert found["b.md", "a.md"] == "both have #clay, #glaze, #kiln"
    assert found["a.md", "c.md"] == "both have #kiln"
    assert ("c.md", "d.md") not in found and ("d.md", "c.md") not in found
    assert all(source != target for source, target in found)


# The fake embedder counts words into 32 hashed slots; "alpha", "beta", "gamma" and "delta" fall
# in four different slots, so a note of all four and a section of "alpha" alone are exactly
# 0.5 apart in cosine: the threshold, which counts as close.
FAR_ENOUGH = "alpha beta gamma delta"


def test_sections_close_in_meaning_name_their_heading_and_cosine(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "Aaa.md": "",  # a gap note without vectors: skipped, the next ones still looked at
            "Lonely.md": f"{FAR_ENOUGH}\n",
            "twin.md": f"{FAR_ENOUGH}\n",
            "half.md": "alpha\n",
            "titled.md": f"## {FAR_ENOUGH}\n",
            "Linked.md": f"{FAR_ENOUGH} [[friend]]\n",
            "friend.md": f"{FAR_ENOUGH}\n",
        }
    )
    vault.reindex()
    close = {
        (s.source, s.target): s.evidence
        for s in gaps_report(vault, now=NOW).suggestions
        if "close in meaning" in s.evidence
    }
    assert close["Lonely.md", "twin.md"] == "close in meaning, cosine 1.00"
    assert close["Lonely.md", "half.md"] == "close in meaning, cosine 0.50"
    assert close["Lonely.md", "titled.md"].startswith(f"close in meaning (“{FAR_ENOUGH}”), ")
    assert not any(source == target for source, target in close)
    assert ("Linked.md", "friend.md") not in close and ("friend.md", "Linked.md") not in close


def test_close_sections_are_the_twelve_nearest(make_vault: MakeVault) -> None:
    files = {f"n{i:02}.md": "alpha beta gamma\n" for i in range(15)}
    vault = make_vault({**files, "Lonely.md": f"{FAR_ENOUGH}\n"})
    vault.reindex()
    close = [s for s in gaps_report(vault, now=NOW).suggestions if s.source == "Lonely.md"]
    assert len(close) == 11  # twelve nearest sections, its own among them


def test_alias_fix_plan_shows_the_diff_and_goes_on_past_notes_it_cannot_fix(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(
        {
            "a.md": "[Bob](Bob.md) only a markdown link\n",  # reported, but no wikilink to fix
            "b.md": "[[Bob]]\n",
            "c.md": "see [[Bob]] and [[bob]]\n",
            "Robert.md": "---\naliases: [Bob]\n---\n",
        }
    )
    (vault.root / "b2.md").symlink_to("b.md")  # the same file under a second name
    vault.reindex(embed=False)
    real = vault.alias_fixable()
    stale = (
        LinkProblem("a.md", 2, "[[Bob]]", "a line past the end", "[[Robert|Bob]]"),
        LinkProblem("b.md", 1, "[[Bob]]", "no fix", None),
        LinkProblem("c.md", 1, "[Bob](Bob.md)", "not a wikilink", "[[Robert|Bob]]"),
        LinkProblem("c.md", 1, "[[Bob]] too", "more than one link", "[[Robert|Bob]]"),
    )
    monkeypatch.setattr(vault, "alias_fixable", lambda: (*stale, *real))
    plan = plan_alias_fixes(vault)
    assert [(f.path, f.fixes) for f in plan.files] == [("b.md", 1), ("c.md", 2)]
    assert plan.files[1].diff == (
        "--- a/c.md\n+++ b/c.md\n@@ -1 +1 @@\n"
        "-see [[Bob]] and [[bob]]\n+see [[Robert|Bob]] and [[Robert|bob]]\n"
    )
    monkeypatch.undo()
    result = apply_alias_fixes(vault, plan)
    assert (result.fixed, result.written, result.refused) == (3, ("b.md", "c.md"), ())


def test_apply_alias_fixes_waits_as_long_as_asked_and_says_why_a_note_was_refused(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(
        {"a.md": "[[Bob]]\n", "b.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"}
    )
    vault.reindex(embed=False)
    plan = plan_alias_fixes(vault)
    waits: list[float] = []
    apply = vault.apply

    def spy(change: Change, *, wait: float = -1.0) -> Applied:
        waits.append(wait)
        return apply(change, wait=wait)

    monkeypatch.setattr(vault, "apply", spy)
    (vault.root / "b.md").write_text("[[Bob]] changed meanwhile\n", encoding="utf-8")
    result = apply_alias_fixes(vault, plan, wait=7.5)
    assert waits == [7.5, 7.5]
    assert result.written == ("a.md",)
    ((path, reason, changed),) = [(r.path, r.reason, r.changed) for r in result.refused]
    assert (path, changed) == ("b.md", True) and "b.md" in reason and "changed" in reason
    waits.clear()
    vault.reindex(embed=False)
    assert apply_alias_fixes(vault, plan_alias_fixes(vault)).written == ("b.md",)
    assert waits == [60.0]
