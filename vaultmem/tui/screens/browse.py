"""Browse: the folder tree, nested tags and recent notes, with counts from the index."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import OptionList, TabbedContent, TabPane, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from vaultmem.errors import VaultmemError
from vaultmem.tui.screens.keys import BACK_TO_SEARCH, SWITCH_LETTERS
from vaultmem.tui.widgets.key_bar import KeyBar
from vaultmem.tui.widgets.reindex_bar import ReindexBar

if TYPE_CHECKING:
    from vaultmem.tui.app import VaultmemApp
    from vaultmem.vault import FolderCount, NoteSummary, TagCount


@dataclass(frozen=True)
class Place:
    """What a tree node stands for."""

    kind: Literal["folder", "note", "tag"]
    value: str  # folder path ("" for the root), note path, or tag


@dataclass(frozen=True)
class Catalogue:
    """Everything browse shows, read in one worker: folders, tags, recent notes."""

    folders: dict[str, int]  # folder -> notes in it and below
    subfolders: dict[str, list[str]]  # folder -> its direct subfolders, sorted
    notes_in: dict[str, list[NoteSummary]]  # folder -> notes directly in it, by title
    tags: dict[str, int]
    subtags: dict[str, list[str]]
    recent: tuple[NoteSummary, ...] = field(default_factory=tuple)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def catalogue(
    folders: tuple[FolderCount, ...],
    tags: tuple[TagCount, ...],
    notes: tuple[NoteSummary, ...],
    recent: tuple[NoteSummary, ...],
) -> Catalogue:
    """Group the index's counts into parent -> children maps the trees expand lazily."""
    counts = {f.path: f.notes for f in folders}
    sub: dict[str, list[str]] = defaultdict(list)
    for path in counts:
        if path:
            sub[_parent(path)].append(path)
    notes_in: dict[str, list[NoteSummary]] = defaultdict(list)
    for note in notes:
        notes_in[_parent(note.path)].append(note)
    tag_counts = {t.tag: t.notes for t in tags}
    subtags: dict[str, list[str]] = defaultdict(list)
    for tag in tag_counts:
        subtags[_parent(tag)].append(tag)
    return Catalogue(
        counts,
        {k: sorted(v, key=str.lower) for k, v in sub.items()},
        {k: sorted(v, key=lambda n: n.title.lower()) for k, v in notes_in.items()},
        tag_counts,
        {k: sorted(v, key=str.lower) for k, v in subtags.items()},
        recent,
    )


class BrowseScreen(Screen[None]):
    """Enter opens a note or expands a folder; `f` searches inside the folder or tag."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "search_here", "Search here"),
        Binding("1", "tab('folders')", "Folders", show=False),
        Binding("2", "tab('tags')", "Tags", show=False),
        Binding("3", "tab('recent')", "Recent", show=False),
        BACK_TO_SEARCH,
        *SWITCH_LETTERS,  # nothing is typed on this screen
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.generation = -1
        self.catalogue: Catalogue | None = None

    @property
    def vaultmem(self) -> VaultmemApp:
        return cast("VaultmemApp", self.app)

    def compose(self) -> ComposeResult:
        with TabbedContent(id="browse-tabs"):
            with TabPane("Folders", id="folders"):
                yield Tree[Place]("vault", Place("folder", ""), id="folder-tree")
            with TabPane("Tags", id="tags"):
                yield Tree[Place]("tags", Place("tag", ""), id="tag-tree")
            with TabPane("Recent", id="recent"):
                yield OptionList(id="recent-list")
        yield ReindexBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#tag-tree", Tree).auto_expand = False  # Enter filters, space expands

    def on_screen_resume(self) -> None:
        if self.generation != self.vaultmem.index_generation:
            self.reload()
        self.query_one("#folder-tree", Tree).focus()

    def reload(self) -> None:
        self.generation = self.vaultmem.index_generation
        self.load()

    @work(thread=True, exclusive=True, group="browse")
    def load(self) -> None:
        app = self.vaultmem
        vault = app.vault
        try:
            found = catalogue(
                vault.folders(), vault.tag_counts(), vault.note_names(), vault.recent(50)
            )
        except VaultmemError as exc:
            app.call_from_thread(self.notify, str(exc), severity="error")
            return
        app.call_from_thread(self.show_catalogue, found)

    def show_catalogue(self, found: Catalogue) -> None:
        self.catalogue = found
        folders = self.query_one("#folder-tree", Tree)
        folders.clear()
        folders.root.set_label(
            Text(f"{self.vaultmem.vault.root.name} ({found.folders.get('', 0)})")
        )
        self._fill_folder(folders.root)
        folders.root.expand()
        tags = self.query_one("#tag-tree", Tree)
        tags.clear()
        tags.root.set_label(Text(f"tags ({len(found.tags)})"))
        self._fill_tag(tags.root)
        tags.root.expand()
        recent = self.query_one("#recent-list", OptionList)
        recent.set_options(
            Option(Text(n.title).append(f"  {n.path} · {_when(n.mtime)}", style="dim"), id=n.path)
            for n in found.recent
        )
        if found.recent:
            recent.highlighted = 0

    def _fill_folder(self, node: TreeNode[Place]) -> None:
        found = self.catalogue
        assert found is not None and node.data is not None
        folder = node.data.value
        for sub in found.subfolders.get(folder, []):
            name = sub.rsplit("/", 1)[-1]
            node.add(Text(f"{name}/ ({found.folders[sub]})"), Place("folder", sub))
        for note in found.notes_in.get(folder, []):
            node.add_leaf(Text(note.title), Place("note", note.path))

    def _fill_tag(self, node: TreeNode[Place]) -> None:
        found = self.catalogue
        assert found is not None and node.data is not None
        for tag in found.subtags.get(node.data.value, []):
            label = Text(f"#{tag.rsplit('/', 1)[-1]} ({found.tags[tag]})")
            if found.subtags.get(tag):
                node.add(label, Place("tag", tag))
            else:
                node.add_leaf(label, Place("tag", tag))

    @on(Tree.NodeExpanded)
    def fill_on_expand(self, event: Tree.NodeExpanded[Place]) -> None:
        node = event.node
        if node.children or node.data is None or node.is_root:
            return  # filled already: children are added once, on first expansion
        if node.data.kind == "folder":
            self._fill_folder(node)
        elif node.data.kind == "tag":
            self._fill_tag(node)

    @on(Tree.NodeSelected)
    def node_selected(self, event: Tree.NodeSelected[Place]) -> None:
        place = event.node.data
        if place is None:
            return
        if place.kind == "note":
            self.vaultmem.open_note(place.value)
        elif place.kind == "tag" and place.value:
            self.vaultmem.search_for(tag=place.value)

    @on(OptionList.OptionSelected, "#recent-list")
    def open_recent(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.vaultmem.open_note(event.option.id)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        target = {"folders": "#folder-tree", "tags": "#tag-tree", "recent": "#recent-list"}[tab]
        self.query_one(target).focus()

    def action_search_here(self) -> None:
        tree = self.focused
        if not isinstance(tree, Tree) or tree.cursor_node is None:
            return
        place = tree.cursor_node.data
        if place is None:
            return
        if place.kind == "folder":
            self.vaultmem.search_for(folder=place.value)
        elif place.kind == "tag" and place.value:
            self.vaultmem.search_for(tag=place.value)
        elif place.kind == "note":
            parent = _parent(place.value)
            self.vaultmem.search_for(folder=parent)


def _when(mtime: float) -> str:
    return dt.datetime.fromtimestamp(mtime).strftime("%Y-%m-%d %H:%M")
