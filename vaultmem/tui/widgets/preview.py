"""The preview pane: the highlighted hit's section rendered as markdown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
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

    def _parts(self) -> tuple[Label, RenderedView] | None:
        """The title and the body, or None while the preview is taken down (the app closing):
        a search's late answer then has nowhere to go and is dropped."""
        try:
            return self.query_one("#preview-title", Label), self.query_one(RenderedView)
        except NoMatches:
            return None

    def show(self, title: str, text: str) -> None:
        parts = self._parts()
        if parts is not None:
            parts[0].update(title, layout=False)
            parts[1].show_markdown(display_markdown(text))

    def show_text(self, title: str, text: Text | str) -> None:
        """Text without markdown rendering: cheap, for messages and the welcome."""
        parts = self._parts()
        if parts is not None:
            parts[0].update(title, layout=False)
            parts[1].show(text)

    def clear(self, message: str = "") -> None:
        self.show_text(message, "")
