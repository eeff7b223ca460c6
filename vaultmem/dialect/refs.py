"""How every answer names a note (`path` with `title` beside it) or a node of the link graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic reads these on Python 3.11

from vaultmem.model import title_of

if TYPE_CHECKING:  # networkx loads with the graph's own code paths, not with every answer
    from vaultmem import graph as link_graph


class NoteRef(TypedDict):
    """A note (or attachment) as every answer names it: its vault path, its title beside it."""

    path: str
    title: str


class NodeOut(TypedDict):
    """A node of the link graph; a wanted note (linked to, not written yet) has no path."""

    path: str | None
    title: str
    kind: str  # note, attachment or wanted


def note(path: str) -> NoteRef:
    return {"path": path, "title": title_of(path)}


def notes(paths: Sequence[str]) -> list[NoteRef]:
    return [note(p) for p in paths]


def node(graph_node: link_graph.GraphNode) -> NodeOut:
    wanted = graph_node.kind == "wanted"
    return {
        "path": None if wanted else graph_node.id,
        "title": graph_node.title,
        "kind": graph_node.kind,
    }


def limited(rows: Sequence[Any], limit: int | None) -> Sequence[Any]:
    return rows if limit is None else rows[:limit]


def heading_or_none(text: str | None) -> str | None:
    return text or None  # a section before any heading has none: null, never ""
