"""RowTable (the review queue's table): widths, the cursor kept in view, only visible rows drawn."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tests.tui.conftest import settle
from vaultmem.tui.widgets.row_table import MAX_WIDTH, RowTable, fit


class Table(App[None]):
    def __init__(self, rows: list[tuple[str, ...]]) -> None:
        super().__init__()
        self.rows = rows
        self.drawn: set[int] = set()
        self.highlighted: list[int] = []

    def compose(self) -> ComposeResult:
        yield RowTable(("id", "item"), id="t")

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
        real = table.render_line

        def counted(y: int):  # type: ignore[no-untyped-def]
            self.drawn.add(round(table.scroll_y) + y - 1)
            return real(y)

        table.render_line = counted  # type: ignore[method-assign]
        table.set_rows(self.rows)
        table.focus()

    def on_row_table_row_highlighted(self, event: RowTable.RowHighlighted) -> None:
        self.highlighted.append(event.cursor_row)


def rows(n: int) -> list[tuple[str, ...]]:
    return [(f"c-{i:06x}", f"value number {i}") for i in range(n)]


def test_fit_pads_and_cuts_by_cells() -> None:
    assert fit("abc", 5) == "abc  "
    assert fit("abcdef", 4) == "abc…"
    assert fit("日本語", 4) == "日 …"  # a wide character never half shown
    assert fit("x", 0) == ""


@pytest.mark.asyncio
async def test_only_the_rows_on_screen_are_drawn_and_the_cursor_stays_in_view() -> None:
    app = Table(rows(500))
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        table = app.query_one(RowTable)
        assert table.row_count == 500 and table.get_row_at(7) == ("c-000007", "value number 7")
        assert table.widths == [len("c-000000"), len("value number 499")]
        assert max(app.drawn) < 12  # a screenful, not 500 rows
        await pilot.press("end")
        await settle(pilot)
        assert table.cursor_row == 499
        assert 499 in app.drawn and min(i for i in app.drawn if i > 20) > 480
        await pilot.press("pageup")
        await settle(pilot)
        shown = range(round(table.scroll_y), round(table.scroll_y) + table.size.height - 1)
        assert table.cursor_row < 499 and table.cursor_row in shown
        await pilot.press("home", "down", "down")
        await settle(pilot)
        assert table.cursor_row == 2 and table.scroll_y == 0
        assert app.highlighted[-1] == 2


@pytest.mark.asyncio
async def test_new_rows_keep_the_cursor_within_them_and_long_cells_are_cut() -> None:
    app = Table(rows(50))
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        table = app.query_one(RowTable)
        table.move_cursor(row=40)
        table.set_rows([("c-1", "x" * 300), ("c-2", "y")])
        await settle(pilot)
        assert table.cursor_row == 1
        assert table.widths[1] == MAX_WIDTH
        table.set_rows([])
        await settle(pilot)
        assert table.row_count == 0 and table.cursor_row == 0
        await pilot.press("down", "end", "pagedown")  # nothing to move over: no error


@pytest.mark.asyncio
async def test_left_and_right_scroll_a_table_wider_than_the_terminal() -> None:
    app = Table([("c-1", "x" * 90)])
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        table = app.query_one(RowTable)
        await pilot.press("right", "right")
        await settle(pilot)
        assert table.scroll_x > 0
        await pilot.press("left", "left")
        await settle(pilot)
        assert table.scroll_x == 0
