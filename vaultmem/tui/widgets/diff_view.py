"""A modal that shows a unified diff, coloured by line, and asks to apply it (True) or not."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static


def diff_text(diff: str) -> Text:
    """The diff as styled text. The +/- signs stay, so it reads the same with NO_COLOR."""
    text = Text(no_wrap=True, end="")
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


class DiffView(ModalScreen[bool]):
    """Shows what a change would write; `y` or Enter applies it, `n` or Escape leaves it."""

    DEFAULT_CSS = """
    DiffView {
        align: center middle;
    }
    DiffView > #diff-dialog {
        width: 100%;
        max-width: 110;
        height: 100%;
        max-height: 40;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    DiffView #diff-title {
        text-style: bold;
        width: 100%;
    }
    DiffView #diff-body {
        height: 1fr;
    }
    DiffView #diff-text {
        width: auto;  /* long lines scroll sideways (←→) instead of wrapping */
    }
    DiffView #diff-keys {
        width: 100%;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "confirm", "Apply"),
        Binding("n,escape", "cancel", "Cancel"),
    ]

    def __init__(self, diff: str, title: str, action: str = "apply") -> None:
        super().__init__()
        self.diff = diff
        self.heading = title
        self.action_word = action

    def compose(self) -> ComposeResult:
        with Vertical(id="diff-dialog"):
            yield Label(self.heading, id="diff-title")
            with ScrollableContainer(id="diff-body"):
                yield Static(diff_text(self.diff), id="diff-text")
            keys = f"y/enter: {self.action_word} · n/esc: cancel · ↑↓←→ scroll"
            yield Label(keys, id="diff-keys")

    def on_mount(self) -> None:
        # The scroll area takes the keys, so arrows and PgUp/PgDn move through a long diff.
        self.query_one("#diff-body", ScrollableContainer).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
