"""How the screens look: SVG snapshots on a copy of sample-vault (fake embedder, no blinking).

Update after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the SVGs in tests/tui/__snapshots__/ before committing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.conftest import settle, type_text
from tests.tui.test_note_screen import OBSIDIAN_SYNTAX
from vaultmem.embed_upgrade import Report, Status
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.search import PREVIEW_AFTER, SearchScreen
from vaultmem.tui.widgets.index_status import IndexStatus
from vaultmem.vault import Vault

Snap = Callable[..., bool]


@pytest.fixture(autouse=True)
def steady(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SearchScreen, "show_timings", False)  # timings differ run to run
    monkeypatch.setattr(IndexStatus, "show_times", False)  # so does the last reindex's time


def still(then: Callable[[Pilot[None]], Awaitable[None]] | None = None) -> Any:
    """A run_before that does `then`, waits for every worker and stops cursors blinking."""

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        if then is not None:
            await then(pilot)
            await settle(pilot)
        await pilot.pause(PREVIEW_AFTER + 0.1)  # the preview waits for the cursor to rest
        await settle(pilot)
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    return run_before


def typed(text: str, *keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def go(pilot: Pilot[None]) -> None:
        await type_text(pilot, text)
        await settle(pilot)
        if keys:
            await pilot.press(*keys)

    return go


def pressed(*keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def go(pilot: Pilot[None]) -> None:
        await pilot.press(*keys)

    return go


class TestSearchScreen:
    def test_empty(self, snap_compare: Snap, app: VaultmemApp) -> None:
        assert snap_compare(app, terminal_size=(100, 30), run_before=still())

    def test_hits_and_preview(self, snap_compare: Snap, app: VaultmemApp) -> None:
        assert snap_compare(app, terminal_size=(100, 30), run_before=still(typed("heat pump")))

    def test_80x24_keyword_mode_with_filters(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = typed("gateway", "ctrl+t", "ctrl+f", *"incident")
        assert snap_compare(app, terminal_size=(80, 24), run_before=still(go))

    def test_meaning_upgrade_in_the_status_line(self, snap_compare: Snap, app: VaultmemApp) -> None:
        """The background move to MiniLM at the end of the status line (a report fed by
        hand: the sample vault has nothing to upgrade)."""

        async def go(pilot: Pilot[None]) -> None:
            await typed("heat pump")(pilot)
            app.upgrade_view.follow(Report(Status("pending", "", 2_000, 840)))  # start: said
            app.follow_upgrade(Report(Status("pending", "", 2_000, 1_130)))

        assert snap_compare(app, terminal_size=(100, 30), run_before=still(go))

    def test_40x12(self, snap_compare: Snap, app: VaultmemApp) -> None:
        assert snap_compare(app, terminal_size=(40, 12), run_before=still(typed("miso")))

    def test_no_color(
        self, snap_compare: Snap, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("NO_COLOR", "1")
        app = VaultmemApp(Vault(vault_dir), live=False)
        assert snap_compare(app, terminal_size=(80, 24), run_before=still(typed("sourdough")))


class TestNoteScreen:
    def test_note_with_links_and_backlinks(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = typed("heat pump cop", "enter")
        assert snap_compare(app, terminal_size=(100, 30), run_before=still(go))

    def test_links_pane_at_40x12(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = typed("heat pump cop", "enter", "l")
        assert snap_compare(app, terminal_size=(40, 12), run_before=still(go))

    def test_note_at_40x12_shows_its_text(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = typed("heat pump cop", "enter")
        assert snap_compare(app, terminal_size=(40, 12), run_before=still(go))

    def test_callouts_block_ids_and_inline_code(self, snap_compare: Snap, vault_dir: Path) -> None:
        (vault_dir / "Reading notes.md").write_text(OBSIDIAN_SYNTAX, encoding="utf-8")
        vault = Vault(vault_dir)
        vault.reindex(embed=False)
        app = VaultmemApp(vault, live=False)

        async def go(pilot: Pilot[None]) -> None:
            app.open_note("Reading notes.md")

        assert snap_compare(app, terminal_size=(80, 24), run_before=still(go))

    def test_deleted_note(self, snap_compare: Snap, app: VaultmemApp, vault_dir: Path) -> None:
        async def go(pilot: Pilot[None]) -> None:
            (vault_dir / "personal/recipes/Miso Soup.md").unlink()
            app.open_note("personal/recipes/Miso Soup.md")

        assert snap_compare(app, terminal_size=(80, 24), run_before=still(go))


class TestKeysScreen:
    def test_keys_of_the_note_screen(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = typed("heat pump cop", "enter", "f1")
        assert snap_compare(app, terminal_size=(80, 30), run_before=still(go))

    def test_keys_at_40x12(self, snap_compare: Snap, app: VaultmemApp) -> None:
        assert snap_compare(app, terminal_size=(40, 12), run_before=still(pressed("f1")))


class TestBrowseScreen:
    def test_folders(self, snap_compare: Snap, app: VaultmemApp) -> None:
        assert snap_compare(app, terminal_size=(80, 24), run_before=still(pressed("f3")))

    def test_tags(self, snap_compare: Snap, app: VaultmemApp) -> None:
        go = pressed("f3", "2", "down", "down", "down", "down", "down", "down", "space")
        assert snap_compare(app, terminal_size=(80, 24), run_before=still(go))


class TestNoIndexScreen:
    def test_no_index(self, snap_compare: Snap, unindexed_dir: Path) -> None:
        app = VaultmemApp(Vault(unindexed_dir), live=False)
        assert snap_compare(app, terminal_size=(80, 24), run_before=still())


class TestReviewScreen:
    """A capture of the sample vault's Maya (fixed transcript and time: the same ids)."""

    @pytest.fixture
    def review_app(self, vault_dir: Path) -> VaultmemApp:
        from tests.tui.test_review_screen import captured

        return VaultmemApp(captured(vault_dir), live=False)

    def test_80x24(self, snap_compare: Snap, review_app: VaultmemApp) -> None:
        assert snap_compare(review_app, terminal_size=(80, 24), run_before=still(pressed("f6")))

    def test_40x12(self, snap_compare: Snap, review_app: VaultmemApp) -> None:
        assert snap_compare(review_app, terminal_size=(40, 12), run_before=still(pressed("f6")))
