"""The vaultmem Textual app: screens as modes, reindex and live refresh, errors as toasts."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen

from vaultmem.errors import NoIndex, SchemaMismatch, VaultmemError
from vaultmem.indexer import ReindexReport
from vaultmem.live import settle_heap, start_upgrade
from vaultmem.tui.commands import ActionsProvider, NotesProvider, note_entries, screen_commands
from vaultmem.tui.fuzzy import NameIndex
from vaultmem.tui.screens.browse import BrowseScreen
from vaultmem.tui.screens.gaps import GapsScreen
from vaultmem.tui.screens.keys import KeysScreen
from vaultmem.tui.screens.no_index import NoIndexScreen
from vaultmem.tui.screens.note import Landing, NoteScreen
from vaultmem.tui.screens.path import PathScreen
from vaultmem.tui.screens.review import ReviewScreen
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.stylesheet import Stylesheet
from vaultmem.tui.widgets.index_status import IndexState
from vaultmem.tui.widgets.reindex_bar import ReindexProgress
from vaultmem.tui.widgets.upgrade_status import UpgradeView
from vaultmem.vault import Vault

if TYPE_CHECKING:
    from vaultmem.embed_upgrade import Background, Report
    from vaultmem.live import Freshness

PROGRESS_EVERY = 0.1  # seconds between progress bar updates: smooth, without flooding the UI
# seconds after a key during which the background upgrade to MiniLM waits (a pause of up to
# embed_upgrade.HOLD_MAX): its thread took the GIL and a core from the keystroke's search
# and repaint (bench/tui.py on 400 MDN pages, docs/BENCHMARKS.md round 7)
TYPING_QUIET = 1.0
BACKGROUND_AFTER = 0.3  # seconds after start-up before the background loading begins


class VaultmemApp(App[None]):
    """Search, notes, browse (and the screens in MODES) over one `Vault`."""

    CSS_PATH = "vaultmem.tcss"
    TITLE = "vaultmem"
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "search": SearchScreen,
        "browse": BrowseScreen,
        "gaps": GapsScreen,
        "path": PathScreen,
        "review": ReviewScreen,
    }
    DEFAULT_MODE = "search"
    # vaultmem's actions (then Theme and Quit) in its own order; none of Textual's developer
    # commands (Screenshot, Maximize), and any note by name.
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        ActionsProvider,
        NotesProvider,
    }
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-wide")]  # noqa: RUF012 - narrow: no side panes
    # No single letters here: a letter must never leave a screen, or quit, where text might
    # be typed (the search screen sends letters to its search box wherever its focus is).
    # Screens without a text field add letters of their own (SWITCH_LETTERS, q).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "reindex", "Reindex", priority=True),
        Binding("f1,question_mark", "help", "Keys"),
        Binding("f2", "mode('search')", "Search", priority=True, show=False),
        Binding("f3", "mode('browse')", "Browse", priority=True, show=False),
        Binding("f4", "mode('gaps')", "Gaps", priority=True, show=False),
        Binding("f5", "mode('path')", "Path", priority=True, show=False),
        Binding("f6", "mode('review')", "Review", priority=True, show=False),
    ]

    reindex_progress: reactive[ReindexProgress | None] = reactive(None)
    index_state: reactive[IndexState] = reactive(IndexState())

    class UpgradeReported(Message):
        """How the background upgrade to MiniLM goes (posted from its thread)."""

        def __init__(self, report: Report) -> None:
            super().__init__()
            self.report = report

    class FilesChanged(Message):
        """Notes changed on disk (posted from the watcher's thread)."""

        def __init__(self, paths: frozenset[str]) -> None:
            super().__init__()
            self.paths = paths

    def __init__(self, vault: Vault, live: bool = True) -> None:
        super().__init__()
        self.stylesheet = Stylesheet(variables=self.get_css_variables())  # (no sources yet)
        self.vault = vault
        self.live = live  # tests that drive reindexing by hand turn the watcher off
        self.index_ok = False
        self.index_generation = 0  # bumped after every reindex; screens reload when it moves
        self.freshness: Freshness | None = None
        self._reindexing = False
        self._again = False  # files changed while a reindex ran: refresh once more after it
        self._lock = threading.Lock()
        self._dates: tuple[int, dict[str, str | None]] | None = None
        self._names: tuple[int, NameIndex] | None = None
        self.warming: threading.Thread | None = None
        self.upgrading: Background | None = None  # the move to MiniLM (live.start_upgrade)
        self.upgrade_view = UpgradeView()  # what the status line and notices say of it
        self._note_screens: dict[str, NoteScreen] = {}
        self.title = f"vaultmem · {vault.root.name}"

    # ---- start and stop

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and self.upgrading is not None:
            self.vault.calls.hold(TYPING_QUIET)  # the upgrade waits while a person types
        await super().on_event(event)

    def on_mount(self) -> None:
        try:
            _ = self.vault.conn  # opening the index checks it exists and has this schema
        except (NoIndex, SchemaMismatch) as exc:
            self.push_screen(NoIndexScreen(exc))
            return
        self._index_ready()

    def _index_ready(self) -> None:
        self.index_ok = True
        self._read_index_state()
        # After the first screen is up: the vector load and the start-up reindex hold the GIL
        # for whole seconds on a big vault, and would delay the first paint by as much.
        self.set_timer(BACKGROUND_AFTER, self._start_background)

    def _start_background(self) -> None:
        self.warming = self.vault.warm()  # vectors into memory, in the background
        self._read_captures()
        if self.live and self.freshness is None:
            from vaultmem.live import Freshness

            self.freshness = Freshness(self.vault, on_change=self._disk_changed)
            self.freshness.start()
            self.refresh_index()  # edits made while the app was closed
            self.start_upgrade()
        self._settle_heap()

    def start_upgrade(self) -> None:
        """A vault past auto's limit moves to all-MiniLM-L6-v2 at idle priority, in a thread
        (unless the config says `embed_upgrade = "manual"`); the status line follows it."""
        if self.upgrading is None:
            self.upgrading = start_upgrade(self.vault, self._upgrade_reported)

    def _upgrade_reported(self, report: Report) -> None:
        self.post_message(self.UpgradeReported(report))  # safe from any thread, never waits

    @on(UpgradeReported)
    def upgrade_reported(self, message: UpgradeReported) -> None:
        self.follow_upgrade(message.report)

    def follow_upgrade(self, report: Report) -> None:
        """The upgrade's progress into the status line (a label's text: nothing else is laid
        out again), and what it calls for said once: its start, the swap, a problem with
        what to run."""
        view = self.upgrade_view
        for notice in view.follow(report):
            self.notify(
                notice.message, title=notice.title, severity=notice.severity, timeout=notice.timeout
            )
        if self.index_state.upgrade != view.line:
            self.index_state = dataclasses.replace(self.index_state, upgrade=view.line)
        if report.swapped:
            self.refresh_views()  # the visible screen searches again, with MiniLM

    @work(thread=True, group="captures")
    def _read_captures(self) -> None:
        """The review queue parsed once in the background: the review screen (F6) then opens
        without parsing every capture note (~25 ms per 500 items)."""
        with contextlib.suppress(VaultmemError):
            self.vault.captures.pending()

    @work(thread=True, group="settle")
    def _settle_heap(self) -> None:
        if self.warming is not None:
            self.warming.join()
        self.call_from_thread(self.freeze_heap)

    def freeze_heap(self) -> None:
        """Tell the garbage collector that what is in memory now stays (live.settle_heap):
        full collections walking Textual's widgets and the index's caches took 80-140 ms at
        random keystrokes on a 14k-note vault."""
        settle_heap()

    def on_unmount(self) -> None:
        if self.upgrading is not None:
            self.upgrading.stop()
        if self.freshness is not None:
            self.freshness.stop()

    # ---- the contract with every screen

    def open_note(self, path: str, landing: Landing | None = None) -> None:
        """Show the note at `path` in the note screen, keeping its back/forward history; a
        search hit's `landing` scrolls to its section with the matched words highlighted."""
        if isinstance(self.screen, NoteScreen):
            self.screen.go(path, landing)
            return
        # One note screen per mode, kept installed: composing a screen costs more than
        # rendering a note, and its back/forward history then spans the notes opened there.
        note = self._note_screens.get(self.current_mode)
        if note is None or note in self.screen_stack:
            note = NoteScreen(path, landing)
            if self.current_mode not in self._note_screens:
                self.install_screen(note, f"note-{self.current_mode}")
                self._note_screens[self.current_mode] = note
        else:
            note.go(path, landing)
        self.push_screen(note)

    def refresh_views(self) -> None:
        """The index changed: the visible screen reloads now, the others when next shown."""
        with self._lock:
            self.index_generation += 1
        self._read_index_state()
        reload = getattr(self.screen, "reload", None)
        if callable(reload):
            reload()

    # ---- the index at a glance (the status line)

    @work(thread=True, exclusive=True, group="index-state")
    def _read_index_state(self) -> None:
        try:
            figures = self.vault.stats()
        except VaultmemError:
            return  # the screens say what is wrong with the index
        self.call_from_thread(
            self._index_read,
            figures.notes,
            figures.last_reindex,
            figures.skipped,
            figures.notes_with_warnings,
        )

    def _index_read(
        self, notes: int, last_reindex: float | None, skipped: int = 0, warned: int = 0
    ) -> None:
        self.index_state = dataclasses.replace(
            self.index_state,
            notes=notes,
            last_reindex=last_reindex,
            skipped=skipped,
            warned=warned,
        )

    def _index_busy(self, pending: bool | None = None, reindexing: bool | None = None) -> None:
        state = self.index_state
        self.index_state = dataclasses.replace(
            state,
            pending=state.pending if pending is None else pending,
            reindexing=state.reindexing if reindexing is None else reindexing,
        )

    def search_for(self, tag: str | None = None, folder: str | None = None) -> None:
        """The search screen, narrowed to a tag or a folder."""
        self.action_mode("search")
        screen = self.screen
        if isinstance(screen, SearchScreen):
            screen.set_filters(tag=tag, folder=folder)

    # ---- cached lookups (called from worker threads)

    def note_dates(self) -> dict[str, str | None]:
        """Each note's date, for the hit list; read once per index generation."""
        generation = self.index_generation
        cached = self._dates
        if cached is None or cached[0] != generation:
            dates = {n.path: n.date for n in self.vault.note_names()}
            cached = self._dates = (generation, dates)
        return cached[1]

    def note_index(self) -> NameIndex:
        """The fuzzy index of note names, for the command palette; once per generation."""
        generation = self.index_generation
        cached = self._names
        if cached is None or cached[0] != generation:
            rows = ((n.path, n.title, n.aliases) for n in self.vault.note_names())
            cached = self._names = (generation, note_entries(rows))
        return cached[1]

    # ---- actions

    def action_mode(self, mode: str) -> None:
        """Go to a mode's screen; again from inside it goes back to its base screen."""
        if not self.index_ok:
            self.notify("build the index first (Enter)", severity="warning")
            return
        if mode not in self.MODES:
            self.notify(f"no {mode} screen in this version", severity="warning")
            return
        if mode == self.current_mode:
            while len(self.screen_stack) > 1:
                self.pop_screen()
        else:
            self.switch_mode(mode)

    def action_help(self) -> None:
        """The keys of the screen you are on (F1 again, or escape, closes them)."""
        if isinstance(self.screen, KeysScreen):
            self.screen.dismiss(None)
        else:
            self.push_screen(KeysScreen(self.screen))

    def action_reindex(self) -> None:
        self.reindex(full=False)

    def action_full_reindex(self) -> None:
        self.reindex(full=True)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """vaultmem's commands first (this screen's, then the app's), then Theme and Quit."""
        yield from screen_commands(screen)
        keys = {"search": "f2", "browse": "f3", "gaps": "f4", "path": "f5", "review": "f6"}
        for mode in self.MODES:
            what = "Search the vault" if mode == "search" else f"The {mode} screen"
            yield SystemCommand(
                mode.capitalize(),
                f"{what} ({keys[mode]})",
                lambda mode=mode: self.action_mode(mode),
            )
        yield SystemCommand("Reindex", "Bring the index up to date (ctrl+r)", self.action_reindex)
        yield SystemCommand(
            "Full reindex", "Rebuild the index from scratch", self.action_full_reindex
        )
        yield SystemCommand("Keys", "The keys of this screen (f1)", self.action_help)
        yield SystemCommand("Theme", "Change the colours", self.action_change_theme)
        yield SystemCommand("Quit", "Quit vaultmem (ctrl+q)", self.action_quit)

    # ---- reindexing

    @property
    def reindexing(self) -> bool:
        """A reindex (by hand or a live refresh) is running."""
        return self._reindexing

    def reindex(self, full: bool = False) -> None:
        """Reindex in a worker thread; the progress bar follows, the UI never waits."""
        if self._reindexing:
            self.notify("a reindex is already running")
            return
        self._reindexing = True
        self._index_busy(reindexing=True)
        self.reindex_progress = ReindexProgress("parse", 0, 0)
        self._run_reindex(full)

    @work(thread=True, group="reindex")
    def _run_reindex(self, full: bool) -> None:
        last = 0.0

        def progress(phase: str, done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if done < total and now - last < PROGRESS_EVERY:
                return
            last = now
            self.call_from_thread(
                setattr, self, "reindex_progress", ReindexProgress(phase, done, total)
            )

        def waiting(message: str) -> None:
            self.call_from_thread(self.notify, message)

        try:
            report = self.vault.reindex(full=full, progress=progress, on_wait=waiting)
        except VaultmemError as exc:
            self.call_from_thread(self._reindex_failed, exc)
            return
        self.call_from_thread(self._reindexed, report, False)

    def _reindexed(self, report: ReindexReport | None, quiet: bool) -> None:
        self._reindexing = False
        pending = self.freshness is not None and self.freshness.pending
        self._index_busy(pending=pending, reindexing=False)
        self.reindex_progress = None
        if isinstance(self.screen, NoIndexScreen):
            self.pop_screen()
            self._index_ready()
        if report is not None:
            self.refresh_views()
            if report.changed or report.removed:
                self.freeze_heap()  # the index's caches were rebuilt
            if report.embeddings.notice:
                self.notify(report.embeddings.notice, severity="warning")
            if not quiet:
                self.notify(report.summary(), title="reindexed")
            elif report.changed or report.removed:
                n = report.changed + report.removed
                self.notify(f"{n} note{'s' * (n != 1)} changed on disk", title="index refreshed")
        if self._again:
            self._again = False
            self.refresh_index()

    def _reindex_failed(self, exc: VaultmemError) -> None:
        self._reindexing = False
        self._index_busy(reindexing=False)
        self.reindex_progress = None
        self.notify(str(exc), title="reindex failed", severity="error", timeout=10)
        if isinstance(self.screen, NoIndexScreen):
            self.screen.failed()

    # ---- live refresh

    def _disk_changed(self, paths: frozenset[str]) -> None:
        self.post_message(self.FilesChanged(paths))  # post_message is safe from any thread

    @on(FilesChanged)
    def files_changed(self) -> None:
        self._index_busy(pending=True)
        self.refresh_index()

    def refresh_index(self) -> None:
        """Pick up edits made on disk (incremental, with vectors), then reload the views."""
        if self._reindexing:
            self._again = True
            return
        if self.freshness is None:
            return
        self._reindexing = True
        self._index_busy(reindexing=True)
        self._run_refresh()

    @work(thread=True, group="reindex")
    def _run_refresh(self) -> None:
        assert self.freshness is not None
        try:
            report = self.freshness.ensure_fresh()
        except VaultmemError as exc:
            self.call_from_thread(self._reindex_failed, exc)
            return
        self.call_from_thread(self._reindexed, report, True)
