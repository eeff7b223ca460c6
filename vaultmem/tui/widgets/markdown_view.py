"""Markdown shown through Rich's renderer: one widget per chunk, appended a chunk per frame.

Textual's Markdown widget mounts a widget per block and lays each out (about 5 ms a line on a
14k-page vault's long notes); Rich renders the same markdown to text in about 0.15 ms a line.
Links show as terminal hyperlinks; in-vault links are followed from the note screen's side panel.
"""

from __future__ import annotations

import asyncio

from rich.markdown import Markdown
from textual.containers import Vertical
from textual.widgets import Static

from vaultmem.tui.widgets.markdown_text import chunks

FIRST_LINES = 30  # about a screenful: rendered before the first paint
MORE_LINES = 120  # then the rest, a chunk per frame


def rendered(text: str) -> Markdown:
    return Markdown(text, code_theme="ansi_dark", hyperlinks=True)


class MarkdownView(Vertical):
    """`show(text)` puts the first screenful on at once and appends the rest after it paints."""

    DEFAULT_CSS = """
    MarkdownView { height: auto; }
    MarkdownView > Static { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = ""  # the markdown shown (all of it, once appended)
        self._more: list[str] = []
        self._token = object()

    async def show(self, text: str) -> None:
        """Replace the content; returns once the first chunk is mounted."""
        self.source = text
        parts = chunks(text, FIRST_LINES, MORE_LINES)
        token = self._token = object()  # a newer `show` stops this one's appending
        self._more = parts[1:]
        with self.app.batch_update():
            await self.remove_children()
            await self.mount(Static(rendered(parts[0])))
        if self._more:
            self.call_after_refresh(lambda: self.run_worker(self._append(token), group="md"))

    async def _append(self, token: object) -> None:
        while self._more and token is self._token:
            await self.mount(Static(rendered(self._more.pop(0))))
            await asyncio.sleep(0)  # keys and repaints go through between chunks

    @property
    def complete(self) -> bool:
        """Every chunk is mounted."""
        return not self._more
