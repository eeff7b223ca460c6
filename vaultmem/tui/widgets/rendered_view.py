"""Markdown rendered once to lines of text, then only scrolled: no layout work per repaint.

A `Static` holding Rich markdown is measured again (the whole markdown rendered to count its
lines) on every layout pass of its screen, and Textual lays out the whole screen whenever a
widget's size or scroll extent changes: a keystroke's new hits re-rendered the preview's
markdown, and a note's code blocks were highlighted again for each chunk appended. This view
is a fixed-size scroll view (like Textual's `RichLog`): it renders the markdown to strips at its
width once, keeps them, and draws the visible ones. It renders again only when its width changes.

Long text comes in chunks: the first screenful is rendered at once, the rest on a worker thread
and appended when ready, so a long note shows in the time of a short one. Clicking a link posts
`LinkClicked` with its href (the note screen follows in-vault links).
"""

from __future__ import annotations

import re

from rich import box
from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.segment import Segment
from rich.text import Text
from textual import events, work
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from vaultmem.tui.widgets.markdown_text import Callout, callouts, chunks

FIRST_LINES = 30  # about a screenful of markdown: rendered before the first paint
MORE_LINES = 200  # then the rest, rendered off the UI thread
MARK_STYLE = "bold reverse"  # the words a search matched, or a find inside the note


def marks_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """The words to mark, each where a word starts ("run" marks "running"), any case."""
    kept = sorted({w for w in words if w.strip()}, key=len, reverse=True)
    if not kept:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in kept) + ")", re.IGNORECASE)


# A callout's colour by its kind, as Obsidian groups the kinds (anything else: note's).
CALLOUT_COLOURS = {
    **dict.fromkeys(("abstract", "summary", "tldr", "tip", "hint", "important"), "cyan"),
    **dict.fromkeys(("success", "check", "done"), "green"),
    **dict.fromkeys(("question", "help", "faq", "warning", "caution", "attention"), "yellow"),
    **dict.fromkeys(("failure", "fail", "missing", "danger", "error", "bug"), "red"),
    "example": "magenta",
    **dict.fromkeys(("quote", "cite"), "bright_black"),
}


def rendered(text: str) -> RenderableType:
    """Markdown for the terminal, with Obsidian's callouts drawn as titled boxes."""
    pieces: list[RenderableType] = []
    for piece in callouts(text):
        if isinstance(piece, Callout):
            if pieces:
                pieces.append(Text(""))
            pieces.append(callout_box(piece))
        elif piece.strip():
            if pieces:
                pieces.append(Text(""))
            pieces.append(Markdown(piece, code_theme="ansi_dark", hyperlinks=True))
    if len(pieces) == 1:
        return pieces[0]
    return Group(*pieces)


def callout_box(callout: Callout) -> Panel:
    """`> [!tip]- Title` as a box titled "Title" (folded callouts shown open: a terminal
    reader wants the text)."""
    colour = CALLOUT_COLOURS.get(callout.kind, "blue")
    body = rendered(callout.body) if callout.body.strip() else Text("")
    return Panel(
        body,
        title=Text(callout.title, style=f"bold {colour}"),
        title_align="left",
        border_style=colour,
        box=box.ROUNDED,
        padding=(0, 1),
    )


