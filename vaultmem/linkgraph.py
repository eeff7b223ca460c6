"""The link graph of a vault's current index: built from the store once per index generation
and cached by its owner (never in a module global), node lookup, cached communities."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import TYPE_CHECKING

from vaultmem import store
from vaultmem.errors import NoteNotFound
from vaultmem.index import Index
from vaultmem.notes import Notes
from vaultmem.resolver import name_key

if TYPE_CHECKING:
    import networkx as nx  # loaded with vaultmem.graph, when a graph is built: not on search

    from vaultmem import graph as link_graph

WANTED_PREFIX = "wanted:"


def build_graph(rows: store.GraphRows) -> nx.DiGraph:
    """The graph of files, wanted notes and links that the store's bulk rows describe."""
    from vaultmem import graph as link_graph

    tags: dict[str, list[str]] = {}
    for path, tag in rows.tags:
        tags.setdefault(path, []).append(tag)
    nodes = [
        link_graph.GraphNode(
            path, "note" if kind == "note" else "attachment", title, tuple(tags.get(path, ()))
        )
        for path, kind, title in rows.files
    ]
    wanted: dict[str, str] = {}
    edges: list[link_graph.GraphEdge] = []
    for src, dst, key, target, relation, embed in rows.links:
        if dst is None:
            dst = WANTED_PREFIX + key
            wanted.setdefault(dst, target)
        edges.append(link_graph.GraphEdge(src, dst, relation, bool(embed)))
    nodes += [link_graph.GraphNode(node, "wanted", title) for node, title in wanted.items()]
    return link_graph.build_graph(nodes, edges)


class LinkGraph:
    """The link graph of one index, rebuilt only when the index's generation moved on."""

    def __init__(self, index: Index, notes: Notes) -> None:
        self.index = index
        self.notes = notes
        self._cached: tuple[int, nx.DiGraph] | None = None
        # one build at a time: a second thread waits for the first build instead of redoing it
        self._lock = threading.Lock()

    def graph(self) -> nx.DiGraph:
        """The link graph of the current index, built once per index generation."""
        generation = self.index.generation()
        with self._lock:
            if self._cached is None or self._cached[0] != generation:
                self._cached = None  # one graph at a time: they can be large
                self._cached = (generation, build_graph(store.graph_rows(self.index.conn)))
            return self._cached[1]

    def forget(self) -> None:
        """Drop the cached graph (the next `graph()` builds it again)."""
        with self._lock:
            self._cached = None

    def node(self, ref: str) -> str:
        """A graph node id from a note's path, title or alias, or a wanted note's name."""
        try:
            return self.notes.find_note(ref)
        except NoteNotFound:
            wanted = WANTED_PREFIX + name_key(ref)
            if wanted in self.graph():
                return wanted
            raise

    def clusters(self, min_size: int = 3) -> list[link_graph.Cluster]:
        """Louvain communities (fixed seed), computed once per index generation and kept in
        the index itself (other processes reuse them)."""
        from vaultmem import graph as link_graph

        conn = self.index.conn
        generation = store.generation(conn)
        cached = store.get_meta(conn, "clusters")
        found: list[link_graph.Cluster] | None = None
        if cached:
            data = json.loads(cached)
            if data.get("generation") == generation:
                found = [link_graph.Cluster(tuple(m), h, tuple(t)) for m, h, t in data["clusters"]]
        if found is None:
            found = link_graph.clusters(self.graph(), min_size=1)
            payload = {
                "generation": generation,
                "clusters": [[c.members, c.hub, c.top_tags] for c in found],
            }
            with contextlib.suppress(store.OperationalError):  # a read-only index: no cache
                store.set_meta(conn, "clusters", json.dumps(payload, ensure_ascii=False))
        return [c for c in found if c.size >= min_size]
