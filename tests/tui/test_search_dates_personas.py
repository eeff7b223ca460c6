"""The search screen's since filter goes by the notes' dates, as `search --since` does (an
undated note is never "since" anything, however new its file), and persona notes stay out of
its hits, as they do in `vaultmem search` without `--personas`."""

from __future__ import annotations

import datetime as dt

import pytest
from textual.widgets import Input

from tests.tui.conftest import settle, type_text
from vaultmem.dates import note_day
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.widgets.hit_list import HitList

pytestmark = pytest.mark.asyncio


def hit_paths(app: VaultmemApp) -> list[str]:
    return [h.path for h in app.screen.query_one(HitList).hits]


async def test_the_since_filter_leaves_undated_notes_out(app: VaultmemApp) -> None:
    undated = "personal/books/The Overstory.md"
    assert app.vault.show(undated).date is None  # and its file is as new as the copy
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "overstory")
        await settle(pilot)
        assert undated in hit_paths(app)
        await pilot.press("ctrl+f")
        app.screen.query_one("#since", Input).value = "2026-01-01"
        await settle(pilot)
        assert undated not in hit_paths(app)
        assert hit_paths(app)
        for path in hit_paths(app):
            day = note_day(path, app.vault.show(path).date)
            assert day is not None and day >= dt.date(2026, 1, 1), path


async def test_persona_notes_stay_out_of_the_hits(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "calm practical coach")
        await settle(pilot)
        assert hit_paths(app)
        assert not [p for p in hit_paths(app) if p.startswith("personas/")]


async def test_a_preview_arriving_as_the_app_closes_is_dropped(app: VaultmemApp) -> None:
    """The preview is read on a worker; its answer can come back after the app began closing
    and removed the preview's widgets (seen once in the suite under load: NoMatches)."""
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "sourdough")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        hit = screen.query_one(HitList).current
        assert hit is not None
        await screen.query_one("#preview-title").remove()  # as closing the app does
        screen.show_preview(hit, "late title", "late text")  # no NoMatches
