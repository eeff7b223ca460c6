"""The keys as a newcomer meets them: typing lands in the search box, no letter leaves a screen
or quits where text might be typed, escape comes back to the search box, F1 and the palette
speak vaultmem, every screen works at 40×12, `o` says when nothing opened the link, and the
status line tells the index's state."""

from __future__ import annotations

import datetime as dt
import stat
import string
import sys
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Tree

from tests.tui.conftest import settle, type_text, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.browse import BrowseScreen
from vaultmem.tui.screens.gaps import GapsScreen
from vaultmem.tui.screens.keys import KeysScreen
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.path import PathScreen
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.widgets.hit_list import HitList
from vaultmem.tui.widgets.index_status import IndexState, IndexStatus
from vaultmem.tui.widgets.link_panel import LinkPanel
from vaultmem.tui.widgets.rendered_view import RenderedView

pytestmark = pytest.mark.asyncio

SHAKSHUKA = "personal/recipes/Shakshuka.md"
TEXTUAL_DEVELOPER_WORDS = ("Scroll Left", "Scroll Home", "Screenshot", "Maximize", "Minimize")


def query(app: VaultmemApp) -> Input:
    return app.screen.query_one("#query", Input)


def selected(field: Input) -> str:
    start, end = sorted(field.selection)
    return field.value[start:end]


async def open_from_the_hits(pilot: Pilot[None], app: VaultmemApp, words: str) -> None:
    """Search, move into the hits (focus on the list), open the first hit."""
    await type_text(pilot, words)
    await wait_until(pilot, lambda: bool(app.screen.query_one(HitList).hits), "hits show")
    await pilot.press("down")
    await wait_until(pilot, lambda: isinstance(app.focused, HitList), "the hits have the focus")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
    await settle(pilot)


# --------------------------------------------------------------------------- typing


@pytest.mark.parametrize("words", ["templates", "zebra crossing", "quick switcher"])
async def test_typing_after_escape_from_a_note_lands_in_the_search_box(
    app: VaultmemApp, words: str
) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await open_from_the_hits(pilot, app, "shakshuka")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "back to search")
        await wait_until(
            pilot,
            lambda: app.focused is query(app) and selected(query(app)) == "shakshuka",
            lambda: f"the search box, query selected (focus {app.focused}, {query(app).selection})",
        )
        await type_text(pilot, words)  # replaces the selected query
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen) and app.is_running
        assert query(app).value == words


async def test_every_letter_typed_in_the_hits_goes_to_the_query(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "heat")
        await wait_until(pilot, lambda: bool(app.screen.query_one(HitList).hits), "hits show")
        await pilot.press("down")
        await wait_until(pilot, lambda: isinstance(app.focused, HitList), "the hits have focus")
        typed = string.ascii_lowercase + string.digits + "?/ -"
        await type_text(pilot, typed)
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen) and app.is_running
        assert query(app).value == "heat" + typed  # added at the end, in order, none lost


async def test_no_app_wide_single_letter(app: VaultmemApp) -> None:
    letters = [
        key
        for binding in Binding.make_bindings(VaultmemApp.BINDINGS)
        for key in binding.key.split(",")
        if len(key) == 1 or key in ("question_mark", "slash")
    ]
    assert letters == ["question_mark"]  # F1's other key; `?` typed in a text field is text
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "q?")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen) and query(app).value == "q?"


async def test_escape_selects_the_query_from_the_hits(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "miso soup")
        await wait_until(pilot, lambda: bool(app.screen.query_one(HitList).hits), "hits show")
        await pilot.press("down", "escape")
        await wait_until(pilot, lambda: selected(query(app)) == "miso soup", "query selected")
        assert app.focused is query(app)
        await pilot.press("down")  # and ↓ goes back to the hits, where the cursor was
        await wait_until(pilot, lambda: isinstance(app.focused, HitList), "back in the hits")


# --------------------------------------------------------------------------- leaving, quitting


