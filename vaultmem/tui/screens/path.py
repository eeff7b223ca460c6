"""The path screen: pick two notes (fuzzy completion) and see the chain of links between them."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from vaultmem import graph as link_graph
from vaultmem.errors import VaultmemError
from vaultmem.tui.fuzzy import NameIndex
from vaultmem.tui.screens.keys import BACK_TO_SEARCH
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.note_picker import NotePicker

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp

MAX_DEPTH = 5  # as `vaultmem graph path`: beyond five hops a "connection" says little


def _step_prompt(step: link_graph.PathStep) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if step.arrow is not None:
        text.append(f"  {step.arrow}  ", style="bold cyan")
    node = step.node
    text.append(node.title, style="bold" if step.arrow is None else "")
    if node.kind == "wanted":
        text.append(" (wanted: not written yet)", style="italic")
    elif node.id not in (node.title, node.title + ".md"):
        text.append(f"  {node.id}", style="dim")
    return text


class PathScreen(Screen[None]):
    """From one note to another: the shortest chain of links, hop by hop; Enter opens a hop."""

    DEFAULT_CSS = """
    PathScreen .path-end {
        height: auto;
    }
    PathScreen .path-label {
        width: 5;
        padding: 0 1 0 0;
        text-align: right;
    }
    PathScreen NotePicker {
        width: 1fr;
    }
    PathScreen #path-hops {
        height: 1fr;
    }
    PathScreen #path-why {
        height: auto;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "swap", "Swap ends"),
        Binding("ctrl+l", "clear", "Clear"),
        BACK_TO_SEARCH,  # once a picker's matches are closed
    ]

    def __init__(self) -> None:
        super().__init__()
        self.generation = -1
        self.steps: tuple[link_graph.PathStep, ...] = ()
        self.no_path: tuple[str, ...] = ()

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    def compose(self) -> ComposeResult:
        with Horizontal(classes="path-end"):
            yield Label("from", classes="path-label")
            yield NotePicker("from: a note's name, alias or path", id="from")
        with Horizontal(classes="path-end"):
            yield Label("to", classes="path-label")
            yield NotePicker("to: a note's name, alias or path", id="to")
        yield OptionList(id="path-hops")
        yield Static("", id="path-why")
        yield Label("type two notes · ↓↑ matches · enter picks · ctrl+s swaps", id="status")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#path-hops", OptionList).display = False
        self.query_one("#from", NotePicker).focus_input()
        self.reload()

    def on_screen_resume(self) -> None:
        if self.generation != self.vaultmem.index_generation:
            self.reload()

    def reload(self) -> None:
        """New names to complete from, and the path again: the index changed."""
        self.generation = self.vaultmem.index_generation
        self._load_names()

    @work(thread=True, exclusive=True, group="path-names")
    def _load_names(self) -> None:
        app = self.vaultmem
        try:
            index = app.note_index()
            paths = {n.path: n.path for n in app.vault.note_names()}
            app.vault.graph()  # built once per index generation: now, not on the first path
        except VaultmemError as exc:
            app.call_from_thread(self._failed, exc)
            return
        app.call_from_thread(self._names_loaded, index, paths)

    def _names_loaded(self, index: NameIndex, paths: dict[str, str]) -> None:
        for picker in self.query(NotePicker):
            picker.set_index(index, paths)
        self._find()

    # ---- choosing the ends

    def ends(self) -> tuple[str | None, str | None]:
        """The graph nodes picked as the start and the end (None: not picked yet)."""
        return self.query_one("#from", NotePicker).key, self.query_one("#to", NotePicker).key

    @on(NotePicker.Picked)
    def _picked(self, event: NotePicker.Picked) -> None:
        self._after_pick(event.picker)

    @on(NotePicker.Typed)
    def _typed(self, event: NotePicker.Typed) -> None:
        # Nothing matched fuzzily; the core may still know it (a wanted note's name).
        try:
            node = self.vaultmem.vault.node(event.text)
        except VaultmemError as exc:
            self.notify(str(exc), title="no such note", severity="warning")
            return
        event.picker.set_pick(node, event.text)
        self._after_pick(event.picker)

    def _after_pick(self, picker: NotePicker) -> None:
        other = self.query_one("#to" if picker.id == "from" else "#from", NotePicker)
        if other.key is None:
            other.focus_input()
        self._find()

    # ---- the path

    def _find(self) -> None:
        start, end = self.ends()
        if start is None or end is None:
            self._show((), ())
            return
        self._compute(start, end)

    @work(thread=True, exclusive=True, group="path")
    def _compute(self, start: str, end: str) -> None:
        app = self.vaultmem
        try:
            G = app.vault.graph()
            if start not in G or end not in G:
                raise VaultmemError("a picked note is gone from the index: pick it again")
            result = link_graph.connect(G, start, end, max_depth=MAX_DEPTH)
        except VaultmemError as exc:
            app.call_from_thread(self._failed, exc)
            return
        app.call_from_thread(self._shown_if_current, start, end, result.steps, result.why_not())

    def _shown_if_current(
        self, start: str, end: str, steps: tuple[link_graph.PathStep, ...], why: tuple[str, ...]
    ) -> None:
        if (start, end) == self.ends():  # not re-picked meanwhile
            self._show(steps, why)

    def _show(self, steps: tuple[link_graph.PathStep, ...], why: tuple[str, ...]) -> None:
        self.steps, self.no_path = steps, why
        hops = self.query_one("#path-hops", OptionList)
        hops.clear_options()
        hops.add_options(Option(_step_prompt(s), id=str(i)) for i, s in enumerate(steps))
        hops.display = bool(steps)
        self.query_one("#path-why", Static).update("\n".join(why))
        status = self.query_one("#status", Label)
        if steps:
            n = len(steps) - 1
            status.update(
                "the same note" if n == 0 else f"{n} hop{'s' * (n != 1)} · enter opens a note"
            )
            hops.highlighted = 0
            hops.focus()
        elif why:
            status.update("no path")
        else:
            status.update("type two notes · ↓↑ matches · enter picks · ctrl+s swaps")

    def _failed(self, exc: VaultmemError) -> None:
        self.notify(str(exc), title="path", severity="error")

    @on(OptionList.OptionSelected, "#path-hops")
    def _open(self, event: OptionList.OptionSelected) -> None:
        step = self.steps[int(event.option.id or 0)]
        if step.node.kind == "wanted":
            self.notify(f"{step.node.title} is a wanted note: no file yet", severity="warning")
        else:
            self.vaultmem.open_note(step.node.id)

    # ---- actions

    def action_swap(self) -> None:
        start, end = self.query_one("#from", NotePicker), self.query_one("#to", NotePicker)
        start_text, end_text = start.value, end.value
        start_key, end_key = start.key, end.key
        start.set_pick(end_key, end_text)
        end.set_pick(start_key, start_text)
        self._find()

    def action_clear(self) -> None:
        for picker in self.query(NotePicker):
            picker.set_pick(None, "")
        self._show((), ())
        self.query_one("#from", NotePicker).focus_input()
