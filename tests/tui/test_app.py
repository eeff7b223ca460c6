"""The app as a whole: reindex while open, live refresh, no index, other schema, palette, sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean as sqlite3
from textual.widgets import Button, Input

from tests.tui.conftest import run_command, settle, type_text, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.browse import BrowseScreen
from vaultmem.tui.screens.keys import KeysScreen
from vaultmem.tui.screens.no_index import NoIndexScreen
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.widgets.hit_list import HitList
from vaultmem.tui.widgets.reindex_bar import ReindexBar, ReindexProgress
from vaultmem.vault import Vault

pytestmark = pytest.mark.asyncio

NEW_NOTE = "Zanzibar trip.md"
NEW_TEXT = "# Zanzibar trip\n\nSpice farms and the zanzibari dhow harbour.\n"


def hit_paths(app: VaultmemApp) -> list[str]:
    return [h.path for h in app.screen.query_one(HitList).hits]


async def test_reindex_while_open_changes_the_results(app: VaultmemApp, vault_dir: Path) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+t")  # keywords: the new word must come from the new note
        await type_text(pilot, "zanzibari")
        await settle(pilot)
        assert hit_paths(app) == []
        (vault_dir / NEW_NOTE).write_text(NEW_TEXT, encoding="utf-8")
        seen: list[ReindexProgress | None] = []
        app.screen.query_one(ReindexBar).watch(
            app, "reindex_progress", lambda p: seen.append(p), init=False
        )
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert hit_paths(app) == [NEW_NOTE]
        assert app.reindex_progress is None and not app.screen.query_one(ReindexBar).display
        assert any(p is not None for p in seen)  # the bar showed while it ran
        assert any("1 changed" in str(n.message) for n in app._notifications)


async def test_the_ui_answers_while_a_reindex_runs(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+r")  # a full pass over the vault in a worker thread …
        await type_text(pilot, "miso")  # … while the person keeps typing
        assert app.screen.query_one("#query", Input).value == "miso"
        await pilot.press("ctrl+r")  # a second request while one runs is refused politely
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/recipes/Miso Soup.md"


async def test_live_refresh_when_a_file_changes_on_disk(vault_dir: Path) -> None:
    app = VaultmemApp(Vault(vault_dir), live=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app.freshness is not None, "the watcher is created")
        assert app.freshness is not None  # started after the first paint
        await wait_until(pilot, app.freshness.ready.is_set, "the watcher runs")
        await pilot.press("ctrl+t")
        await type_text(pilot, "zanzibari")
        await settle(pilot)
        assert hit_paths(app) == []
        (vault_dir / NEW_NOTE).write_text(NEW_TEXT, encoding="utf-8")
        await wait_until(
            pilot, lambda: hit_paths(app) == [NEW_NOTE], "the new note is found", timeout=60
        )
    assert app.freshness._thread is None  # stopped on exit


async def test_no_index_screen_builds_the_index(unindexed_dir: Path) -> None:
    app = VaultmemApp(Vault(unindexed_dir), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoIndexScreen) and not screen.full
        assert "no index" in str(screen.problem)
        await pilot.press("f3")  # other screens wait for the index
        assert isinstance(app.screen, NoIndexScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.index_ok
        await type_text(pilot, "shakshuka")
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/recipes/Shakshuka.md"


async def test_other_schema_offers_the_full_reindex(vault_dir: Path) -> None:
    index = vault_dir / ".vaultmem" / "index.db"
    conn = sqlite3.connect(str(index))
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    app = VaultmemApp(Vault(vault_dir), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoIndexScreen) and screen.full
        assert "schema 1" in str(screen.problem)
        assert str(screen.query_one("#build", Button).label) == "Rebuild the index from scratch"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        await type_text(pilot, "kyoto")
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/travel/Kyoto Itinerary.md"


async def test_command_palette_lists_actions_and_notes(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(pilot, "browse", "Browse")
        await wait_until(pilot, lambda: isinstance(app.screen, BrowseScreen), "Browse opens")
        await run_command(pilot, "shakshuka", "Open Shakshuka")
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
        assert app.screen.path == "personal/recipes/Shakshuka.md"
        await run_command(pilot, "obsidian", "Obsidian")  # the note screen's keys are commands
        await wait_until(
            pilot,
            lambda: any("obsidian://open" in str(n.message) for n in app._notifications),
            "the Obsidian link is shown",
        )


async def test_help_shows_the_keys(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, KeysScreen), "the keys show")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "the keys hide")


async def test_small_terminal_40x12_without_a_crash(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.resize_terminal(40, 12)
        await type_text(pilot, "heat pump")
        await settle(pilot)
        assert app.screen.has_class("-narrow")
        assert not app.screen.query_one("#preview").display
        assert hit_paths(app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen)
        await pilot.press("l", "enter")  # the links pane shows when it has the focus
        await settle(pilot)
        assert app.screen.query_one("#note-body").display  # the followed note shows its text
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        await pilot.resize_terminal(120, 40)
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen.has_class("-wide")


async def test_every_screen_is_a_key_away(app: VaultmemApp) -> None:
    from vaultmem.tui.screens.gaps import GapsScreen
    from vaultmem.tui.screens.path import PathScreen

    async with app.run_test(size=(100, 30)) as pilot:
        for key, screen in (("f4", GapsScreen), ("f5", PathScreen), ("f3", BrowseScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen)
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("tab", "g")  # on the search screen, a letter goes to the search box
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_one("#query", Input).value == "g"
        await pilot.press("f3", "g")  # letters work where no text can be typed
        await settle(pilot)
        assert isinstance(app.screen, GapsScreen)
