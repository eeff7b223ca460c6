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
from vaultmem.edits import FileChanged
from vaultmem.gaps import (
    GAP_CLASSES,
    GapRow,
    apply_alias_fixes,
    gap_class,
    gap_counts,
    gap_rows,
    gaps_report,
    plan_alias_fixes,
)
from vaultmem.vault import Vault

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
    plans = plan_alias_fixes(vault)
    assert [p.path for p in plans] == ["log.md"]
    assert apply_alias_fixes(vault, plans) == 3
    text = (vault.root / "log.md").read_bytes().decode()
    assert text == (
        "---\r\ntitle: keep: this\r\n---\r\n"
        "Met [[Robert Smith|Bob]] and ![[Robert Smith#Plans|bob]] and [[Robert Smith|Robert]]"
        " today.\r\n`[[Bob]]` stays code.\r\n"
    )
    vault.reindex()
    assert vault.alias_fixable() == ()
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
    assert apply_alias_fixes(vault, plan_alias_fixes(vault)) == 1
    text = (vault.root / "log.md").read_text(encoding="utf-8")
    assert text == "`[[Bob]]` and \\[[Bob]] are text; [[Robert Smith|bob]] is a link.\n"


def test_alias_fix_refuses_a_file_changed_since_indexing(make_vault: MakeVault) -> None:
    vault = make_vault({"log.md": "[[Bob]]\n", "Robert.md": "---\naliases: [Bob]\n---\n"})
    vault.reindex()
    (vault.root / "log.md").write_text("[[Bob]]\nmy new line\n")
    with pytest.raises(FileChanged, match="run `vaultmem reindex`"):
        plan_alias_fixes(vault)
    vault.reindex()
    plans = plan_alias_fixes(vault)
    (vault.root / "log.md").write_text("[[Bob]]\nedited again while the diff was shown\n")
    with pytest.raises(FileChanged):
        apply_alias_fixes(vault, plans)
    assert (vault.root / "log.md").read_text().endswith("while the diff was shown\n")
    assert not [p for p in os.listdir(vault.root) if "vaultmem-tmp" in p]


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