class RenderedView(ScrollView, can_focus=True):
    """`show_markdown(text)` or `show(renderable)`; scroll with the keys or the mouse."""

    DEFAULT_CSS = """
    RenderedView { height: 1fr; scrollbar-gutter: stable; }
    """

    class LinkClicked(Message):
        """A link in the text was clicked."""

        def __init__(self, view: RenderedView, href: str) -> None:
            super().__init__()
            self.view = view
            self.href = href

        @property
        def control(self) -> RenderedView:
            return self.view

    class Rendered(Message):
        """The text's first part is rendered (it waited for the view's width)."""

        def __init__(self, view: RenderedView) -> None:
            super().__init__()
            self.view = view

        @property
        def control(self) -> RenderedView:
            return self.view

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.source = ""  # the markdown shown, "" for plain text
        self._parts: list[RenderableType] = []
        self._lines: list[Strip] = []
        self._width = 0  # the width the lines were rendered at; 0: not yet
        self._token = object()  # a newer show() stops an older one's appending
        self._marks: re.Pattern[str] | None = None
        self._anchor: str | None = None  # a line to scroll to once rendered (text it holds)
        self.marked: list[int] = []  # the lines holding a mark, top to bottom

    @property
    def complete(self) -> bool:
        """Every part of the text is rendered."""
        return self._width > 0 and self._done == len(self._parts)

    _done = 0  # parts rendered into _lines

    @property
    def rendered_width(self) -> int:
        """The width the text is rendered at; 0 until the view's size is known."""
        return self._width

    # ---- content

    def show_markdown(
        self, text: str, marks: tuple[str, ...] = (), anchor: str | None = None
    ) -> None:
        """Show `text` as markdown: the first screenful now, the rest appended soon after.
        `marks`: words to highlight; `anchor`: scroll to the first line holding this text (a
        heading), else to the first marked line, once rendered."""
        self.source = text
        self._marks = marks_pattern(marks)
        self._anchor = anchor if anchor or not self._marks else ""
        self._set_parts([rendered(part) for part in chunks(text, FIRST_LINES, MORE_LINES)])

    def mark(self, words: tuple[str, ...]) -> None:
        """Highlight other words in the text shown (a find inside the note)."""
        self._marks = marks_pattern(words)
        if self._width:
            self._render_from(self._width)
            self.refresh()

    def next_mark(self, after: int) -> int | None:
        """The first marked line below line `after`, wrapping round to the top; None: none."""
        if not self.marked:
            return None
        later = [y for y in self.marked if y > after]
        return later[0] if later else self.marked[0]

    def show(self, renderable: RenderableType) -> None:
        """Show any Rich renderable (plain text, a message) at once."""
        self.source = ""
        self._set_parts([renderable])

    def _set_parts(self, parts: list[RenderableType]) -> None:
        self._token = object()
        self._parts = parts
        self._lines = []
        self.marked = []
        self._done = 0
        self.scroll_to(0, 0, animate=False, immediate=True)
        width = self._content_width()
        if width:
            self._render_from(width)
        else:
            self._width = 0  # rendered once the size is known (on_resize)
        self.refresh()

    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _render_from(self, width: int) -> None:
        """Render the first part now, the others on a worker thread."""
        self._width = width
        self._lines = self._strips(self._parts[0], width) if self._parts else []
        self.marked = []
        self._done = 1 if self._parts else 0
        self._update_extent()
        self._landed(0)
        if self._done < len(self._parts):
            self._render_rest(self._token, width, self._parts[1:])

    @work(thread=True, exclusive=True, group="render-rest")
    def _render_rest(self, token: object, width: int, parts: list[RenderableType]) -> None:
        strips: list[Strip] = []
        for part in parts:
            if token is not self._token:
                return
            strips.append(Strip.blank(0))  # the blank line between blocks cut apart
            strips.extend(self._strips(part, width))
        self.app.call_from_thread(self._append, token, width, strips)

    def _append(self, token: object, width: int, strips: list[Strip]) -> None:
        if token is not self._token or width != self._width:
            return
        start = len(self._lines)
        self._lines.extend(strips)
        self._done = len(self._parts)
        self._update_extent()
        self._landed(start)
        self.refresh()

    def _landed(self, start: int) -> None:
        """Note the marked lines from `start` on, and scroll to the anchor once it is there."""
        if self._marks is not None:
            self.marked += [
                y
                for y, line in enumerate(self._lines[start:], start)
                if self._marks.search(line.text)
            ]
        if self._anchor is None:
            return
        wanted = self._anchor.casefold()
        for y, line in enumerate(self._lines[start:], start):
            if (wanted and wanted in line.text.casefold()) or (not wanted and y in self.marked):
                self._anchor = None
                self.scroll_line(y)
                return

    def scroll_line(self, y: int) -> None:
        """Put line `y` near the top, once the new extent is laid out (it may be just set)."""
        self.call_after_refresh(self.scroll_to, 0, max(0, y - 1), animate=False, immediate=True)

    def _strips(self, renderable: RenderableType, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=width, height=None, highlight=False)
        lines = console.render_lines(renderable, options, pad=False, new_lines=False)
        marks = self._marks
        if marks is None:
            return [Strip(Segment.simplify(line)) for line in lines]
        out = []
        for line in lines:
            text = Text()
            for seg in line:
                if not seg.control:
                    text.append(seg.text, seg.style)
            if text.highlight_regex(marks, MARK_STYLE):
                line = list(text.render(console))
            out.append(Strip(Segment.simplify(line)))
        return out

    def _update_extent(self) -> None:
        size = Size(self._width, len(self._lines))
        if size == self.virtual_size:
            return
        height = self.scrollable_content_region.height
        if height and (self.virtual_size.height > height) == (size.height > height):
            # The scrollbar stays (or stays away): only its thumb changes, which needs no
            # layout pass of the whole screen (the reactive's default, 6-20 ms on MDN).
            self.set_reactive(RenderedView.virtual_size, size)
            self._scroll_update(size)
            self.refresh()
        else:
            self.virtual_size = size

    # ---- Textual

    def on_resize(self, event: events.Resize) -> None:
        width = self._content_width()
        if width and width != self._width:
            first = self._width == 0
            self._token = object()
            self._render_from(width)
            self.refresh()
            if first:
                self.post_message(self.Rendered(self))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self._content_width()
        style = self.rich_style
        index = scroll_y + y
        if index >= len(self._lines):
            return Strip.blank(width, style)
        line = self._lines[index].crop_extend(scroll_x, scroll_x + width, style)
        return line.apply_style(style)

    def on_click(self, event: events.Click) -> None:
        href = event.style.link
        if href:
            event.stop()
            self.post_message(self.LinkClicked(self, href))

    def text(self) -> str:
        """The rendered text (for tests and the tmux check)."""
        return "\n".join(line.text for line in self._lines)