async def test_q_closes_a_note_and_letters_switch_only_where_nothing_is_typed(
    app: VaultmemApp,
) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(SHAKSHUKA)
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
        await pilot.press("q")  # closes the note (like escape), never the app
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "note closed")
        assert app.is_running
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, BrowseScreen), "browse")
        await pilot.press("g")  # nothing is typed on browse: letters switch screens there
        await wait_until(pilot, lambda: isinstance(app.screen, GapsScreen), "gaps")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "escape: search")
        await wait_until(pilot, lambda: app.focused is query(app), "the search box")
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, PathScreen), "path")
        await type_text(pilot, "gbsq")  # typed into the picker: no screen changes
        await settle(pilot)
        assert isinstance(app.screen, PathScreen) and app.is_running
        await pilot.press("escape", "escape")  # the matches close, then back to search
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "escape: search")


async def test_q_quits_where_nothing_is_typed(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, BrowseScreen), "browse")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, "the app quits")


async def test_ctrl_q_quits_from_the_search_box(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "miso")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, "the app quits")


# --------------------------------------------------------------------------- F1, the palette


async def test_f1_lists_vaultmems_keys_for_the_screen(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 40)) as pilot:
        app.open_note(SHAKSHUKA)
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, KeysScreen), "the keys show")
        keys = app.screen
        assert isinstance(keys, KeysScreen)
        assert [title for title, _ in keys.sections] == [
            "On the note screen",
            "Everywhere",
            "Moving around",
        ]
        shown = "\n".join(f"{key} {what}" for _, rows in keys.sections for key, what in rows)
        assert "o Obsidian" in shown and "esc q Close" in shown and "f3 Browse" in shown
        for words in ("Obsidian", "Edit", "Links", "Back", "Close", "Reindex", "Browse", "Quit"):
            assert words in shown, words
        for words in TEXTUAL_DEVELOPER_WORDS:
            assert words not in shown, words
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the keys close")


async def test_the_palette_offers_vaultmems_actions_first(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(
            pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette opens"
        )
        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count >= 10, "the palette lists commands")
        await settle(pilot)
        names = [
            str(getattr(commands.get_option_at_index(i).prompt, "plain", "")).split("\n")[0]
            for i in range(commands.option_count)
        ]
        listed = " ".join(names)
        for words in TEXTUAL_DEVELOPER_WORDS:
            assert words not in listed, (words, names)
        textual = [names.index(n) for n in names if n.startswith(("Theme", "Quit"))]
        ours = [names.index(n) for n in names if n.startswith(("Search", "Browse", "Reindex"))]
        assert len(textual) == 2 and len(ours) >= 3
        assert max(ours) < min(textual), names


# --------------------------------------------------------------------------- 40×12


async def test_every_screen_is_usable_at_40x12(app: VaultmemApp) -> None:
    async with app.run_test(size=(40, 12)) as pilot:
        await type_text(pilot, "heat pump")
        await wait_until(pilot, lambda: bool(app.screen.query_one(HitList).hits), "hits show")
        assert app.screen.query_one(HitList).region.height >= 3
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
        note = app.screen
        view = note.query_one(RenderedView)
        await wait_until(pilot, lambda: view.display and view.text().strip(), "its text shows")
        assert view.region.width >= 30 and view.region.height >= 6
        assert not note.query_one(LinkPanel).display  # one pane at a time: the text
        await pilot.press("l")
        await wait_until(pilot, lambda: note.query_one(LinkPanel).display, "the links show")
        assert not view.display
        first = note.path
        await pilot.press("enter")  # follow the first link …
        await wait_until(pilot, lambda: note.path != first, "the linked note opens")
        # … and the note that opens shows its text, not the links panel it was opened from
        await wait_until(pilot, lambda: view.display and view.text().strip(), "its text shows")
        assert not note.query_one(LinkPanel).display
        for key, screen_type, widget in (
            ("f3", BrowseScreen, Tree),
            ("f4", GapsScreen, DataTable),
            ("f5", PathScreen, Input),
        ):
            await pilot.press(key)
            await wait_until(pilot, lambda t=screen_type: isinstance(app.screen, t), key)
            await settle(pilot)
            shown = [w for w in app.screen.query(widget) if w.display and w.region.height > 0]
            assert shown, f"{screen_type.__name__} shows no {widget.__name__} at 40x12"
            assert all(w.region.right <= 40 for w in shown)


