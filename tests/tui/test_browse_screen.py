"""Browse through Pilot: the folder tree with counts, nested tags, recent notes."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList, Tree

from tests.tui.conftest import settle
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.browse import BrowseScreen
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.search import SearchScreen

pytestmark = pytest.mark.asyncio


def labels(node) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(child.label) for child in node.children]


async def test_folder_tree_counts_and_opening_a_note(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        tree = app.screen.query_one("#folder-tree", Tree)
        assert str(tree.root.label) == "sample-vault (43)"
        top = labels(tree.root)
        assert "personal/ (15)" in top and "work/ (16)" in top and "Maya Chen" in top
        assert app.focused is tree
        # walk to personal/ → recipes/ → Miso Soup with the keyboard
        personal = next(c for c in tree.root.children if str(c.label) == "personal/ (15)")
        tree.move_cursor(personal)
        await pilot.press("enter")  # expands the folder, children added on first expansion
        await settle(pilot)
        assert "recipes/ (4)" in labels(personal)
        recipes = next(c for c in personal.children if str(c.label) == "recipes/ (4)")
        tree.move_cursor(recipes)
        await pilot.press("enter")
        await settle(pilot)
        assert labels(recipes) == ["Miso Soup", "Shakshuka", "Sourdough Loaf", "Weekly Meal Plan"]
        tree.move_cursor(recipes.children[0])
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen)
        assert app.screen.path == "personal/recipes/Miso Soup.md"


async def test_searching_inside_a_folder(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await settle(pilot)
        tree = app.screen.query_one("#folder-tree", Tree)
        work = next(c for c in tree.root.children if str(c.label).startswith("work/"))
        tree.move_cursor(work)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.request().folder == "work"


async def test_nested_tags_with_counts_and_filtering_by_tag(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("2")
        tree = app.screen.query_one("#tag-tree", Tree)
        assert app.focused is tree
        project = next(c for c in tree.root.children if str(c.label) == "#project (4)")
        tree.move_cursor(project)
        await pilot.press("space")  # space expands; Enter filters
        await settle(pilot)
        assert labels(project) == ["#gateway (2)", "#optimizer (1)", "#portal (1)"]
        tree.move_cursor(project.children[0])
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.request().tag == "project/gateway"


async def test_recent_notes_open(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("3")
        recent = app.screen.query_one("#recent-list", OptionList)
        assert app.focused is recent and recent.option_count == 43
        newest = recent.get_option_at_index(0).id
        assert newest == app.vault.recent(1)[0].path
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen) and app.screen.path == newest
