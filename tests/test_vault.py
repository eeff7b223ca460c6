"""The `Vault` façade: its services keep their caches per instance, and its API stays whole."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vaultmem import vault as vault_module
from vaultmem.gaps import gaps_report
from vaultmem.persona import list_personas, load_persona
from vaultmem.vault import Vault

from .conftest import SAMPLE_VAULT, MakeVault


def test_two_vaults_in_one_process_keep_their_own_graphs(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    one = make_vault({"a.md": "[[b]]\n", "b.md": "x\n"})
    one.reindex()
    other = Vault(SAMPLE_VAULT, tmp_path / "sample.db")
    other.reindex()
    g1 = one.graph()
    g2 = other.graph()
    # a module-wide cache held one vault's graph at a time: asking the other rebuilt it
    assert one.graph() is g1 and other.graph() is g2
    assert set(g1.nodes) == {"a.md", "b.md"}


def test_the_graph_is_rebuilt_when_the_index_changes(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "[[b]]\n", "b.md": "x\n"})
    vault.reindex()
    before = vault.graph()
    assert vault.graph() is before  # same generation: cached
    (vault.root / "c.md").write_text("[[a]]\n", encoding="utf-8")
    vault.reindex()
    after = vault.graph()
    assert after is not before and after.has_edge("c.md", "a.md")


def test_the_result_types_are_still_importable_from_vault() -> None:
    names = [
        "Backlink",
        "DoctorReport",
        "FolderCount",
        "HeadingInfo",
        "Hit",
        "LinkProblem",
        "NoteInfo",
        "NoteSummary",
        "NoteText",
        "OutLink",
        "SearchResult",
        "Stats",
        "TagCount",
        "TaskInfo",
    ]
    for name in names:
        value = getattr(vault_module, name)
        assert dataclasses.is_dataclass(value), name
        assert value.__dataclass_params__.frozen, name  # type: ignore[attr-defined]


def test_personas_and_gaps_answer_through_the_facade(sample_vault: Vault) -> None:
    assert sample_vault.personas() == list_personas(sample_vault)
    slug = sample_vault.personas()[0].slug
    assert sample_vault.find_persona(slug).slug == slug
    loaded = sample_vault.load_persona(slug, 2000).to_markdown()
    assert loaded == load_persona(sample_vault, slug, 2000).to_markdown()
    assert sample_vault.gaps().totals() == gaps_report(sample_vault).totals()
