"""The keys panel (F1): vaultmem's keys for the screen you are on, then the app's, then moving.

Textual's own help panel listed every binding of the focused widget too, so Scroll Left, Scroll
Home and friends crowded out what vaultmem does. This one lists the keys that do something
here, described in vaultmem's words, and nothing of Textual's developer tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

# Letters for speed, on screens where nothing can be typed (browse, gaps, a note): a letter
# never leaves a screen where text might be typed, and the app binds none. F2-F5 work anywhere.
SWITCH_LETTERS: list[BindingType] = [
    Binding("s", "app.mode('search')", "Search", show=False),
    Binding("b", "app.mode('browse')", "Browse", show=False),
    Binding("g", "app.mode('gaps')", "Gaps", show=False),
    Binding("p", "app.mode('path')", "Path", show=False),
]
BACK_TO_SEARCH = Binding("escape", "app.mode('search')", "Back to search", show=False)

# Keys every list and pane has; the widgets' own bindings stay out of the panel.
MOVING = (
    ("↑ ↓", "Move in a list"),
    ("pgup pgdn home end", "Scroll"),
    ("enter", "Open or choose"),
    ("tab shift+tab", "The next or previous pane"),
    ("esc", "Back (to the search box, from a screen)"),
)


def screen_keys(app: App[object], screen: Screen[object]) -> list[tuple[str, str]]:
    """The keys `screen` binds, with what they do (each action once, in the screen's order)."""
    return _described(app, Binding.make_bindings(type(screen).BINDINGS))


def app_keys(app: App[object]) -> list[tuple[str, str]]:
    """The keys that work on every screen."""
    keys = _described(app, Binding.make_bindings(type(app).BINDINGS))
    return [*keys, ("^p", "Every command, and any note by name"), ("^q", "Quit")]


def _described(app: App[object], bindings: Iterable[Binding]) -> list[tuple[str, str]]:
    seen: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []
    for binding in bindings:
        if not binding.description or binding.system or binding.action == "quit":
            continue
        key = app.get_key_display(binding)
        if binding.action in seen:
            seen[binding.action].append(key)
            continue
        seen[binding.action] = [key]
        order.append((binding.action, binding.description))
    return [(" ".join(seen[action]), description) for action, description in order]


def keys_table(sections: Iterable[tuple[str, list[tuple[str, str]]]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for i, (title, rows) in enumerate(sections):
        if not rows:
            continue
        if i:
            table.add_row("", "")
        table.add_row(Text(title, style="bold underline"), "")
        for key, description in rows:
            table.add_row(key, description)
    return table


class KeysScreen(ModalScreen[None]):
    """What each key does here; escape, F1 or q closes it."""

    DEFAULT_CSS = """
    KeysScreen { align: center middle; }
    KeysScreen > VerticalScroll {
        width: 72; max-width: 100%; height: auto; max-height: 100%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    KeysScreen #keys { width: 100%; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1,question_mark", "close", "Close", show=False),
    ]

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under
        self.sections: list[tuple[str, list[tuple[str, str]]]] = []  # what the panel lists

    def compose(self) -> ComposeResult:
        name = type(self.under).__name__.removesuffix("Screen").lower() or "this"
        self.sections = [
            (f"On the {name} screen", screen_keys(self.app, self.under)),
            ("Everywhere", app_keys(self.app)),
            ("Moving around", list(MOVING)),
        ]
        with VerticalScroll():
            yield Static(keys_table(self.sections), id="keys")

    def action_close(self) -> None:
        self.dismiss(None)
