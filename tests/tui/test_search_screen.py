"""The search screen through Pilot: typing, stale results, mode, filters, opening a hit."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Label

from tests.tui.conftest import settle, type_text
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.screens.search import SearchRequest, SearchScreen
from vaultmem.tui.widgets.hit_list import HitList
from vaultmem.tui.widgets.preview import Preview

pytestmark = pytest.mark.asyncio


def hit_paths(app: VaultmemApp) -> list[str]:
    return [h.path for h in app.screen.query_one(HitList).hits]


def status(app: VaultmemApp) -> str:
    return str(app.screen.query_one("#status", Label).content)


async def test_typing_shows_hits_and_the_preview(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert hit_paths(app) == []
        await type_text(pilot, "sourdough")
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/recipes/Sourdough Loaf.md"
        assert status(app).startswith(f"{len(hit_paths(app))} note")
        preview = app.screen.query_one(Preview)
        assert "Sourdough Loaf" in str(preview.query_one("#preview-title", Label).content)
        assert "feed the starter" in preview.source  # the hit's section, as markdown


async def test_each_keystroke_searches_again(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "miso")
        await settle(pilot)
        first = hit_paths(app)
        assert first[0] == "personal/recipes/Miso Soup.md"
        await pilot.press(*["backspace"] * 4)
        await type_text(pilot, "kyoto")
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/travel/Kyoto Itinerary.md"
        assert hit_paths(app) != first


async def test_a_stale_result_is_dropped(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "kyoto")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        shown = hit_paths(app)
        old = app.vault.search("sourdough", limit=5)
        screen.show_result(SearchRequest("sourdough", "hybrid", None, None, None), old, {}, 1.0)
        await pilot.pause()
        assert hit_paths(app) == shown  # the inputs say "kyoto": the sourdough answer is stale


async def test_fast_typing_ends_with_the_last_query_results(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        # no waiting between keys: earlier searches finish late and must not win
        await type_text(pilot, "heat pump")
        await pilot.press(*["backspace"] * 9)
        await type_text(pilot, "shakshuka")
        await settle(pilot)
        assert hit_paths(app)[0] == "personal/recipes/Shakshuka.md"
        assert app.screen.last_result.query == "shakshuka"


async def test_mode_toggle_cycles_and_searches_in_that_mode(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "tariff")
        await settle(pilot)
        assert app.screen.last_result.mode == "hybrid"
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert str(app.screen.query_one("#mode", Label).content) == "keyword"
        assert app.screen.last_result.mode == "keyword"
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.screen.last_result.mode == "semantic"
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.screen.last_result.mode == "hybrid"


async def test_filters_narrow_by_tag_folder_and_date(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "gateway")
        await settle(pilot)
        everywhere = hit_paths(app)
        assert any(not p.startswith("episodes/") for p in everywhere)
        await pilot.press("ctrl+f")  # shows the filters, focus on the tag field
        await type_text(pilot, "incident")
        await settle(pilot)
        tagged = hit_paths(app)
        assert tagged and tagged != everywhere
        for path in tagged:
            assert "incident" in app.vault.show(path).tags
        app.screen.query_one("#tag", Input).value = ""
        app.screen.query_one("#folder", Input).value = "episodes"
        await settle(pilot)
        assert hit_paths(app) and all(p.startswith("episodes/") for p in hit_paths(app))
        app.screen.query_one("#since", Input).value = "2026-11-20"
        await settle(pilot)
        dated = hit_paths(app)
        assert dated and len(dated) < len(hit_paths_before := everywhere)
        for path in dated:
            assert (
                path.startswith("episodes/") and (app.vault.show(path).date or "") >= "2026-11-20"
            )
        assert hit_paths_before


async def test_a_bad_since_date_says_how_to_write_it(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "gateway")
        await settle(pilot)
        await pilot.press("ctrl+f", "tab", "tab")
        assert app.focused is app.screen.query_one("#since", Input)
        await type_text(pilot, "someday")
        await settle(pilot)
        assert "YYYY-MM-DD" in status(app) and "last week" in status(app)
        assert app.screen.query_one("#status").has_class("-error")


async def test_since_takes_words_as_the_cli_does(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "gateway")
        await settle(pilot)
        await pilot.press("ctrl+f", "tab", "tab")
        await type_text(pilot, "last week")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        request = screen.request()
        assert not isinstance(request, str) and request.since is not None
        assert not screen.query_one("#status").has_class("-error")


async def test_enter_opens_the_highlighted_hit(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "shakshuka")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen)
        assert app.screen.path == "personal/recipes/Shakshuka.md"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_one("#query", Input).value == "shakshuka"


async def test_down_then_enter_opens_the_second_hit(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "recipe")
        await settle(pilot)
        second = hit_paths(app)[1]
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen)
        assert app.screen.path == second


async def test_searching_for_nothing(app: VaultmemApp) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "   ")
        await settle(pilot)
        assert hit_paths(app) == [] and "type to search" in status(app)
        await pilot.press("enter")  # nothing to open: stays put
        assert isinstance(app.screen, SearchScreen)
        await type_text(pilot, "*")
        await settle(pilot)
        assert hit_paths(app) == [] and status(app).startswith("0 notes")
        await pilot.press(*["backspace"] * 4, "ctrl+t")  # keywords: meaning always finds some
        await type_text(pilot, "xylophonequartz")
        await settle(pilot)
        assert hit_paths(app) == []
        title = app.screen.query_one(Preview).query_one("#preview-title", Label)
        assert "no matches for 'xylophonequartz'" in str(title.content)


async def test_semantic_search_without_vectors_explains_itself(unindexed_dir) -> None:  # type: ignore[no-untyped-def]
    from vaultmem.vault import Vault

    vault = Vault(unindexed_dir)
    vault.reindex(embed=False)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "tariff")
        await settle(pilot)
        assert hit_paths(app)  # hybrid falls back to keywords
        await pilot.press("ctrl+t", "ctrl+t")  # semantic: no fallback, the core says why
        await settle(pilot)
        assert app.screen.query_one("#status").has_class("-error")
        assert "reindex" in status(app)
