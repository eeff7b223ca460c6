"""The app's stylesheet: a new screen parses only its own new CSS; a theme change still applies."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.css import stylesheet as textual_stylesheet

from tests.tui.conftest import settle, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.browse import BrowseScreen


@pytest.mark.asyncio
async def test_a_new_screen_parses_only_its_own_css(
    app: VaultmemApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[tuple[str, str]] = []
    real = textual_stylesheet.parse

    def counting(scope, css, read_from, **kw):  # type: ignore[no-untyped-def]
        parsed.append((str(read_from[0]), str(read_from[1])))
        return real(scope, css, read_from, **kw)

    monkeypatch.setattr(textual_stylesheet, "parse", counting)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert any(p.endswith("vaultmem.tcss") for p, _ in parsed)  # read once, at start
        parsed.clear()
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, BrowseScreen), "browse opens")
        await settle(pilot)
        # Textual reparses every source when a mode's screen first shows: none again here
        assert parsed and not any(p.endswith(("vaultmem.tcss", "app.py")) for p, _ in parsed)
        assert len(parsed) == len(set(parsed))


@pytest.mark.asyncio
async def test_a_theme_change_still_applies(vault_dir: Path) -> None:
    from vaultmem.vault import Vault

    app = VaultmemApp(Vault(vault_dir), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.theme = "textual-dark"
        await settle(pilot)
        dark = app.screen.styles.background
        app.theme = "textual-light"
        await settle(pilot)
        assert app.screen.styles.background != dark
        app.theme = "textual-dark"
        await settle(pilot)
        assert app.screen.styles.background == dark
