"""The preview pane: the highlighted hit's section rendered as markdown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label, Static

from vaultmem.tui.widgets.markdown_text import display_markdown
from vaultmem.tui.widgets.markdown_view import rendered

MAX_LINES = 60  # a preview, not the note: the rest is one Enter away


def section_lines(text: str, first_line: int, start: int, end: int) -> str:
    """Lines start..end (1-based, inclusive) of a note whose `text` begins at `first_line`."""
    lines = text.splitlines()
    lo = max(0, start - first_line)
    last = min(len(lines), end - first_line + 1)
    hi = min(last, lo + MAX_LINES)
    cut = "\n\n…" if hi < last else ""
    return "\n".join(lines[lo:hi]) + cut


class Preview(VerticalScroll):
    """A title line and a Markdown body; `show` replaces both, `show_text` shows plain text."""

    DEFAULT_CSS = """
    Preview { height: 1fr; }
    Preview > #preview-title { width: 1fr; }
    Preview > #preview-body { width: 1fr; }
    """
    can_focus = False
    source = ""  # the markdown shown, if any

    def compose(self) -> ComposeResult:
        yield Label(id="preview-title")
        yield Static(id="preview-body")

    def show(self, title: str, text: str) -> None:
        self.source = display_markdown(text)
        self.query_one("#preview-title", Label).update(title)
        self.query_one("#preview-body", Static).update(rendered(self.source))
        self.scroll_home(animate=False)

    def show_text(self, title: str, text: Text | str) -> None:
        """Text without markdown rendering: cheap, for messages and the welcome."""
        self.source = ""
        self.query_one("#preview-title", Label).update(title)
        self.query_one("#preview-body", Static).update(text)
        self.scroll_home(animate=False)

    def clear(self, message: str = "") -> None:
        self.show_text(message, "")
