"""The gaps screen: one tab per knowledge-gap class, each row opening its note; the alias fix."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Label, TabbedContent, TabPane

from vaultmem.errors import VaultmemError
from vaultmem.gaps import (
    GAP_CLASSES,
    AliasFixPlan,
    GapClass,
    GapRow,
    GapsReport,
    apply_alias_fixes,
    gap_counts,
    gap_rows,
    gaps_report,
    plan_alias_fixes,
)
from vaultmem.tui.screens.keys import BACK_TO_SEARCH, SWITCH_LETTERS
from vaultmem.tui.widgets.diff_view import DiffView
from vaultmem.tui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp

ALIAS_TAB = "alias_fixable"


@dataclass(frozen=True)
class GapTab:
    """A gap class as a tab: its class (title, columns, what empty says) and its rows."""

    gap: GapClass
    rows: tuple[GapRow, ...]

    @property
    def id(self) -> str:
        return self.gap.key

    @property
    def columns(self) -> tuple[str, ...]:
        if self.gap.key == ALIAS_TAB:
            return (*self.gap.columns[:-1], f"{self.gap.columns[-1]} (f)")  # the fix's key
        return self.gap.columns


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def gap_tabs(report: GapsReport) -> tuple[GapTab, ...]:
    """The report as tabs of rows, in the order every front-end lists the gap classes."""
    return tuple(GapTab(gap, gap_rows(report, gap.key)) for gap in GAP_CLASSES)


def totals_line(report: GapsReport) -> str:
    """The share of all notes in each note-sized gap class (counts are on the tabs)."""
    parts = [
        f"{c.gap.label.lower()} {c.count} ({c.percent:.1f}%)"
        for c in gap_counts(report)
        if c.percent is not None
    ]
    return f"{_plural(report.notes, 'note')} · " + " · ".join(parts)


class GapsScreen(Screen[None]):
    """Where the knowledge is thin: a tab per gap class; Enter opens the row's note."""

    DEFAULT_CSS = """
    GapsScreen #gaps-totals {
        width: 1fr;
        height: auto;
        max-height: 3;
    }
    GapsScreen.-short #gaps-totals {
        max-height: 1;
    }
    GapsScreen #gaps-tabs {
        height: 1fr;
    }
    GapsScreen #gaps-tabs DataTable {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "fix_aliases", "Fix alias links"),
        Binding("right_square_bracket", "tab(1)", "Next tab"),
        Binding("left_square_bracket", "tab(-1)", "Prev tab"),
        BACK_TO_SEARCH,
        *SWITCH_LETTERS,  # nothing is typed on this screen
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, now: dt.datetime | None = None) -> None:
        super().__init__()
        self.now = now  # expiry is judged at this time (tests pin it); None: the clock
        self.tabs: tuple[GapTab, ...] = ()
        self.report: GapsReport | None = None
        self.generation = -1  # the app's index generation the report came from
        self._paths: dict[str, str] = {}  # row key -> the note it opens

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    def compose(self) -> ComposeResult:
        yield Label("gaps: reading the link graph…", id="gaps-totals")
        with TabbedContent(id="gaps-tabs"):
            for tab_id, title in TABS:
                with TabPane(title, id=f"gaps-{tab_id}"):
                    table: DataTable[str] = DataTable(
                        id=f"gaps-table-{tab_id}", cursor_type="row", zebra_stripes=True
                    )
                    yield table
        yield KeyBar()

    def on_mount(self) -> None:
        self.reload()

    def on_screen_resume(self) -> None:
        if self.generation != self.vaultmem.index_generation:
            self.reload()

    def on_resize(self, event: events.Resize) -> None:
        # In a short terminal the table needs the rows: totals get one line (counts are on tabs)
        self.set_class(event.size.height < 16, "-short")

    def reload(self) -> None:
        """Compute the report again (in a worker: seconds on a big vault)."""
        self.generation = self.vaultmem.index_generation
        # The indicator covers the totals line only: an animation over the whole table area
        # costs enough of the GIL to slow the report's thread down by half on a big vault.
        self.query_one("#gaps-totals", Label).loading = True
        self._compute()

    @work(thread=True, exclusive=True, group="gaps")
    def _compute(self) -> None:
        app = self.vaultmem
        try:
            report = gaps_report(app.vault, now=self.now)
            tabs = gap_tabs(report)
        except VaultmemError as exc:
            app.call_from_thread(self._failed, exc)
            return
        app.call_from_thread(self._show, report, tabs)

    def _failed(self, exc: VaultmemError) -> None:
        self.query_one("#gaps-totals", Label).loading = False
        self.query_one("#gaps-totals", Label).update(str(exc))
        self.notify(str(exc), title="gaps", severity="error")

    def _show(self, report: GapsReport, tabs: tuple[GapTab, ...]) -> None:
        self.report, self.tabs = report, tabs
        self._paths = {}
        contents = self.query_one("#gaps-tabs", TabbedContent)
        for tab in tabs:
            contents.get_tab(f"gaps-{tab.id}").label = f"{tab.gap.label} {len(tab.rows)}"
            table = self.query_one(f"#gaps-table-{tab.id}", DataTable)
            table.clear(columns=True)
            table.add_columns(*tab.columns)
            if not tab.rows:
                table.add_row(tab.gap.empty, *[""] * (len(tab.columns) - 1))
            for i, row in enumerate(tab.rows):
                key = f"{tab.id}:{i}"
                if row.path is not None:
                    self._paths[key] = row.path
                table.add_row(*row.cells, key=key)
        totals = self.query_one("#gaps-totals", Label)
        totals.update(totals_line(report))
        totals.loading = False
        self._focus_table()

    def _active_tab(self) -> str:
        return (self.query_one("#gaps-tabs", TabbedContent).active or "").removeprefix("gaps-")

    def _focus_table(self) -> None:
        self.query_one(f"#gaps-table-{self._active_tab()}", DataTable).focus()

    # ---- moving about

    def action_tab(self, step: int) -> None:
        ids = [f"gaps-{tab_id}" for tab_id, _ in TABS]
        contents = self.query_one("#gaps-tabs", TabbedContent)
        contents.active = ids[(ids.index(contents.active) + step) % len(ids)]
        self._focus_table()

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        path = self._paths.get(str(event.row_key.value))
        if path is not None:
            self.vaultmem.open_note(path)

    # ---- the alias fix

    def action_fix_aliases(self) -> None:
        """From any tab (or the command palette): show the alias links, then their diff."""
        contents = self.query_one("#gaps-tabs", TabbedContent)
        if contents.active != f"gaps-{ALIAS_TAB}":
            contents.active = f"gaps-{ALIAS_TAB}"
            self._focus_table()
        self._plan_fixes()

    @work(thread=True, exclusive=True, group="gaps-fix")
    def _plan_fixes(self) -> None:
        app = self.vaultmem
        try:
            plan = plan_alias_fixes(app.vault)
        except VaultmemError as exc:  # the index itself: gone, busy, of another schema
            app.call_from_thread(self.notify, str(exc), title="nothing fixed", severity="error")
            return
        app.call_from_thread(self._confirm, plan)

    def _confirm(self, plan: AliasFixPlan) -> None:
        for refusal in plan.refused:  # one per note, never the note's text
            self.notify(refusal.reason, title=f"not fixed: {refusal.path}", severity="error")
        if not plan.files:
            self.notify("No alias-fixable links: nothing to fix.", title="alias links")
            return
        files = len(plan.files)
        title = f"Rewrite {_plural(plan.fixes, 'alias link')} in {_plural(files, 'note')}?"
        diff = "".join(fix.diff for fix in plan.files)

        def answered(apply: bool | None) -> None:
            if apply:
                self._apply_fixes(plan)
            else:
                self.notify("Nothing was written.", title="alias links")

        self.app.push_screen(DiffView(diff, title), answered)

    @work(thread=True, exclusive=True, group="gaps-fix")
    def _apply_fixes(self, plan: AliasFixPlan) -> None:
        app = self.vaultmem
        try:
            result = apply_alias_fixes(app.vault, plan)
        except VaultmemError as exc:  # the index lock held too long: nothing was written
            app.call_from_thread(self.notify, str(exc), title="nothing fixed", severity="error")
            return
        for refusal in result.refused:
            app.call_from_thread(
                self.notify, refusal.reason, title=f"not written: {refusal.path}", severity="error"
            )
        if result.written:
            notes = _plural(len(result.written), "note")
            message = f"Fixed {_plural(result.fixed, 'link')} in {notes}."
            app.call_from_thread(self.notify, message, title="alias links")
            app.call_from_thread(app.refresh_views)  # each note was reindexed as it was written


# The tabs' ids and titles, known before any report is computed (the screen builds them first).
TABS = tuple((gap.key, gap.label) for gap in GAP_CLASSES)
