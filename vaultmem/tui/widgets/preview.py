"""The preview pane: the highlighted hit's section rendered as markdown."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label, Markdown

from vaultmem.tui.widgets.markdown_text import display_markdown

MAX_LINES = 150  # a preview, not the note: long sections are cut so rendering stays instant


def section_lines(text: str, first_line: int, start: int, end: int) -> str:
    """Lines start..end (1-based, inclusive) of a note whose `text` begins at `first_line`."""
    lines = text.splitlines()
    lo = max(0, start - first_line)
    last = min(len(lines), end - first_line + 1)
    hi = min(last, lo + MAX_LINES)
    cut = "\n\n…" if hi < last else ""
    return "\n".join(lines[lo:hi]) + cut


class Preview(VerticalScroll):
    """A title line and a Markdown body; `show` replaces both."""

    DEFAULT_CSS = """
    Preview { height: 1fr; }
    Preview > #preview-title { width: 1fr; }
    """
    can_focus = False

    def compose(self) -> ComposeResult:
        yield Label(id="preview-title")
        yield Markdown(id="preview-body")

    def show(self, title: str, text: str) -> None:
        self.query_one("#preview-title", Label).update(title)
        self.query_one("#preview-body", Markdown).update(display_markdown(text))
        self.scroll_home(animate=False)

    def clear(self, message: str = "") -> None:
        self.query_one("#preview-title", Label).update(message)
        self.query_one("#preview-body", Markdown).update("")
