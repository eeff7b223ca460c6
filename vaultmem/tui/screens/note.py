"""The note screen: the note as markdown, its links, backlinks and tags, with history."""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast
from urllib.parse import quote

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, Label

from vaultmem.errors import NoteNotFound, VaultmemError
from vaultmem.tui.opener import open_outside
from vaultmem.tui.screens.keys import SWITCH_LETTERS
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.link_panel import LinkPanel
from vaultmem.tui.widgets.markdown_text import display_markdown, link_target
from vaultmem.tui.widgets.reindex_bar import ReindexBar
from vaultmem.tui.widgets.rendered_view import RenderedView
from vaultmem.vault import NoteInfo

if TYPE_CHECKING:
    from vaultmem.related import Related
    from vaultmem.tui.app import VaultmemApp
    from vaultmem.vault import NoteText


PAINT_WAIT = 0.5  # seconds the side panel's lookups wait for the note's first paint
RELATED_SHOWN = 8  # related notes listed in the side panel


def obsidian_url(vault_name: str, path: str) -> str:
    """Obsidian's URI for a note: `obsidian://open?vault=…&file=…` (file without `.md`)."""
    file = path[:-3] if path.lower().endswith(".md") else path
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(file, safe='')}"


# Editors that open a file at a line given as `+N` before it (the others get the file alone).
PLUS_LINE_EDITORS = frozenset(
    [
        "vi",
        "vim",
        "nvim",
        "gvim",
        "view",
        "nano",
        "pico",
        "emacs",
        "emacsclient",
        "micro",
        "kak",
        "joe",
        "jed",
        "ne",
        "mg",
        "ed",
        "ex",
        "vis",
        "mcedit",
        "amp",
    ]
)


def editor_command(
    file: Path, environ: dict[str, str] | os._Environ[str], line: int | None = None
) -> list[str]:
    """The command that edits `file`: $VISUAL, else $EDITOR (with its arguments), else vi; at
    `line` (`+N`) when the editor takes it."""
    editor = environ.get("VISUAL") or environ.get("EDITOR") or "vi"
    words = shlex.split(editor)
    at = [f"+{line}"] if line and words and Path(words[0]).name in PLUS_LINE_EDITORS else []
    return [*words, *at, str(file)]


@dataclass(frozen=True)
class Landing:
    """Where a search hit opens its note: the section's first line and heading, and the words
    to highlight."""

    line: int
    heading: str = ""  # the section's own heading (the last of its heading path)
    words: tuple[str, ...] = ()


