"""Command palette providers: every key-bound action of the app and screen, and every note."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.app import SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from vaultmem.tui.fuzzy import Entry, NameIndex

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp

NOTE_HITS = 20


def screen_commands(screen: Screen[object]) -> Iterable[SystemCommand]:
    """A command for each described binding of `screen`, so new screens list themselves."""
    seen: set[str] = set()
    for binding in type(screen).BINDINGS:
        if not isinstance(binding, Binding) or not binding.description:
            continue
        if binding.action.startswith("app."):
            continue  # a letter for one of the app's commands, which the palette lists already
        if binding.description in seen:
            continue
        seen.add(binding.description)
        keys = binding.key.replace("_", " ").split(",")[0]
        yield SystemCommand(
            binding.description,
            f"{binding.description} ({keys})",
            partial(screen.run_action, binding.action),
        )


class ActionsProvider(Provider):
    """The app's commands (`App.get_system_commands`), offered in the order the app gives them:
    Textual's own provider sorts them by name, which put Full reindex before Search."""

    async def discover(self) -> Hits:
        for name, help_text, callback, discover in self.app.get_system_commands(self.screen):
            if discover:
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)


class NotesProvider(Provider):
    """'Open a note': every note by title, alias or path, fuzzy-matched."""

    async def startup(self) -> None:
        app = cast("VaultmemApp", self.app)
        self.names: NameIndex | None = None
        if app.index_ok:
            self.names = await asyncio.to_thread(app.note_index)

    async def search(self, query: str) -> Hits:
        if self.names is None:
            return
        app = cast("VaultmemApp", self.app)
        for match in self.names.search(query, NOTE_HITS):
            score = min(1.0, max(0.1, match.score / (len(query) * 40 + 100)))
            yield Hit(
                score,
                f"Open {match.name}",
                partial(app.open_note, match.key),
                help=match.key,
            )

    async def discover(self) -> Hits:
        yield DiscoveryHit("Open a note…", lambda: None, help="type part of its title or alias")


def note_entries(notes: Iterable[tuple[str, str, tuple[str, ...]]]) -> NameIndex:
    """A fuzzy index over (path, title, aliases) rows: title first, then aliases, then path."""
    return NameIndex(
        Entry(path, (title, *aliases, path.removesuffix(".md"))) for path, title, aliases in notes
    )
