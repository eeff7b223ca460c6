"""The review screen: captured memories waiting for a person, accepted, edited or rejected here.

Every pending item of every capture note is a row (kind, confidence, entity, what it says,
flags); the line below the table shows the highlighted item's quote and where it came from.
`a` accepts (a contradiction first shows the diff of its entity note), `r` rejects, `e` edits
the value in place, `A` accepts every item at or above a confidence, `u` undoes the last
decision while its notes are as it left them. Everything goes through `vault.captures`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, Static

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.errors import CaptureNotFound
from vaultmem.capture.note import CaptureNote, Item
from vaultmem.errors import VaultmemError
from vaultmem.tui.screens.keys import BACK_TO_SEARCH, SWITCH_LETTERS
from vaultmem.tui.widgets.diff_view import DiffView
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.row_table import RowTable

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp

DEFAULT_THRESHOLD = 0.7


@dataclass(frozen=True)
class Row:
    """A pending item and the capture note it stands in."""

    note: CaptureNote
    item: Item


def rows_of(notes: list[CaptureNote]) -> list[Row]:
    return [Row(n, i) for n in notes for i in n.items if not i.decided]


COLUMNS = ("id", "kind", "conf", "entity", "item", "flags")
NARROW_COLUMNS = ("kind", "item")  # under 60 columns: what the item says, not its id
NARROW = 60


def narrow_cells(row: Row) -> tuple[str, ...]:
    kind, what = cells(row)[1], cells(row)[4]
    entity = "" if row.item.candidate.kind == "episode" else f"{row.item.candidate.entity}: "
    return (kind, entity + what)


def cells(row: Row) -> tuple[str, ...]:
    c = row.item.candidate
    what = f"{c.key}:: {c.value}" if c.kind == "fact" else c.value
    if c.kind == "episode":
        what = f"{c.entity}: {c.value}"
    if c.due:
        what += f" (due {c.due.isoformat()})"
    flags = " ".join(f"{f.kind} {f.target}" for f in row.item.flags)
    entity = "" if c.kind == "episode" else c.entity
    mark = "✓?" if row.item.status == "checked" else ""
    # the flags column is off screen in a narrow terminal: the kind says there is one
    sign = "≠" if any(f.kind == "contradicts" for f in row.item.flags) else ""
    sign = sign or ("=" if row.item.flags else "")
    return (c.id, f"{mark}{c.kind}{sign}", f"{c.confidence:.2f}", entity, what, flags)


def status_line(notes: list[CaptureNote]) -> str:
    pending = sum(len(n.pending) for n in notes)
    if not pending:
        return "nothing to review: `vaultmem capture FILE --source LABEL` proposes memories"
    captures = len([n for n in notes if n.pending])
    return (
        f"{pending} item{'s' * (pending != 1)} to review in {captures}"
        f" capture{'s' * (captures != 1)} · a accept · r reject · e edit · u undo"
    )


class Ask(ModalScreen[str | None]):
    """One line of text asked for (a new value, a threshold); Escape gives None."""

    DEFAULT_CSS = """
    Ask {
        align: center middle;
    }
    Ask > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.prompt)
            yield Input(self.value, id="ask-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewScreen(Screen[None]):
    """Captured candidates, one row each; decide with a, r, e, A, u."""

    DEFAULT_CSS = """
    ReviewScreen #review-status {
        width: 1fr;
        height: auto;
        max-height: 2;
    }
    ReviewScreen #review-table {
        height: 1fr;
    }
    ReviewScreen #review-detail {
        height: auto;
        max-height: 4;
        color: $text-muted;
    }
    /* 40x12: the rows first; the status and the quote get a line or two */
    ReviewScreen.-short #review-status {
        max-height: 1;
    }
    ReviewScreen.-short #review-detail {
        max-height: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept"),
        Binding("r", "reject", "Reject"),
        Binding("e", "edit", "Edit value"),
        Binding("A", "accept_above", "Accept all ≥"),
        Binding("u", "undo", "Undo last"),
        BACK_TO_SEARCH,
        *SWITCH_LETTERS,
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[CaptureNote] = []
        self.rows: list[Row] = []
        self.last: str | None = None  # the id of the last decision, for undo
        self.loaded = False
        self.narrow = False

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    def compose(self) -> ComposeResult:
        yield Label("review: reading the inbox…", id="review-status")
        yield RowTable(id="review-table")
        yield Static("", id="review-detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.narrow = self.size.width < NARROW
        self.query_one("#review-table", RowTable).set_columns(self._columns())
        self.reload()

    def _columns(self) -> tuple[str, ...]:
        return NARROW_COLUMNS if self.narrow else COLUMNS

    def on_screen_resume(self) -> None:
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < 16, "-short")
        narrow = event.size.width < NARROW
        if narrow != self.narrow:
            self.narrow = narrow
            self.query_one("#review-table", RowTable).set_columns(self._columns())
            self._fill()

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="review")
    def _load(self) -> None:
        app = self.vaultmem
        try:
            notes = app.vault.captures.pending()
        except VaultmemError as exc:
            app.call_from_thread(self.notify, str(exc), title="review", severity="error")
            return
        app.call_from_thread(self._show, notes)

    def _show(self, notes: list[CaptureNote]) -> None:
        if not (self.loaded and notes == self.notes):  # the same notes: the same rows
            self.notes, self.rows = notes, rows_of(notes)
            self._fill()
        self.query_one("#review-status", Label).update(status_line(notes))
        self._detail()
        self.query_one("#review-table", RowTable).focus()
        self.loaded = True

    def _fill(self) -> None:
        table = self.query_one("#review-table", RowTable)
        table.set_rows((narrow_cells if self.narrow else cells)(row) for row in self.rows)

    @on(RowTable.RowHighlighted)
    def _highlighted(self, _: RowTable.RowHighlighted) -> None:
        self._detail()

    def _detail(self) -> None:
        row = self.current()
        text = ""
        if row is not None:
            c = row.item.candidate
            flags = "".join(
                f" · {f.kind} {f.target}" + (f" (now “{f.now}”)" if f.now else "")
                for f in row.item.flags
            )
            quote = f"“{c.quote}”" + (f" · turn {c.turn}" if c.turn else "") if c.quote else ""
            # the item in full first: its column is cut in a narrow terminal, or by a long value
            parts = (narrow_cells(row)[1], quote, flags.removeprefix(" · "), row.note.path)
            text = " · ".join(x for x in parts if x)
        self.query_one("#review-detail", Static).update(text)

    def current(self) -> Row | None:
        table = self.query_one("#review-table", RowTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    # ---- decisions (each in a worker: a write reindexes what it touched)

    def action_accept(self) -> None:
        row = self.current()
        if row is None:
            return
        if any(f.kind == "contradicts" for f in row.item.flags):
            self._preview(row)
        else:
            self._decide("accept", row.item.id, seen=row.item.candidate)

    @work(thread=True, exclusive=True, group="review-write")
    def _preview(self, row: Row) -> None:
        app = self.vaultmem
        try:
            diff = app.vault.captures.preview(row.item.id)
        except VaultmemError as exc:
            app.call_from_thread(self.notify, str(exc), title="not accepted", severity="error")
            return
        app.call_from_thread(self._confirm, row, diff)

    def _confirm(self, row: Row, diff: str | None) -> None:
        item_id = row.item.id
        if not diff:
            self._decide("accept", item_id, seen=row.item.candidate)
            return

        def answered(apply: bool | None) -> None:
            if apply:
                self._decide("accept", item_id, seen=row.item.candidate)
            else:
                self.notify("Nothing was written.", title="review")

        self.app.push_screen(DiffView(diff, f"Accept {item_id}? It changes a fact:"), answered)

    def action_reject(self) -> None:
        row = self.current()
        if row is not None:
            self._decide("reject", row.item.id, seen=row.item.candidate)

    def action_edit(self) -> None:
        row = self.current()
        if row is None:
            return
        item_id = row.item.id

        def edited(value: str | None) -> None:
            if value is not None and value.strip():
                self._decide("edit", item_id, value)

        self.app.push_screen(Ask(f"New value for {item_id}:", row.item.candidate.value), edited)

    def action_accept_above(self) -> None:
        def chosen(value: str | None) -> None:
            if value is None:
                return
            try:
                threshold = float(value)
            except ValueError:
                self.notify(f"{value!r} is not a number from 0 to 1", severity="error")
                return
            self._decide("accept-above", None, threshold=threshold)

        self.app.push_screen(
            Ask("Accept every item at or above confidence:", str(DEFAULT_THRESHOLD)), chosen
        )

    def action_undo(self) -> None:
        """Undo the last decision made here, else the latest one kept (this session's or an
        earlier one's: pressed again, it goes further back)."""
        self._decide("undo", self.last)

    @work(thread=True, exclusive=True, group="review-write")
    def _decide(
        self,
        action: str,
        item_id: str | None,
        value: str | None = None,
        threshold: float = 1.0,
        seen: Candidate | None = None,
    ) -> None:
        app = self.vaultmem
        captures = app.vault.captures
        shown = {item_id: seen} if item_id and seen else None
        last: str | None = None
        try:
            if action in ("accept", "reject") and item_id:
                decide = captures.accept if action == "accept" else captures.reject
                decisions = decide([item_id], seen=shown)
                messages = [d.message for d in decisions]
                if any(d.status == "refused" for d in decisions):
                    app.call_from_thread(
                        self.notify, messages[0], title="nothing written", severity="warning"
                    )
                    app.call_from_thread(self.reload)
                    return
                last = item_id
            elif action == "edit" and item_id:
                messages = [captures.edit(item_id, value=value).message]
            elif action == "accept-above":
                done = captures.accept(all_items=True, min_confidence=threshold)
                messages = [f"accepted {len(done)} item{'s' * (len(done) != 1)} ≥ {threshold}"]
            else:
                try:
                    messages = [captures.undo(item_id).message]
                except CaptureNotFound:
                    app.call_from_thread(self.notify, "Nothing to undo.", title="review")
                    return
        except VaultmemError as exc:
            app.call_from_thread(self.notify, str(exc), title="nothing written", severity="error")
            app.call_from_thread(self.reload)
            return
        app.call_from_thread(self._decided, messages, last)

    def _decided(self, messages: list[str], last: str | None) -> None:
        self.last = last
        for message in messages:
            self.notify(message, title="review")
        self.reload()