# --------------------------------------------------------------------------- opening outside


def fake_opener(folder: Path, exit_code: int) -> None:
    folder.mkdir(exist_ok=True)
    script = folder / "xdg-open"
    script.write_text(f'#!/bin/sh\necho "$1" >> {folder}/opened\nexit {exit_code}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.skipif(sys.platform != "linux", reason="xdg-open is the opener on Linux only")
@pytest.mark.parametrize(
    ("opener", "title", "says"),
    [
        (None, "nothing opened it in Obsidian", "no program opens links here"),
        (3, "nothing opened it in Obsidian", "nothing here opens obsidian: links"),
        (0, "opening in Obsidian", "obsidian://open?vault=sample-vault&file="),
    ],
)
async def test_o_says_when_nothing_opened_the_note(
    app: VaultmemApp,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opener: int | None,
    title: str,
    says: str,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if opener is not None:
        fake_opener(bin_dir, opener)
    monkeypatch.setenv("PATH", str(bin_dir))
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(SHAKSHUKA)
        await wait_until(pilot, lambda: isinstance(app.screen, NoteScreen), "the note opens")
        await pilot.press("o")
        await wait_until(
            pilot,
            lambda: any(n.title == title and says in n.message for n in app._notifications),
            lambda: f"notice {title!r}: {[(n.title, n.message) for n in app._notifications]}",
        )
    if opener is not None:
        opened = (bin_dir / "opened").read_text().strip()
        assert opened.startswith("obsidian://open?vault=sample-vault&file=personal%2Frecipes")


# --------------------------------------------------------------------------- the status line


async def test_index_state_in_words() -> None:
    import datetime as dt

    now = dt.datetime(2026, 11, 30, 15, 0)
    at = dt.datetime(2026, 11, 30, 10, 41).timestamp()
    assert IndexState().describe(now) == "index: reading…"
    assert IndexState(1, at).describe(now) == "index: 1 note · updated 10:41"
    earlier = dt.datetime(2026, 11, 2, 9, 0).timestamp()
    assert IndexState(14076, earlier).describe(now) == "index: 14,076 notes · updated Nov 02"
    assert IndexState(3, at, pending=True).describe(now).endswith("· changes pending")
    assert IndexState(3, at, True, True).describe(now).endswith("· reindexing…")
    assert IndexState(3, at).describe(now, times=False) == "index: 3 notes"


async def test_the_status_line_shows_the_index(app: VaultmemApp, vault_dir: Path) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        status = app.screen.query_one(IndexStatus)
        notes = len(app.vault.note_names())

        def shown() -> str:
            return str(status.render())

        await wait_until(pilot, lambda: f"index: {notes} notes · updated" in shown(), shown)
        app.post_message(VaultmemApp.FilesChanged(frozenset({"x.md"})))  # as the watcher does
        await wait_until(pilot, lambda: "changes pending" in shown(), shown)
        (vault_dir / "Brand new.md").write_text("# Brand new\n", encoding="utf-8")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "reindexing…" in shown() or app.reindexing is False, shown)
        await wait_until(pilot, lambda: f"index: {notes + 1} notes · updated" in shown(), shown)
        assert "pending" not in shown() and "reindexing" not in shown()


async def test_the_status_line_says_when_notes_were_skipped(
    app: VaultmemApp, vault_dir: Path
) -> None:
    """Issue 15: a note that cannot be read or parsed is reported by doctor, the TUI and
    MCP; the app said nothing of the notes it could not show."""
    now = dt.datetime(2026, 11, 30, 15, 0)
    assert IndexState(3, None, skipped=2, warned=1).describe(now) == (
        "index: 3 notes · 2 skipped, 1 with warnings (vaultmem doctor)"
    )
    (vault_dir / "binary.md").write_bytes(b"\x00\x01" * 50)
    (vault_dir / "broken.md").write_text("---\ndate: 2026-02-30\n---\nbody\n", encoding="utf-8")
    async with app.run_test(size=(100, 30)) as pilot:
        status = app.screen.query_one(IndexStatus)

        def shown() -> str:
            return str(status.render())

        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "1 skipped, 1 with warnings" in shown(), shown)
