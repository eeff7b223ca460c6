"""A table of one-line text rows that renders only the rows on screen (the review queue's list).

Textual's DataTable measures and renders every cell of every row as the rows arrive: 500
captured items cost ~150 ms of CPU before the first paint, and the same again on each reload.
Here the column widths come from `cell_len` over plain strings (a few ms for 500 rows) and
`render_line` draws only the visible lines, so a queue of 500 opens about as fast as one of 20.
Keyboard: up, down, page up, page down, home, end; left and right scroll a wide table; a click
moves the cursor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

GAP = 2  # cells between columns
MAX_WIDTH = 100  # a column never grows wider: a long episode summary ends in "…"


def fit(text: str, width: int) -> str:
    """`text` padded or cut (with "…") to exactly `width` cells."""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, max(width - 1, 0)) + "…" if width else ""


class RowTable(ScrollView, can_focus=True):
    """Rows of text cells under a header line; the cursor highlights one row."""

    DEFAULT_CSS = """
    RowTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        &:focus {
            background-tint: $foreground 5%;
            & > .row-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        &:dark > .row-table--even-row {
            background: $surface-darken-1 40%;
        }
        & > .row-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        & > .row-table--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .row-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row-table--header",
        "row-table--even-row",
        "row-table--cursor",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class RowHighlighted(Message):
        """The cursor moved to another row (or the rows changed under it)."""

        def __init__(self, table: RowTable, cursor_row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = cursor_row

        @property
        def control(self) -> RowTable:
            return self.table

    def __init__(self, columns: Sequence[str] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: tuple[str, ...] = tuple(columns)
        self.rows: list[tuple[str, ...]] = []
        self.widths: list[int] = [cell_len(c) for c in self.columns]

    # ---- content

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def get_row_at(self, index: int) -> tuple[str, ...]:
        return self.rows[index]

    def set_columns(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        self.set_rows(())

    def set_rows(self, rows: Iterable[Sequence[str]]) -> None:
        """Replace every row; the cursor stays on its index (within the new rows)."""
        n = len(self.columns)
        self.rows = [tuple((*row, *("",) * n)[:n]) for row in rows]
        widths = [cell_len(c) for c in self.columns]
        for row in self.rows:
            for i, cell in enumerate(row):
                w = cell_len(cell)
                if w > widths[i]:
                    widths[i] = w
        self.widths = [min(w, MAX_WIDTH) for w in widths]
        width = sum(self.widths) + GAP * max(len(self.widths) - 1, 0) + 1
        self.virtual_size = Size(width, len(self.rows) + 1)
        self.cursor_row = min(self.cursor_row, max(len(self.rows) - 1, 0))
        self.refresh()

    def move_cursor(self, *, row: int) -> None:
        self.cursor_row = max(0, min(row, len(self.rows) - 1))

    # ---- drawing

    def _line_text(self, cells: Sequence[str]) -> str:
        gap = " " * GAP
        return " " + gap.join(fit(c, w) for c, w in zip(cells, self.widths, strict=False))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("row-table--header")
            text = self._line_text(self.columns)
        else:
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(width, base)
            style = base
            if index == self.cursor_row:
                style += self.get_component_rich_style("row-table--cursor")
            elif index % 2:
                style += self.get_component_rich_style("row-table--even-row")
            text = self._line_text(self.rows[index])
        text = set_cell_size(text, max(cell_len(text), scroll_x + width))
        strip = Strip([Segment(text, style)]).crop(scroll_x, scroll_x + width)
        return strip.simplify() if isinstance(style, Style) else strip

    # ---- the cursor

    def watch_cursor_row(self, row: int) -> None:
        self._keep_in_view(row)
        self.refresh()
        self.post_message(self.RowHighlighted(self, row))

    def _keep_in_view(self, row: int) -> None:
        shown = max(self.scrollable_content_region.height - 1, 1)  # under the header
        top = round(self.scroll_y)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + shown:
            self.scroll_to(y=row - shown + 1, animate=False, immediate=True)

    def _page(self) -> int:
        return max(self.scrollable_content_region.height - 2, 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(row=self.cursor_row - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(row=self.cursor_row + self._page())

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(row=round(self.scroll_y) + event.y - 1)
