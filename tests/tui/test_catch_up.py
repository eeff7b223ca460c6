"""Clicking a wikilink in a note's text, and the gaps/path screens catching up after a reindex."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Offset

from tests.tui.conftest import settle
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.gaps import GapsScreen
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.path import PathScreen
from vaultmem.tui.widgets.note_picker import NotePicker
from vaultmem.tui.widgets.rendered_view import RenderedView
from vaultmem.vault import Vault

pytestmark = pytest.mark.asyncio

COP = "work/Heat pump COP math.md"
NEW = "work/Brand new orphan.md"


def link_offset(view: RenderedView, href_prefix: str) -> tuple[Offset, str]:
    """Where (relative to the view) the first link whose href starts with `href_prefix` is."""
    for y, line in enumerate(view._lines):
        x = 0
        for segment in line:
            style = segment.style
            if style is not None and style.link and style.link.startswith(href_prefix):
                inner = view.content_region.offset - view.region.offset
                return Offset(inner.x + x, inner.y + y), style.link
            x += segment.cell_length
    raise AssertionError(f"no link starting with {href_prefix!r} in the rendered note")


async def test_clicking_a_wikilink_in_the_text_opens_that_note(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        view = screen.query_one(RenderedView)
        offset, href = link_offset(view, "note:")
        assert "Tariff" in href
        assert await pilot.click(view, offset=offset)
        await settle(pilot)
        assert screen.path == "work/projects/Tariff Optimizer.md"
        await pilot.press("left_square_bracket")  # and the history has it
        await settle(pilot)
        assert screen.path == COP


async def test_clicking_plain_text_follows_nothing(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_note(COP)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NoteScreen)
        view = screen.query_one(RenderedView)
        await pilot.click(view, offset=(view.content_region.x - view.region.x, 0))  # a heading
        await settle(pilot)
        assert screen.path == COP


async def test_gaps_and_path_screens_catch_up_with_a_reindex_made_elsewhere(
    vault_dir: Path,
) -> None:
    app = VaultmemApp(Vault(vault_dir), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f4")  # the gaps screen computes its report …
        await settle(pilot)
        gaps = app.screen
        assert isinstance(gaps, GapsScreen) and gaps.report is not None
        assert NEW not in gaps.report.orphans
        await pilot.press("f5")  # … the path screen loads the names …
        await settle(pilot)
        path = app.screen
        assert isinstance(path, PathScreen)
        picker = path.query_one("#from", NotePicker)
        assert picker.index is not None
        assert all("Brand new orphan" not in m.name for m in picker.index.search("brand new"))

        await pilot.press("f2")  # … then, from the search screen, a new note is indexed
        await settle(pilot)
        (vault_dir / NEW).write_text("# Brand new orphan\n\nNothing links here.\n")
        app.reindex()
        await settle(pilot)
        generation = app.index_generation

        await pilot.press("f4")
        await settle(pilot)
        assert app.screen is gaps and gaps.generation == generation
        assert gaps.report is not None and NEW in gaps.report.orphans
        await pilot.press("f5")
        await settle(pilot)
        assert app.screen is path and path.generation == generation
        found = picker.index.search("brand new")
        assert any("Brand new orphan" in m.name for m in found)
