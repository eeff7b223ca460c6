"""A real, properties-centric vault (kepano/kepano-obsidian, MIT): most of its links live in YAML.

The vault (../shared/data/vaults/kepano-obsidian/vault) is read-only: it is indexed into an
index under a temporary folder. Every expected value here was checked by reading the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.vault import Vault


@pytest.fixture(scope="module")
def vault(kepano_vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    v = Vault(kepano_vault, tmp_path_factory.mktemp("kepano") / "i.db")
    v.reindex()
    yield v
    v.close()


def _links(vault: Vault, path: str) -> list[tuple[int, str, str, str | None]]:
    """(line, relation, target, resolved path) of a note's links, in order."""
    return [(lk.line, lk.relation, lk.target, lk.dst_path) for lk in vault.show(path).links]


def test_vault_is_left_untouched(kepano_vault: Path, vault: Vault) -> None:
    """The index lives outside the vault; nothing is written into it."""
    assert not (kepano_vault / ".vaultmem").exists()
    assert kepano_vault not in vault.index_path.parents


def test_file_counts(vault: Vault) -> None:
    """103 notes; 32 other files (30 `.base`, 1 `.jpg`, LICENSE); `.obsidian/` left out."""
    kinds = dict(vault.conn.execute("SELECT kind, count(*) FROM notes GROUP BY kind").fetchall())
    assert kinds == {"note": 103, "attachment": 32}
    bases = vault.conn.execute("SELECT count(*) FROM notes WHERE path LIKE '%.base'").fetchone()
    assert bases == (30,)


def test_link_counts(vault: Vault) -> None:
    """134 wikilinks in front matter, 14 in bodies, 61 embeds (SOURCE.txt, recounted by grep)."""
    rows = vault.conn.execute(
        "SELECT kind, embed, count(*) FROM links GROUP BY kind, embed ORDER BY kind, embed"
    ).fetchall()
    assert rows == [("property", 0, 134), ("wiki", 0, 14), ("wiki", 1, 61)]


def test_property_links_are_typed_and_resolved(vault: Vault) -> None:
    """`categories: ["[[Recipes]]"]` is a link row whose relation is the property name."""
    assert _links(vault, "References/Brown butter nectarine tart.md") == [
        (3, "categories", "Recipes", "Categories/Recipes.md"),
        (4, "categories", "Clippings", "Categories/Clippings.md"),
        (6, "cuisine", "American", None),  # no American note: a wanted note
        (8, "type", "Dessert", None),
        (10, "ingredients", "Nectarine", None),
        (12, "author", "Steph Ango", "References/Steph Ango.md"),
    ]
    kinds = {lk.kind for lk in vault.show("References/Brown butter nectarine tart.md").links}
    assert kinds == {"property"}


def test_property_relation_is_a_front_matter_key(vault: Vault) -> None:
    """Every property link's relation names a property of its note; none is `links_to`."""
    rows = vault.conn.execute(
        "SELECT n.path, l.relation, n.frontmatter FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE l.kind = 'property'"
    ).fetchall()
    assert len(rows) == 134
    assert [(p, r) for p, r, fm in rows if r not in json.loads(fm) or r == "links_to"] == []


def test_backlinks_through_properties(vault: Vault) -> None:
    """Recipes is a category of one recipe and of the recipe template; six notes cite Steph Ango."""
    recipes = [(b.src_path, b.line, b.relation) for b in vault.backlinks("Categories/Recipes.md")]
    assert recipes == [
        ("References/Brown butter nectarine tart.md", 3, "categories"),
        ("Templates/Recipe Template.md", 3, "categories"),
    ]
    steph = [(b.src_path, b.line, b.relation) for b in vault.backlinks("References/Steph Ango.md")]
    assert steph == [
        ("Clippings/Buy wisely.md", 6, "author"),
        ("Clippings/In good hands.md", 6, "author"),
        ("Notes/2023-09-12 Meeting with Steph.md", 11, "people"),
        ("Notes/Evergreen notes turn ideas into objects that you can manipulate.md", 8, "author"),
        ("References/Brown butter nectarine tart.md", 12, "author"),
        ("References/Well Made.md", 5, "host"),
    ]


def test_body_and_property_links_together(vault: Vault) -> None:
    """The meeting note: typed property links and plain body links to the same kind of notes."""
    assert _links(vault, "Notes/2023-09-12 Meeting with Steph.md") == [
        (3, "categories", "Meetings", "Categories/Meetings.md"),
        (7, "org", "Obsidian", "References/Obsidian.md"),
        (11, "people", "Steph Ango", "References/Steph Ango.md"),
        (13, "topics", "Emergence", None),
        (15, "links_to", "Out of Control", "References/Out of Control.md"),
        (15, "links_to", "Emergence", None),
    ]


def test_base_embed_resolves_to_the_base_file(vault: Vault) -> None:
    """`![[Recipes.base]]` embeds Templates/Bases/Recipes.base."""
    assert _links(vault, "Categories/Recipes.md") == [
        (6, "embeds", "Recipes.base", "Templates/Bases/Recipes.base")
    ]
    assert vault.show("Categories/Recipes.md").tags == ("categories",)


def test_template_with_placeholder_keeps_its_other_properties(vault: Vault) -> None:
    """`created: {{date}}` is no YAML value; the template's other properties and links stay."""
    info = vault.show("Templates/Recipe Template.md")
    assert info.frontmatter["categories"] == ["[[Recipes]]"]
    assert "created" not in info.frontmatter
    assert any("'created'" in w and "'last'" in w for w in info.warnings)
    assert [(lk.relation, lk.dst_path) for lk in info.links] == [
        ("categories", "Categories/Recipes.md")
    ]
