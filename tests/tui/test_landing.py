"""A search hit opens at its section with its words highlighted; `/` finds in the note; `e`
opens the editor at the hit's line (issue 13 §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import settle, type_text, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.note import Landing, NoteScreen, editor_command
from vaultmem.tui.widgets.rendered_view import MARK_STYLE, RenderedView

pytestmark = pytest.mark.asyncio

MEETINGS = "work/Meeting notes.md"


def marked_words(view: RenderedView) -> list[str]:
    """The highlighted spans of the rendered lines."""
    return [
        seg.text
        for strip in view._lines
        for seg in strip
        if seg.style is not None and seg.style.reverse and seg.style.bold
    ]


def visible(view: RenderedView) -> str:
    """The lines on screen (the last section cannot reach the top: the view stops at the end)."""
    top = view.scroll_offset.y
    return "\n".join(s.text for s in view._lines[top : top + view.size.height])


async def test_a_hit_lands_on_its_section_with_its_words_marked(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 16)) as pilot:
        app.open_note(MEETINGS, Landing(35, "2026-11-02", ("rollback", "gateways")))
        await settle(pilot)
        view = app.screen.query_one(RenderedView)
        await wait_until(pilot, lambda: view.scroll_offset.y > 0, "the view scrolls down")
        assert "2026-11-02" in visible(view) and "2026-11-23" not in visible(view)
        assert {w.lower() for w in marked_words(view)} == {"rollback", "gateways"}
        assert MARK_STYLE == "bold reverse"


async def test_opening_from_the_search_box_lands_and_marks(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 16)) as pilot:
        await type_text(pilot, "kill switch per household")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen) and screen.path == MEETINGS
        assert screen.landing is not None and screen.landing.heading == "2026-11-16"
        view = screen.query_one(RenderedView)
        await wait_until(pilot, lambda: view.scroll_offset.y > 0, "the view scrolls down")
        assert visible(view).lstrip().startswith("2026-11-16")  # its heading at the top
        assert "household" in [w.lower() for w in marked_words(view)]


async def test_slash_finds_in_the_note_and_escape_leaves_the_find_box(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 16)) as pilot:
        app.open_note(MEETINGS)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        view = screen.query_one(RenderedView)
        assert view.scroll_offset.y == 0 and marked_words(view) == []
        await pilot.press("slash")
        await type_text(pilot, "priya")  # letters go to the box, not to the screen's keys
        await pilot.press("enter")
        await settle(pilot)
        assert [w.lower() for w in marked_words(view)].count("priya") >= 2
        first = view.scroll_offset.y
        await pilot.press("enter")  # the next match
        await settle(pilot)
        assert view.scroll_offset.y != first
        await pilot.press("escape")  # closes the find box, not the note
        await settle(pilot)
        assert app.screen is screen and not screen.query_one("#find").has_class("-shown")
        await pilot.press("slash")
        await type_text(pilot, "zebra crossing")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("not in this note" in str(n.message) for n in app._notifications),
            "a find with no match says so",
        )


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_editor_command_takes_the_line_where_the_editor_does() -> None:
    f = Path("/v/a note.md")
    assert editor_command(f, {"EDITOR": "vim"}, 29) == ["vim", "+29", "/v/a note.md"]
    assert editor_command(f, {"EDITOR": "/usr/bin/nano -w"}, 3) == [
        "/usr/bin/nano",
        "-w",
        "+3",
        "/v/a note.md",
    ]
    assert editor_command(f, {"VISUAL": "code --wait"}, 29) == ["code", "--wait", "/v/a note.md"]
    assert editor_command(f, {}, None) == ["vi", "/v/a note.md"]


async def test_the_note_screen_lists_related_notes_with_why(app: VaultmemApp) -> None:
    from vaultmem.tui.widgets.link_panel import LinkPanel, PanelEntry

    async with app.run_test(size=(120, 40)) as pilot:
        app.open_note("Maya Chen.md")
        await settle(pilot)
        panel = app.screen.query_one(LinkPanel)

        def rows() -> list[str]:
            return [str(panel.get_option_at_index(i).prompt) for i in range(panel.option_count)]

        await wait_until(pilot, lambda: any(r.startswith("Related (") for r in rows()), rows)
        at = next(i for i, r in enumerate(rows()) if r.startswith("Related ("))
        first = rows()[at + 1]
        assert first.startswith("≈ ") and "\n  " in first  # a title, then why
        expected = app.vault.related("Maya Chen.md", 8)
        assert PanelEntry("note", expected[0].path) in panel.entries
        assert expected[0].reasons[0].detail in first
