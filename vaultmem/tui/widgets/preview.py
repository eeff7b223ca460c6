"""The preview pane: the highlighted hit's section rendered as markdown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

from vaultmem.tui.widgets.markdown_text import display_markdown
from vaultmem.tui.widgets.rendered_view import RenderedView

MAX_LINES = 60  # a preview, not the note: the rest is one Enter away


def section_lines(text: str, first_line: int, start: int, end: int, body_line: int = 1) -> str:
    """Lines start..end (1-based, inclusive, never before `body_line`, where the front matter
    ends) of a note whose `text` begins at `first_line`, split as the index counts lines."""
    lines = text.split("\n")
    lo = max(0, max(start, body_line) - first_line)
    last = min(len(lines), end - first_line + 1)
    hi = min(last, lo + MAX_LINES)
    cut = "\n\n…" if hi < last else ""
    return "\n".join(lines[lo:hi]) + cut


class Preview(Vertical):
    """A title line and the rendered section; `show` replaces both, `show_text` shows plain text.

    The body is a fixed-size `RenderedView`: a new preview repaints the pane without laying out
    the search screen again (which would redo the hit list's and every pane's sizes).
    """

    DEFAULT_CSS = """
    Preview { height: 1fr; }
    Preview > #preview-title { width: 1fr; height: 1; }
    Preview > #preview-body { width: 1fr; height: 1fr; }
    """
    can_focus = False

    def compose(self) -> ComposeResult:
        yield Label(id="preview-title")
        body = RenderedView(id="preview-body")
        body.can_focus = False
        yield body

    @property
    def source(self) -> str:
        """The markdown shown, if any."""
        return self.query_one(RenderedView).source

    def show(self, title: str, text: str) -> None:
        self.query_one("#preview-title", Label).update(title, layout=False)
        self.query_one(RenderedView).show_markdown(display_markdown(text))

    def show_text(self, title: str, text: Text | str) -> None:
        """Text without markdown rendering: cheap, for messages and the welcome."""
        self.query_one("#preview-title", Label).update(title, layout=False)
        self.query_one(RenderedView).show(text)

    def clear(self, message: str = "") -> None:
        self.show_text(message, "")
