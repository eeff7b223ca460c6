"""A one-line bar with the screen's keys, written once: a cheap stand-in for Textual's Footer.

Textual's `Footer` recomposes a widget per key whenever the focus or the screen changes (two
recomposes and ~40 ms of layout on every note opened, on a 14k-note vault). The keys a screen
shows do not change while it lives, so this bar renders them once, as one line of text.
Every key, with the ones only some widgets have, is in the F1 panel and the command palette.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget

TAIL = (("f1", "Keys"), ("^p", "Commands"))


class KeyBar(Widget):
    """The visible bindings of its screen and the app; F1 and the command palette at the right."""

    DEFAULT_CSS = """
    KeyBar { height: 1; width: 1fr; background: $panel; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[tuple[str, str]] = []

    def on_mount(self) -> None:
        self._keys = self.keys()

    def keys(self) -> list[tuple[str, str]]:
        keys: list[tuple[str, str]] = []
        seen: set[str] = set()
        for binding in [
            *Binding.make_bindings(self.screen.BINDINGS),
            *Binding.make_bindings(self.app.BINDINGS),
        ]:
            if not binding.show or binding.action in seen or binding.action == "help":
                continue
            seen.add(binding.action)
            keys.append((self.app.get_key_display(binding), binding.description))
        return keys

    def render(self) -> Text:
        """The screen's keys, cut to fit before the tail, which always shows."""
        tail = _line(TAIL)
        width = self.size.width
        keys = _line(self._keys)
        keys.truncate(max(0, width - tail.cell_len), overflow="ellipsis", pad=True)
        return Text.assemble(keys, tail)


def _line(keys: Iterable[tuple[str, str]]) -> Text:
    text = Text(no_wrap=True)
    for key, description in keys:
        text.append(f" {key} ", style="bold")
        text.append(f"{description} ")
    return text
