"""The note screen through Pilot: links, backlinks, history, a deleted note, broken front matter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import Label

from tests.tui.conftest import settle, type_text, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.widgets.link_panel import LinkPanel, PanelEntry
from vaultmem.tui.widgets.rendered_view import RenderedView
from vaultmem.vault import Vault

pytestmark = pytest.mark.asyncio

COP = "work/Heat pump COP math.md"


def panel_rows(app: VaultmemApp) -> list[str]:
    panel = app.screen.query_one(LinkPanel)
    return [str(panel.get_option_at_index(i).prompt) for i in range(panel.option_count)]


def body(app: VaultmemApp) -> str:
    return app.screen.query_one(RenderedView).source


async def test_note_shows_markdown_links_backlinks_and_tags(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        assert "estimates the cost of a heating" in body(app)
        assert not body(app).startswith("---")  # front matter is not shown as text
        rows = panel_rows(app)
        assert rows[0] == "Links (2)"
        assert "→ Tariff Optimizer" in rows
        backlink = next(r for r in rows if r.startswith("← Tariff Optimizer"))
        assert "Cost estimates use the formulas in" in backlink  # the sentence around the link
        assert {"#math", "#heat-pump", "#optimizer"} <= set(rows)
        title = str(screen.query_one("#note-title", Label).content)
        assert "Heat pump COP math" in title and "2026-06-18" in title


async def test_following_links_and_history(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        first_link = screen.query_one(LinkPanel).entries[0]
        assert first_link == PanelEntry("note", "work/projects/Tariff Optimizer.md")
        await pilot.press("l", "enter")  # links panel, first link
        await settle(pilot)
        assert screen.path == "work/projects/Tariff Optimizer.md"
        assert "Tariff Optimizer" in str(screen.query_one("#note-title", Label).content)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.path == COP and "estimates the cost of a heating" in body(app)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.path == "work/projects/Tariff Optimizer.md"
        await pilot.press("alt+left")
        await settle(pilot)
        assert screen.path == COP
        # following a new link drops the forward history, as a browser does
        await pilot.press("l", "down", "enter")
        await settle(pilot)
        assert screen.path == "work/Architecture Decisions.md"
        assert screen.history == [COP, "work/Architecture Decisions.md"]
        await pilot.press("escape")
        assert isinstance(app.screen, SearchScreen)


async def test_wanted_links_are_marked_and_say_so(vault_dir: Path) -> None:
    (vault_dir / "work" / "Wishlist.md").write_text(
        "We should write [[Nonexistent Design Doc]] and see [[Heatwise]].\n", encoding="utf-8"
    )
    vault = Vault(vault_dir)
    vault.reindex()
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note("work/Wishlist.md")
        await settle(pilot)
        rows = panel_rows(app)
        assert "? Nonexistent Design Doc  (wanted)" in rows
        assert "→ Heatwise" in rows
        await pilot.press("l", "enter")  # the wanted link: nothing to open, a message instead
        await settle(pilot)
        assert app.screen.path == "work/Wishlist.md"
        assert any("wanted note" in str(n.message) for n in app._notifications)


async def test_a_tag_in_the_panel_searches_that_tag(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        panel = app.screen.query_one(LinkPanel)
        panel.focus()
        panel.highlighted = next(
            i
            for i in range(panel.option_count)
            if str(panel.get_option_at_index(i).prompt) == "#math"
        )
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.request().tag == "math"


async def test_note_deleted_while_shown(app: VaultmemApp, vault_dir: Path) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note("personal/recipes/Miso Soup.md")
        await settle(pilot)
        (vault_dir / "personal/recipes/Miso Soup.md").unlink()
        await pilot.press("ctrl+r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen) and screen.gone
        assert "is gone" in str(screen.query_one("#note-title", Label).content)
        assert "no longer in the vault" in body(app)
        await pilot.press("e", "o")  # nothing to edit or open: no crash
        await pilot.press("escape")
        assert isinstance(app.screen, SearchScreen)


async def test_note_deleted_before_the_index_knows(app: VaultmemApp, vault_dir: Path) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        (vault_dir / "personal/recipes/Miso Soup.md").unlink()
        app.open_note("personal/recipes/Miso Soup.md")
        await settle(pilot)
        assert app.screen.gone
        assert "reindex" in body(app)


async def test_broken_front_matter_note_opens(vault_dir: Path) -> None:
    (vault_dir / "Broken.md").write_text(
        "---\ntags: [unclosed\ntitle: : :\n---\nThe quokka paragraph survives.\n",
        encoding="utf-8",
    )
    vault = Vault(vault_dir)
    vault.reindex()
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "quokka")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.path == "Broken.md"
        assert "The quokka paragraph survives." in body(app)
        assert any(row.startswith("⚠") for row in panel_rows(app))  # the parse warning


async def test_obsidian_and_editor_keys(
    app: VaultmemApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opener = tmp_path / "bin" / "xdg-open"  # a system that opens obsidian:// links
    opener.parent.mkdir()
    opener.write_text("#!/bin/sh\nexit 0\n")
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{opener.parent}:{os.environ['PATH']}")
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        await pilot.press("o")
        url = "obsidian://open?vault=sample-vault&file=work%2FHeat%20pump%20COP%20math"
        await wait_until(
            pilot,
            lambda: url in [str(n.message) for n in app._notifications],
            "the Obsidian link is shown",
        )
        await pilot.press("e")  # the test driver cannot hand the terminal over: says so
        await wait_until(
            pilot,
            lambda: any("editor" in str(n.message) for n in app._notifications),
            "the editor notice is shown",
        )


OBSIDIAN_SYNTAX = (
    "# Reading notes\n\n"
    "A paragraph someone links to. ^b15695\n\n"
    "> [!tip]- Keep the kettle warm\n"
    "> Preheat the pot, then pour.\n\n"
    "Write `[[Not a link]]` to show the syntax; [[Miso Soup]] is a link.\n"
)


async def test_callouts_block_ids_and_inline_code_read_as_in_obsidian(vault_dir: Path) -> None:
    (vault_dir / "Reading notes.md").write_text(OBSIDIAN_SYNTAX, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.reindex(embed=False)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note("Reading notes.md")
        await wait_until(pilot, lambda: app.screen.query(RenderedView), "the note screen shows")
        view = app.screen.query_one(RenderedView)
        await wait_until(pilot, lambda: "Miso Soup" in view.text(), "the note renders")
        lines = view.text().split("\n")
        box = [line for line in lines if "Keep the kettle warm" in line]
        assert box and box[0].lstrip().startswith("╭─ Keep the kettle warm")
        assert any(line.lstrip().startswith("│ Preheat the pot") for line in lines)
        assert "[!tip]" not in view.text() and "^b15695" not in view.text()
        assert "[[Not a link]]" in view.text()  # inline code stays as written
        assert "note:Not" not in view.source and "(note:Miso%20Soup)" in view.source
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        await wait_until(pilot, lambda: screen.info is not None, "its links are read")
