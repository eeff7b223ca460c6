"""A one-line bar with the screen's keys, written once: a cheap stand-in for Textual's Footer.

Textual's `Footer` recomposes a widget per key whenever the focus or the screen changes (two
recomposes and ~40 ms of layout on every note opened, on a 14k-note vault). The keys a screen
shows do not change while it lives, so this bar renders them once, as one line of text.
Every key, with the ones only some widgets have, is in the F1 panel and the command palette.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

TAIL = (("f1", "Keys"), ("^p", "Commands"))


class KeyBar(Static):
    """The visible bindings of its screen and of the app, then F1 and the command palette."""

    DEFAULT_CSS = """
    KeyBar { height: 1; width: 1fr; background: $panel; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False)

    def on_mount(self) -> None:
        self.update(self.line(), layout=False)

    def line(self) -> Text:
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
        text = Text(no_wrap=True, overflow="ellipsis")
        for key, description in [*keys, *TAIL]:
            text.append(f" {key} ", style="bold")
            text.append(f"{description} ")
        return text
