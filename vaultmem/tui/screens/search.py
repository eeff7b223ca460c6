"""The search screen (the default): results as you type, mode and filters, a preview pane."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList

from vaultmem.dates import SINCE_HELP, no_such_day, since_day
from vaultmem.errors import VaultmemError
from vaultmem.query import parse as parse_query
from vaultmem.search import MODES, Mode, SearchResult, query_words
from vaultmem.tui.screens.note import Landing
from vaultmem.tui.widgets.hit_list import HitList, heading_trail
from vaultmem.tui.widgets.index_status import IndexStatus
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.preview import Preview, section_lines
from vaultmem.tui.widgets.reindex_bar import ReindexBar
from vaultmem.vault import Hit

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp

LIMIT = 20  # about three screens of hits; each one costs layout time on every keystroke
WELCOME = Text.assemble(
    ("Type to search", "bold"),
    " the vault by words and meaning.\n\n",
    ("↓ ↑", "bold"), " move through the hits, ", ("enter", "bold"), " opens one\n",
    ("ctrl+t", "bold"), " hybrid, keyword or semantic\n",
    ("ctrl+f", "bold"), " filter by tag, folder, date\n",
    ("f3", "bold"), " browse · ", ("f4", "bold"), " gaps · ", ("f5", "bold"), " path\n",
    ("ctrl+p", "bold"), " every command, and any note by name\n",
    ("ctrl+r", "bold"), " reindex · ", ("f1", "bold"), " all keys · ", ("ctrl+q", "bold"), " quit",
)  # fmt: skip
PREVIEW_AFTER = 0.12  # seconds the cursor rests on a hit before its section is rendered


@dataclass(frozen=True)
class SearchRequest:
    """Everything a search depends on; results for any other request are stale."""

    query: str
    mode: Mode
    tag: str | None
    folder: str | None
    since: dt.date | None


def parse_since(text: str, today: dt.date | None = None) -> dt.date | None:
    """The day a since field names (YYYY-MM-DD, or words such as "last week"), None for an
    empty field; ValueError for anything else."""
    if not text.strip():
        return None
    day = since_day(text, today or dt.date.today())
    if day is None:
        raise ValueError(text)
    return day


class SearchScreen(Screen[None]):
    """Type to search; ↓ moves to the hits, Enter opens one, ctrl+t changes the mode.

    Typing always goes to the search box: a letter pressed while the hits have the focus is
    added to the query (no letter is a command here), and coming back to this screen (escape
    from a note, F2) puts the focus in the search box with the query selected, so typing
    replaces it and ↓ returns to the hits.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "cycle_mode", "Mode", priority=True),
        Binding("ctrl+f", "toggle_filters", "Filters", priority=True),
        Binding("down", "focus_hits", "Hits", show=False),
        Binding("escape", "focus_query", "Search box", show=False),
    ]

    show_timings = True  # the status line's "· 12 ms"; snapshot tests turn it off

    def __init__(self) -> None:
        super().__init__()
        self.mode: Mode = "hybrid"
        self.generation = -1  # the app's index generation these results came from
        self.last_result: SearchResult | None = None
        self.last_ms: float | None = None
        self._preview_timer: Timer | None = None
        self.painted: tuple[str, float] | None = None  # the query whose hits were last painted

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    def compose(self) -> ComposeResult:
        with Horizontal(id="query-row"):
            # selected on purpose (focus_query), never by a focus change: a letter typed in the
            # hits list is added to the query, not typed over it
            yield Input(placeholder="Search the vault…", id="query", select_on_focus=False)
            yield Label(self.mode, id="mode")
        with Horizontal(id="filters"):
            yield Label("tag", classes="filter-label")
            yield Input(placeholder="any", id="tag")
            yield Label("folder", classes="filter-label")
            yield Input(placeholder="any", id="folder")
            yield Label("since", classes="filter-label")
            yield Input(placeholder="YYYY-MM-DD, last week", id="since")
        with Horizontal(id="results"):
            yield HitList(id="hits")
            yield Preview(id="preview")
        with Horizontal(id="status-row"):
            yield Label("", id="status")
            yield IndexStatus(id="index-status")
        yield ReindexBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self.show_status()
        self.query_one(Preview).show_text("", WELCOME)

    def on_screen_resume(self) -> None:
        # back from a note, another screen, the palette or the keys: the search box, query
        # selected; at once, before any key typed meanwhile is handled
        self.action_focus_query()
        if self.generation != self.vaultmem.index_generation:
            self.reload()

    def on_key(self, event: events.Key) -> None:
        """A printable key that reached the screen was typed outside the search box (a text
        field keeps its own keys): it goes into the search box as if typed there, over the
        query when it is selected, else at its end.

        That includes a key sent to the hits just before the focus came back to the search box
        (typing right after escape): handled here, it is never lost.
        """
        if not event.is_printable or event.character is None:
            return
        event.stop()
        event.prevent_default()
        query = self.query_one("#query", Input)
        self.set_focus(query)
        if query.selection.is_empty:
            query.cursor_position = len(query.value)
            query.insert_text_at_cursor(event.character)
        else:
            query.replace(event.character, *query.selection)

    # ---- the request

    def request(self) -> SearchRequest | str:
        """The request the inputs describe now, or why they describe none."""
        since_text = self.query_one("#since", Input).value
        try:
            since = parse_since(since_text)
        except ValueError:
            return f"since: {no_such_day(since_text) or SINCE_HELP}"
        tag = self.query_one("#tag", Input).value.strip().lstrip("#") or None
        folder = self.query_one("#folder", Input).value.strip().strip("/") or None
        query = self.query_one("#query", Input).value
        return SearchRequest(query, self.mode, tag, folder, since)

    def reload(self) -> None:
        """Search again: the index changed."""
        self.generation = self.vaultmem.index_generation
        self.run_search()

    @on(Input.Changed)
    def run_search(self) -> None:
        if self._preview_timer is not None:
            # the hits are about to change: a preview now would take the UI thread (and the
            # GIL from the search) for a hit that is going away
            self._preview_timer.stop()
        request = self.request()
        if isinstance(request, str):
            self.show_status(request, error=True)
            return
        if not request.query.strip():
            self.last_result = None
            self.query_one(HitList).show_hits((), {})
            self.query_one(Preview).show_text("", WELCOME)
            self.show_status()
            return
        self.search(request)

    @work(thread=True, exclusive=True, group="search")
    def search(self, request: SearchRequest) -> None:
        app = self.vaultmem
        started = time.perf_counter()
        try:
            result = app.vault.search(
                request.query,
                limit=LIMIT,
                mode=request.mode,
                tag=request.tag,
                path=request.folder,
                since=request.since,
            )
            dates = app.note_dates()
        except VaultmemError as exc:
            app.call_from_thread(self.failed, request, exc)
            return
        elapsed = (time.perf_counter() - started) * 1000
        app.call_from_thread(self.show_result, request, result, dates, elapsed)

    def show_result(
        self,
        request: SearchRequest,
        result: SearchResult,
        dates: dict[str, str | None],
        elapsed_ms: float,
    ) -> None:
        """Show `result` unless the inputs moved on since it was asked for (a stale result)."""
        if request != self.request():
            return
        self.last_result = result
        self.last_ms = elapsed_ms
        self.query_one(HitList).show_hits(result.hits, dates)
        self.call_after_refresh(self._painted, request.query)
        if not result.hits:
            self.query_one(Preview).clear(f"no matches for {request.query!r}")
        self.show_status()
        for notice in result.notices:
            self.notify(notice, severity="warning")

    def _painted(self, query: str) -> None:
        self.painted = (query, time.perf_counter())

    def failed(self, request: SearchRequest, exc: VaultmemError) -> None:
        if request == self.request():
            self.show_status(str(exc), error=True)

    def show_status(self, message: str | None = None, error: bool = False) -> None:
        status = self.query_one("#status", Label)
        status.set_class(error, "-error")
        if message is None:
            result = self.last_result
            if result is None:
                message = "type to search · ↓ hits · enter opens · ctrl+t mode · ctrl+p commands"
            else:
                n = len(result.hits)
                mode = result.mode if result.mode == self.mode else f"{result.mode} (fallback)"
                took = ""
                if self.show_timings and self.last_ms is not None:
                    took = f" · {self.last_ms:.0f} ms"
                message = f"{n} note{'s' * (n != 1)} · {mode}{took}"
        status.update(message, layout=False)  # one fixed line: no need to lay the screen out

    # ---- preview and opening

    @on(OptionList.OptionHighlighted, "#hits")
    def preview_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Rendering markdown takes the UI thread for tens of milliseconds: while keys arrive
        # (results changing, the cursor moving), wait until the cursor rests on a hit.
        hit = self.query_one(HitList).hit_of(event.option)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if hit is not None:
            self._preview_timer = self.set_timer(PREVIEW_AFTER, lambda: self.preview(hit))

    @work(thread=True, exclusive=True, group="preview")
    def preview(self, hit: Hit) -> None:
        app = self.vaultmem
        try:
            note = app.vault.read_note(hit.path)
        except VaultmemError as exc:
            app.call_from_thread(self.query_one(Preview).clear, str(exc))
            return
        text = section_lines(
            note.text, note.start_line, hit.start_line, hit.end_line, note.body_line
        )
        trail = heading_trail(hit.title, hit.header)
        title = hit.title + (f" › {trail}" if trail else "")
        app.call_from_thread(self.show_preview, hit, title, text)

    def show_preview(self, hit: Hit, title: str, text: str) -> None:
        if not self.query("#preview-title"):
            return  # the app is closing: its widgets are gone before this late answer came
        if self.query_one(HitList).current == hit:  # the cursor may have moved on
            self.query_one(Preview).show(title, text)

    @on(OptionList.OptionSelected, "#hits")
    def open_selected(self, event: OptionList.OptionSelected) -> None:
        hit = self.query_one(HitList).hit_of(event.option)
        if hit is not None:
            self.vaultmem.open_note(hit.path, self.landing(hit))

    @on(Input.Submitted, "#query")
    def open_current(self) -> None:
        hit = self.query_one(HitList).current
        if hit is not None:
            self.vaultmem.open_note(hit.path, self.landing(hit))

    def landing(self, hit: Hit) -> Landing:
        """Where the hit opens: its section, the words it matched highlighted."""
        result = self.last_result
        words: tuple[str, ...] = ()
        if result is not None:
            try:
                words = tuple(query_words(parse_query(result.query).text))
            except VaultmemError:
                words = ()
        heading = hit.header.split(" > ")[-1] if hit.header else ""
        return Landing(hit.start_line, heading, words)

    # ---- actions

    def action_cycle_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self.query_one("#mode", Label).update(self.mode)
        self.run_search()

    def action_toggle_filters(self) -> None:
        filters = self.query_one("#filters")
        filters.toggle_class("-shown")
        if filters.has_class("-shown"):
            self.query_one("#tag", Input).focus()
        else:
            self.query_one("#query", Input).focus()

    def action_focus_hits(self) -> None:
        hits = self.query_one(HitList)
        if hits.hits:
            hits.focus()

    def action_focus_query(self) -> None:
        """The search box, its query selected: typing replaces it, ↓ goes back to the hits."""
        query = self.query_one("#query", Input)
        self.set_focus(query)  # now, not after the messages already queued (as focus() does)
        query.select_all()

    def set_filters(
        self, tag: str | None = None, folder: str | None = None, query: str | None = None
    ) -> None:
        """Narrow the search to a tag and/or a folder (from browse or a note's tags)."""
        self.query_one("#filters").add_class("-shown")
        self.query_one("#tag", Input).value = tag or ""
        self.query_one("#folder", Input).value = folder or ""
        if query is not None:
            self.query_one("#query", Input).value = query
        self.query_one("#query", Input).focus()
