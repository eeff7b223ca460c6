"""The screen for a vault without a usable index: says why and builds it with a progress bar."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Button, Label, Static

from vaultmem.errors import SchemaMismatch, VaultmemError
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.reindex_bar import ReindexBar

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp


class NoIndexScreen(Screen[None]):
    """Shown instead of the search screen until the index exists (or has this schema)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,b", "build", "Build the index"),
        Binding("escape,q", "app.quit", "Quit"),
    ]

    def __init__(self, problem: VaultmemError) -> None:
        super().__init__()
        self.problem = problem
        self.full = isinstance(problem, SchemaMismatch)

    def compose(self) -> ComposeResult:
        vault = cast("VaultmemApp", self.app).vault
        what = "rebuild the index from scratch" if self.full else "build the index"
        with Vertical(id="no-index"):
            yield Label(f"{vault.root.name}: no usable index", id="no-index-title")
            # paths inside the vault read shorter relative to it (".vaultmem/index.db")
            problem = str(self.problem).replace(str(vault.root) + os.sep, "")
            yield Static(problem, id="no-index-problem", markup=False)
            yield Static(
                f"Press Enter to {what} now (words, links and vectors; the notes are only "
                "read), or q to quit.",
                id="no-index-offer",
            )
            yield Button(what.capitalize(), id="build", variant="primary")
            yield ReindexBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#build", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_build()

    def action_build(self) -> None:
        button = self.query_one("#build", Button)
        if button.disabled:
            return
        button.disabled = True
        button.label = "Building…"
        cast("VaultmemApp", self.app).reindex(full=self.full)

    def failed(self) -> None:
        """The build did not finish: offer it again."""
        button = self.query_one("#build", Button)
        button.disabled = False
        button.label = "Try again"