class NoteScreen(Screen[None]):
    """One note at a time, with back/forward history; escape returns to where you came from."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("left_square_bracket,alt+left", "back", "Back"),
        Binding("right_square_bracket,alt+right", "forward", "Forward"),
        Binding("l", "focus_links", "Links"),
        Binding("m", "focus_text", "Text", show=False),
        Binding("e", "edit", "Edit"),
        Binding("slash", "find", "Find"),
        Binding("n", "find_next", "Next match", show=False),
        Binding("o", "obsidian", "Obsidian"),
        *SWITCH_LETTERS,  # nothing is typed on this screen
    ]

    def __init__(self, path: str, landing: Landing | None = None) -> None:
        super().__init__()
        self.landing = landing  # where the current note opened, from a search hit
        self.history: list[str] = [path]
        self.position = 0
        self.generation = -1
        self.info: NoteInfo | None = None
        self.gone = False
        self.shown: str | None = None  # the path whose text is set
        self.painted_path: str | None = None  # … and whose first screenful has been painted
        self.painted_at = 0.0
        self._first_paint = threading.Event()
        self._render_token = object()
        self._paint_pending: tuple[str, object] | None = None

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    @property
    def path(self) -> str:
        return self.history[self.position]

    def compose(self) -> ComposeResult:
        yield Label(self.path, id="note-title")
        with Horizontal(id="note-row"):
            yield RenderedView(id="note-body")
            yield LinkPanel(id="links")
        yield Input(placeholder="find in this note (enter: next, escape: done)", id="find")
        yield ReindexBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#note-body").focus()

    def on_descendant_focus(self) -> None:
        # a narrow terminal shows one pane: the links list while it has the focus
        self.set_class(isinstance(self.focused, LinkPanel), "-links-focused")

    def on_screen_resume(self) -> None:
        if self.generation != self.vaultmem.index_generation:
            self.reload()
        elif self._paint_pending is not None:
            self.call_after_refresh(self.painted, *self._paint_pending)
        self._paint_pending = None

    # ---- navigation

    def go(self, path: str, landing: Landing | None = None) -> None:
        """Show `path` (at `landing`, from a search hit), dropping any forward history."""
        self.landing = landing
        if path == self.path:
            self.reload()
            return
        del self.history[self.position + 1 :]
        self.history.append(path)
        self.position += 1
        self.query_one("#note-title", Label).update(path)  # the old title must not linger
        self.reload()
        if self.has_class("-narrow"):
            # one pane at a time: a note followed from the links panel shows its text
            self.query_one("#note-body").focus()

    def action_back(self) -> None:
        if self.position == 0:
            self.notify("no earlier note in this screen's history")
            return
        self.position -= 1
        self.landing = None
        self.reload()

    def action_forward(self) -> None:
        if self.position + 1 >= len(self.history):
            self.notify("no later note in this screen's history")
            return
        self.position += 1
        self.landing = None
        self.reload()

    def action_close(self) -> None:
        find = self.query_one("#find", Input)
        if find.has_class("-shown"):  # escape leaves the find box first
            self.close_find()
            return
        self.app.pop_screen()

    # ---- finding inside the note

    def action_find(self) -> None:
        find = self.query_one("#find", Input)
        find.add_class("-shown")
        find.focus()
        find.select_all()

    def close_find(self) -> None:
        find = self.query_one("#find", Input)
        find.remove_class("-shown")
        self.query_one("#note-body").focus()

    @on(Input.Submitted, "#find")
    def find_submitted(self, event: Input.Submitted) -> None:
        view = self.query_one(RenderedView)
        text = event.value.strip()
        if not text:
            self.close_find()
            return
        if self._found != text:
            self._found = text
            view.mark((text,))
            self._find_at = view.scroll_offset.y - 1
        self.action_find_next()

    _found = ""
    _find_at = -1

    def action_find_next(self) -> None:
        view = self.query_one(RenderedView)
        y = view.next_mark(self._find_at)
        if y is None:
            if self._found:
                self.notify(f"'{self._found}' is not in this note", severity="warning")
            return
        self._find_at = y
        view.scroll_line(y)

    def action_focus_links(self) -> None:
        self.query_one(LinkPanel).focus()

    def action_focus_text(self) -> None:
        self.query_one("#note-body").focus()

    # ---- loading

    def reload(self) -> None:
        """Read the note again from disk (now: one small file) and the index (on a worker)."""
        self.generation = self.vaultmem.index_generation
        self.painted_path = None
        path = self.path
        # On the UI thread: the file is read in a millisecond or two, and the screen's next
        # paint is then the new note, not the old one first (a full repaint more).
        try:
            note = self.vaultmem.vault.read_note(path)
        except (NoteNotFound, VaultmemError) as exc:
            self.show_gone(path, str(exc))
            return
        self._first_paint.clear()
        self.show_text(path, note)
        self.load_info(path)

    @work(thread=True, exclusive=True, group="note")
    def load_info(self, path: str) -> None:
        # The links and backlinks of a popular note take a while to gather (each backlink's
        # sentence is read from its file); gathered now, they would slow the first paint
        # through the GIL, so they wait for it (briefly: a hidden screen never paints).
        self._first_paint.wait(PAINT_WAIT)
        app = self.vaultmem
        try:
            info = app.vault.show(path)
        except VaultmemError:
            return  # the file is there but not indexed yet: the text alone until the reindex
        app.call_from_thread(self.show_info, path, info)
        try:
            found = app.vault.related(path, RELATED_SHOWN)
        except VaultmemError:
            return
        app.call_from_thread(self.show_related, path, found)

    def show_text(self, path: str, note: NoteText) -> bool:
        """Put the note's first screenful on screen; False when another note was asked for."""
        if path != self.path:
            return False
        self.gone = False
        self.remove_class("-gone")
        self.query_one("#note-title", Label).update(f"{note.title}  ·  {path}")
        self.sub_title = note.title
        token = self._render_token = object()  # a newer note (or reload) wins
        body = "\n".join(note.text.split("\n")[note.body_line - 1 :]).lstrip("\n")
        landing = self.landing
        self._found, self._find_at = "", -1
        self.query_one(RenderedView).show_markdown(
            display_markdown(body),
            marks=landing.words if landing else (),
            anchor=(landing.heading or None) if landing else None,
        )
        self.shown = path
        self.call_after_refresh(self.painted, path, token)
        return True

    @on(RenderedView.Rendered, "#note-body")
    def body_rendered(self) -> None:
        if self._paint_pending is not None and self.is_current:
            self.call_after_refresh(self.painted, *self._paint_pending)
            self._paint_pending = None

    def painted(self, path: str, token: object) -> None:
        """The note's first screenful is on screen (the rest is being appended)."""
        if token is not self._render_token:
            return
        if not self.is_current:  # shown before the screen was pushed: wait for its paint
            self._paint_pending = (path, token)
            return
        if not self.query_one(RenderedView).rendered_width:  # the text waits for its width
            self._paint_pending = (path, token)
            return
        self.painted_path = path
        self.painted_at = time.perf_counter()
        self._first_paint.set()

    def show_info(self, path: str, info: NoteInfo) -> None:
        if path != self.path or not self.query("#note-title"):
            return  # another note since, or the app is closing (its widgets are gone)
        self.info = info
        meta = [info.title]
        if info.date:
            meta.append(info.date)
        meta.append(path)
        if info.tags:
            meta.append(" ".join("#" + t for t in info.tags))
        self.query_one("#note-title", Label).update("  ·  ".join(meta))
        self.query_one(LinkPanel).show_note(info)

    def show_related(self, path: str, found: tuple[Related, ...]) -> None:
        if path != self.path or self.info is None or not self.query("#note-title"):
            return
        self.query_one(LinkPanel).show_related(found)

    def show_gone(self, path: str, message: str) -> None:
        if path != self.path:
            return
        self.gone = True
        self.info = None
        self.add_class("-gone")
        self.query_one("#note-title", Label).update(f"{path} is gone")
        self._render_token = object()
        self.query_one(RenderedView).show_markdown(
            f"**This note is no longer in the vault.**\n\n{message}\n\n"
            "Press `escape` to go back, or `[` for the previous note."
        )
        self.query_one(LinkPanel).clear_options()
        self.shown = self.painted_path = path

    # ---- following links

    @on(LinkPanel.Follow)
    def follow(self, event: LinkPanel.Follow) -> None:
        entry = event.entry
        if entry.kind == "note":
            self.go(entry.value)
        elif entry.kind == "tag":
            self.vaultmem.search_for(tag=entry.value)
        else:
            self.notify(
                f"'{entry.value}' is a wanted note: linked, but no file has that name yet",
                title="wanted",
            )

    @on(RenderedView.LinkClicked, "#note-body")
    def follow_clicked(self, event: RenderedView.LinkClicked) -> None:
        target = link_target(event.href)
        if target is None:
            self.open_outside(event.href, "a browser")  # a web link
            return
        try:
            path = self.vaultmem.vault.find_note(target)
        except VaultmemError as exc:
            self.notify(str(exc), severity="warning")
            return
        self.go(path)

    # ---- outside the app

    def action_edit(self) -> None:
        if self.gone:
            return
        try:  # the file as named on disk: macOS writes names in NFD, the index in NFC
            file = self.vaultmem.vault.note_file(self.path)
        except VaultmemError as exc:
            self.notify(str(exc), severity="error")
            return
        line = self.landing.line if self.landing else None
        command = editor_command(file, os.environ, line)
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except OSError as exc:
            self.notify(f"cannot run {command[0]}: {exc}", severity="error")
            return
        except SuspendNotSupported:  # a headless or web driver has no terminal to hand over
            self.notify("this terminal cannot hand over to an editor", severity="warning")
            return
        self.reload()

    def action_obsidian(self) -> None:
        if self.gone:
            return
        self.open_outside(obsidian_url(self.vaultmem.vault.root.name, self.path), "Obsidian")

    @work(thread=True, group="open-outside")
    def open_outside(self, url: str, where: str) -> None:
        """Hand `url` to the system's handler and say whether anything took it."""
        problem = open_outside(url)
        if problem is None:
            self.app.call_from_thread(self.notify, url, title=f"opening in {where}")
        else:
            self.app.call_from_thread(
                self.notify,
                f"{problem}. The link: {url}",
                title=f"nothing opened it in {where}",
                severity="warning",
                timeout=10,
            )
