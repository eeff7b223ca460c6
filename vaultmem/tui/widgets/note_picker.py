"""An input that completes note names fuzzily: type, ↓/↑ through the matches, Enter picks."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from vaultmem.tui.fuzzy import Match, NameIndex

SHOWN = 8  # matches in the dropdown: enough to choose from, small enough for 24 rows


def match_prompt(match: Match, path: str | None) -> Text:
    """The matched name with its matched letters bold, then the note's path (dimmed).

    A match on the path itself (or the path without `.md`) shows just the path.
    """
    text = Text(no_wrap=True, overflow="ellipsis")
    at = set(match.positions)
    shown = path if path and path.startswith(match.name) else match.name
    for i, char in enumerate(shown):
        text.append(char, style="bold underline" if i in at else "")
    if path and shown != path:
        text.append("  " + path, style="dim")
    return text


class NotePicker(Vertical):
    """A note name input with a dropdown of fuzzy matches over the names it was given.

    Posts `NotePicker.Picked` with the chosen entry's key when a match is chosen (Enter, or a
    click), and `NotePicker.Typed` when Enter is pressed on text that matches nothing, so the
    screen can resolve it another way (an exact path, say) or say what is wrong.
    """

    DEFAULT_CSS = """
    NotePicker {
        height: auto;
    }
    NotePicker > OptionList {
        display: none;
        height: auto;
        max-height: 8;
        border: none;
        padding: 0;
        background: $panel;
    }
    NotePicker.-open > OptionList {
        display: block;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "cursor(1)", "Next match", show=False),
        Binding("up", "cursor(-1)", "Previous match", show=False),
        Binding("escape", "close", "Close matches", show=False),
    ]

    class Picked(Message):
        """A match was chosen: `key` is the entry's key (for notes, the path or node id)."""

        def __init__(self, picker: NotePicker, key: str, name: str) -> None:
            super().__init__()
            self.picker = picker
            self.key = key
            self.name = name

        @property
        def control(self) -> NotePicker:
            return self.picker

    class Typed(Message):
        """Enter was pressed on text that matches no entry."""

        def __init__(self, picker: NotePicker, text: str) -> None:
            super().__init__()
            self.picker = picker
            self.text = text

        @property
        def control(self) -> NotePicker:
            return self.picker

    def __init__(
        self,
        placeholder: str = "note name, alias or path",
        *,
        id: str | None = None,
        paths: dict[str, str] | None = None,
    ) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        self.index: NameIndex | None = None
        self.paths: dict[str, str] = paths or {}  # key -> path shown beside a match
        self.key: str | None = None  # the entry picked, until the text is edited
        self.matches: list[Match] = []
        self._ranked_for = ""  # the text `matches` were ranked for
        self._shown_value: str | None = None  # a value set by picking: not a new query

    def compose(self) -> ComposeResult:
        yield Input(placeholder=self.placeholder)
        matches = OptionList()
        matches.can_focus = False  # focus stays in the input; ↑↓ move the highlight
        yield matches

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    @property
    def value(self) -> str:
        return self.input.value

    def set_index(self, index: NameIndex, paths: dict[str, str] | None = None) -> None:
        """The names to complete from (rebuilt by the screen when the index changes)."""
        self.index = index
        if paths is not None:
            self.paths = paths

    def set_pick(self, key: str | None, name: str) -> None:
        """Show `name` as the picked entry `key` (or plain text when key is None)."""
        self.key = key
        self._shown_value = name if key is not None else None
        self.input.value = name
        self.input.cursor_position = len(name)
        self._close()

    def focus_input(self) -> None:
        self.input.focus()

    # ---- completing

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if event.value == self._shown_value:
            return  # the text a pick put there: nothing new to complete
        self.key = None
        self._shown_value = None
        if not event.value.strip() or self.index is None:
            self._show(event.value, [])
            return
        self._rank(event.value)

    @work(thread=True, exclusive=True, group="note-picker")
    def _rank(self, query: str) -> None:
        # In a thread: ranking tens of thousands of names takes a few tens of milliseconds.
        assert self.index is not None
        found = self.index.search(query, limit=SHOWN)
        self.app.call_from_thread(self._show, query, found)

    def _show(self, query: str, found: list[Match]) -> None:
        if query != self.input.value or self.key is not None:
            return  # typed on since (a newer ranking is coming), or picked already
        self.matches = found
        self._ranked_for = query
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            Option(match_prompt(m, self.paths.get(m.key)), id=str(i)) for i, m in enumerate(found)
        )
        if found:
            options.highlighted = 0
        self.set_class(bool(found) and self.input.has_focus, "-open")

    def _close(self) -> None:
        self.remove_class("-open")

    def on_descendant_blur(self, _: events.DescendantBlur) -> None:
        self._close()

    def on_descendant_focus(self, _: events.DescendantFocus) -> None:
        if self.matches and self.key is None and self.input.value.strip():
            self.add_class("-open")

    def action_cursor(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self.has_class("-open"):
            if self.matches and self.key is None:
                self.add_class("-open")
            return
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def action_close(self) -> None:
        self._close()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return self.has_class("-open")  # else Escape belongs to the screen (going back)
        if action == "cursor":
            return bool(self.matches) and self.input.has_focus
        return True

    # ---- choosing

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.key is not None:  # already picked: Enter again means "go"
            self.post_message(self.Picked(self, self.key, self.input.value))
            return
        if not event.value.strip():
            return
        if self._ranked_for != event.value and self.index is not None:
            # Enter came before the ranking for this text did: rank now, here, so Enter
            # always picks from what was typed, never from an older list
            self._show(event.value, self.index.search(event.value, limit=SHOWN))
        if self.matches:
            at = self.query_one(OptionList).highlighted
            self._choose(self.matches[at if at is not None else 0])
        else:
            self.post_message(self.Typed(self, event.value))

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self._choose(self.matches[int(event.option.id)])

    def _choose(self, match: Match) -> None:
        self.set_pick(match.key, match.name)
        self.post_message(self.Picked(self, match.key, match.name))
