"""The list of search hits: title, heading, path, date and the snippet with its matches marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from vaultmem.search import HIGHLIGHT_END, HIGHLIGHT_START, Hit

SNIPPET_CHARS = 220  # about two lines of a wide terminal; the preview pane shows the rest


def highlighted(snippet: str, style: str = "bold reverse") -> Text:
    """A snippet as Rich text: the parts between the highlight markers get `style`."""
    text = Text()
    flat = " ".join(snippet.split())
    if len(flat) > SNIPPET_CHARS:
        flat = flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
    marked = False
    for part in flat.replace(HIGHLIGHT_END, HIGHLIGHT_START).split(HIGHLIGHT_START):
        if part:
            text.append(part, style=style if marked else "")
        marked = not marked
    return text


def heading_trail(title: str, header: str) -> str:
    """The hit's heading path without the note title it starts with: "Setup › Wiring"."""
    parts = [p.strip() for p in header.split(" > ") if p.strip()]
    if parts and parts[0] == title:
        parts = parts[1:]
    return " › ".join(parts)


def hit_text(hit: Hit, date: str | None) -> Text:
    """One hit as three lines: title › heading, path · date, snippet."""
    text = Text(hit.title, style="bold")
    trail = heading_trail(hit.title, hit.header)
    if trail:
        text.append(" › " + trail, style="italic")
    text.append("\n" + hit.path + (f" · {date[:10]}" if date else ""), style="dim")
    if hit.snippet.strip():
        text.append("\n")
        text.append_text(highlighted(hit.snippet))
    return text


class HitList(OptionList):
    """Search hits; the highlighted one drives the preview, Enter opens it."""

    DEFAULT_CSS = """
    HitList { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hits: tuple[Hit, ...] = ()

    def show_hits(self, hits: Sequence[Hit], dates: Mapping[str, str | None]) -> None:
        """Replace the list; the cursor goes to the first hit."""
        self.hits = tuple(hits)
        options: list[Option | None] = []
        for i, hit in enumerate(self.hits):
            if i:
                options.append(None)  # a separator line between hits
            options.append(Option(hit_text(hit, dates.get(hit.path)), id=str(i)))
        self.set_options(options)
        if self.hits:
            self.highlighted = 0

    @property
    def current(self) -> Hit | None:
        """The highlighted hit, if any."""
        option = self.highlighted_option
        if option is None or option.id is None:
            return None
        return self.hits[int(option.id)]

    def hit_of(self, option: Option) -> Hit | None:
        return self.hits[int(option.id)] if option.id is not None else None
