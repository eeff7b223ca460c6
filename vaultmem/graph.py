"""The link graph: networkx analyses over notes, wanted notes and attachments (pure: no SQL, no files).

Every walk here is iterative (breadth-first, or networkx's non-recursive depth-first searches), so
a 50,000-note chain costs no more stack than a star. Nodes and edges enter the graph sorted, and
every result is sorted, so the same vault gives the same answer in any process.

Self-loops (a note linking to itself) stay in the graph `build_graph` returns, but no analysis
walks them: a note is never its own neighbour, path step or cycle, and linking only to itself
leaves a note an orphan.
"""  # noqa: E501 (the summary line above is the house's one-line "what", kept whole)

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, get_args

import networkx as nx

from vaultmem.errors import UsageError

NodeKind = Literal["note", "wanted", "attachment"]
Direction = Literal["-->", "<--"]

_KINDS = frozenset(get_args(NodeKind))


@dataclass(frozen=True)
class GraphNode:
    """A note or attachment (id: its vault path) or a wanted note (id: `wanted:<folded target>`)."""

    id: str
    kind: NodeKind
    title: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class GraphEdge:
    """One link occurrence; repeated links between the same two nodes add up on one graph edge."""

    src: str
    dst: str
    relation: str  # links_to, embeds, or a typed-link key such as depends_on
    embed: bool = False


def build_graph(nodes: Iterable[GraphNode], edges: Iterable[GraphEdge]) -> nx.DiGraph:
    """The directed link graph: node attrs kind/title/tags, edge attrs relations/count/embeds.

    One edge per (src, dst): `relations` maps each relation to its number of links, `count` is
    their sum and `embeds` how many of them were embeds. A link to a node not given is a
    ValueError: the caller's node list and link list disagree, which is a bug upstream.
    """
    by_id: dict[str, GraphNode] = {}
    for node in nodes:
        if node.kind not in _KINDS:
            raise ValueError(f"node {node.id!r} has unknown kind {node.kind!r}")
        if by_id.setdefault(node.id, node) != node:
            raise ValueError(f"node {node.id!r} given twice with different values")
    pairs: dict[tuple[str, str], Counter[str]] = {}
    embeds: Counter[tuple[str, str]] = Counter()
    for edge in edges:
        for end in (edge.src, edge.dst):
            if end not in by_id:
                raise ValueError(f"link {edge.src!r} -> {edge.dst!r}: no node {end!r}")
        pair = (edge.src, edge.dst)
        pairs.setdefault(pair, Counter())[edge.relation] += 1
        if edge.embed:
            embeds[pair] += 1

    # Sorted insertion makes adjacency order, and so Louvain and every tie, input-order free.
    G = nx.DiGraph()
    G.add_nodes_from(
        (n.id, {"kind": n.kind, "title": n.title, "tags": n.tags})
        for n in sorted(by_id.values(), key=lambda n: n.id)
    )
    G.add_edges_from(
        (
            src,
            dst,
            {
                "relations": dict(sorted(rels.items())),
                "count": rels.total(),
                "embeds": embeds[src, dst],
            },
        )
        for (src, dst), rels in sorted(pairs.items())
    )
    return G


# --- paths and neighbourhoods: every node kind, links walked either way unless directed ---------


@dataclass(frozen=True)
class Hop:
    """One step of a path: `-->` follows the link as written, `<--` walks it backwards."""

    src: str
    dst: str
    relation: str
    direction: Direction


@dataclass(frozen=True)
class PathResult:
    start: str
    end: str
    hops: tuple[Hop, ...]  # empty when start == end


@dataclass(frozen=True)
class NoPath:
    """Why no path was found: each end's link count and component, and the depth searched.

    Components are numbered over the whole graph (any relation, any direction), largest first
    (ties: smallest member id), so equal numbers mean the ends are linked, just not within
    `max_depth` hops or not along the relations and direction asked for.
    """

    start: str
    end: str
    start_degree: int  # distinct nodes linked to or from, itself excluded
    end_degree: int
    start_component: int  # 0 is the largest component
    end_component: int
    max_depth: int
    start_component_size: int = 1
    end_component_size: int = 1

    @property
    def connected(self) -> bool:
        """Whether the ends share a component: a deeper or less filtered walk may join them."""
        return self.start_component == self.end_component


def _walkable(data: Mapping[str, Any], allowed: frozenset[str] | None) -> bool:
    return allowed is None or not allowed.isdisjoint(data["relations"])


def _relation(data: Mapping[str, Any], allowed: frozenset[str] | None) -> str | None:
    """The edge's most frequent walkable relation (ties: alphabetical), None when none is."""
    counts: dict[str, int] = data["relations"]
    ranked = [(-n, rel) for rel, n in counts.items() if allowed is None or rel in allowed]
    return min(ranked)[1] if ranked else None


def _steps(G: nx.DiGraph, node: str, allowed: frozenset[str] | None, directed: bool) -> list[str]:
    """The nodes one walkable link from `node`, sorted: the order breadth-first search visits."""
    found = {v for v, data in G.succ[node].items() if v != node and _walkable(data, allowed)}
    if not directed:
        found.update(
            u for u, data in G.pred[node].items() if u != node and _walkable(data, allowed)
        )
    return sorted(found)


def _hop(G: nx.DiGraph, src: str, dst: str, allowed: frozenset[str] | None) -> Hop:
    """The hop src→dst, as written when that link is walkable, else walking dst→src backwards."""
    if G.has_edge(src, dst):
        relation = _relation(G.edges[src, dst], allowed)
        if relation is not None:
            return Hop(src, dst, relation, "-->")
    relation = _relation(G.edges[dst, src], allowed)
    assert relation is not None, "the search only walks walkable links"
    return Hop(src, dst, relation, "<--")


def _require(G: nx.DiGraph, *ids: str) -> None:
    for node in ids:
        if node not in G:
            raise KeyError(node)  # the front-end turns this into "no note called ..."


def shortest_path(
    G: nx.DiGraph,
    start: str,
    end: str,
    max_depth: int = 5,
    relations: Collection[str] | None = None,
    directed: bool = False,
) -> PathResult | NoPath:
    """The fewest-hop path from start to end of at most `max_depth` hops, or why there is none.

    Links are walked either way unless `directed`; `relations` limits which links may be walked.
    Among equally short paths the one whose node ids, read from `start`, sort first wins: the
    search visits each node's neighbours in id order and keeps the first way it reached a node.
    A hop reports its link's most frequent relation (ties: alphabetical), and `-->` when the
    nodes link both ways. Unknown ids raise KeyError(id).
    """
    _require(G, start, end)
    if start == end:
        return PathResult(start, end, ())
    allowed = None if relations is None else frozenset(relations)
    came_from = {start: start}
    frontier = [start]
    for _ in range(max_depth):
        reached: list[str] = []
        for node in frontier:
            for step in _steps(G, node, allowed, directed):
                if step in came_from:
                    continue
                came_from[step] = node
                if step == end:
                    return _path(G, came_from, start, end, allowed)
                reached.append(step)
        if not reached:
            break
        frontier = reached
    return _no_path(G, start, end, max_depth)


def _path(
    G: nx.DiGraph,
    came_from: dict[str, str],
    start: str,
    end: str,
    allowed: frozenset[str] | None,
) -> PathResult:
    nodes = [end]
    while nodes[-1] != start:
        nodes.append(came_from[nodes[-1]])
    nodes.reverse()
    hops = tuple(_hop(G, a, b, allowed) for a, b in pairwise(nodes))
    return PathResult(start, end, hops)


def _degree(G: nx.DiGraph, node: str) -> int:
    return len((G.succ[node].keys() | G.pred[node].keys()) - {node})


def _components(G: nx.DiGraph) -> dict[str, tuple[int, int]]:
    """node -> (component number, component size), numbered largest first (ties: min id).

    Kept in G.graph: a graph is built once per index generation and never changed after, so
    every failed path search on it can share one pass over the components.
    """
    cached: dict[str, tuple[int, int]] | None = G.graph.get("_components")
    if cached is None or len(cached) != G.number_of_nodes():
        ordered = sorted(nx.weakly_connected_components(G), key=lambda c: (-len(c), min(c)))
        cached = {n: (i, len(c)) for i, c in enumerate(ordered) for n in c}
        G.graph["_components"] = cached
    return cached


def _no_path(G: nx.DiGraph, start: str, end: str, max_depth: int) -> NoPath:
    components = _components(G)
    start_at, start_size = components[start]
    end_at, end_size = components[end]
    return NoPath(
        start=start,
        end=end,
        start_degree=_degree(G, start),
        end_degree=_degree(G, end),
        start_component=start_at,
        end_component=end_at,
        max_depth=max_depth,
        start_component_size=start_size,
        end_component_size=end_size,
    )


def neighbors(
    G: nx.DiGraph, node: str, depth: int = 1, attachments: bool = True
) -> list[tuple[str, int]]:
    """Nodes within `depth` links of `node`, either direction, as (id, distance): nearest first.

    Ties sort by id; `node` itself is left out. Without `attachments`, attachments are neither
    listed nor walked through (an icon embedded by a hundred notes would make them all
    neighbours). An unknown id raises KeyError(id).
    """
    _require(G, node)
    seen = {node}
    frontier = [node]
    found: list[tuple[str, int]] = []
    kinds = G.nodes.data("kind")
    for distance in range(1, depth + 1):
        reached = {
            other
            for current in frontier
            for other in (*G.succ[current], *G.pred[current])
            if other not in seen and (attachments or kinds[other] != "attachment")
        }
        if not reached:
            break
        seen |= reached
        frontier = sorted(reached)
        found.extend((other, distance) for other in frontier)
    return found


# --- structure: the undirected note-only graph (wanted notes and attachments dropped) ----------


def _note_graph(G: nx.DiGraph) -> nx.Graph:
    """Notes only, links undirected, self-loops dropped (node and edge order follow G's)."""
    H = nx.Graph()
    H.add_nodes_from(n for n, kind in G.nodes(data="kind") if kind == "note")
    H.add_edges_from((u, v) for u, v in G.edges if u != v and u in H and v in H)
    return H


@dataclass(frozen=True)
class Cluster:
    """A community of notes that link more among themselves than to the rest of the vault."""

    members: tuple[str, ...]  # sorted ids
    hub: str  # the member with most distinct linked notes (ties: smallest id)
    top_tags: tuple[str, ...]  # up to 3, most members first (ties: alphabetical)

    @property
    def size(self) -> int:
        return len(self.members)


def clusters(G: nx.DiGraph, min_size: int = 3, seed: int = 42) -> list[Cluster]:
    """Louvain communities of the undirected note graph with at least `min_size` notes.

    The seed is fixed and the graph's order sorted, so a vault always clusters the same way.
    Sorted by size (largest first), then hub.
    """
    # Slow spots of networkx 3.6's pure-Python Louvain, worth caching around: seconds on a
    # 14k-note vault, and a long bare chain (thousands of notes, one link each way, nothing
    # else) crawls on round-off ties in its gain test (networkx#8739, fixed after 3.6.1).
    H = _note_graph(G)
    found = []
    for community in nx.community.louvain_communities(H, seed=seed):
        if len(community) < min_size:
            continue
        members = tuple(sorted(community))
        hub = min(members, key=lambda n: (-H.degree(n), n))
        # A note tagged twice with one tag still counts once.
        tags = Counter(tag for n in members for tag in set(G.nodes[n]["tags"]))
        top = sorted(tags.items(), key=lambda item: (-item[1], item[0]))[:3]
        found.append(Cluster(members, hub, tuple(tag for tag, _ in top)))
    return sorted(found, key=lambda c: (-c.size, c.hub))


def cycles(G: nx.DiGraph) -> list[tuple[str, ...]]:
    """Groups of notes that reach each other by links as written (strongly connected, 2+ notes).

    Each group sorted; groups largest first, then by first id.
    """
    # A plain copy, not G.subgraph(): walking a filtered view costs three times as much.
    notes = nx.DiGraph()
    notes.add_nodes_from(n for n, kind in G.nodes(data="kind") if kind == "note")
    notes.add_edges_from((u, v) for u, v in G.edges if u != v and u in notes and v in notes)
    found = [tuple(sorted(c)) for c in nx.strongly_connected_components(notes) if len(c) > 1]
    return sorted(found, key=lambda c: (-len(c), c[0]))


@dataclass(frozen=True)
class Fragile:
    """Where the note graph hangs by a thread."""

    # (note, pieces): removing the note splits its component into `pieces` parts
    articulation_points: tuple[tuple[str, int], ...]
    bridges: tuple[
        tuple[str, str], ...
    ]  # links whose removal splits a component, (a, b) with a < b


def fragile(G: nx.DiGraph) -> Fragile:
    """Articulation points (most pieces first, then id) and bridges (sorted) of the note graph."""
    H = _note_graph(G)
    # One biconnected pass gives both answers: removing a note leaves one piece per block it
    # belongs to, and a block of exactly two notes is a single link, i.e. a bridge. This avoids
    # a search per articulation point, which on a long chain would be quadratic.
    blocks_of: Counter[str] = Counter()
    bridges = []
    for block in nx.biconnected_components(H):
        blocks_of.update(block)
        if len(block) == 2:
            a, b = sorted(block)
            bridges.append((a, b))
    points = sorted(((n, k) for n, k in blocks_of.items() if k > 1), key=lambda p: (-p[1], p[0]))
    return Fragile(tuple(points), tuple(sorted(bridges)))


# --- knowledge gaps -----------------------------------------------------------------------------


def _notes(G: nx.DiGraph) -> list[str]:
    return sorted(n for n, kind in G.nodes(data="kind") if kind == "note")


def orphans(G: nx.DiGraph) -> list[str]:
    """Notes with no link at all, in or out, to or from anything but themselves (sorted).

    A note whose only links go to wanted notes or attachments is not an orphan: its author did
    link it somewhere (Obsidian's graph draws those links too); `weakly_linked` and the gaps
    report say how it sits among notes. A link to itself alone leaves a note an orphan.
    """
    return [
        n for n in _notes(G) if all(v == n for v in G.succ[n]) and all(u == n for u in G.pred[n])
    ]


def dead_ends(G: nx.DiGraph) -> list[str]:
    """Notes another note links to that link to no other note themselves (sorted).

    Links out to wanted notes or attachments do not lead anywhere readable, so they don't count.
    """
    kind = G.nodes(data="kind")
    return [
        n
        for n in _notes(G)
        if any(u != n and kind[u] == "note" for u in G.pred[n])
        and not any(v != n and kind[v] == "note" for v in G.succ[n])
    ]


def weakly_linked(G: nx.DiGraph) -> list[str]:
    """Notes linked (either way) with exactly one other note (sorted)."""
    H = _note_graph(G)
    return sorted(n for n in H if H.degree(n) == 1)


def wanted_ranked(G: nx.DiGraph) -> list[tuple[str, int]]:
    """Wanted notes with how many distinct notes link to them: most wanted first, then id."""
    kind = G.nodes(data="kind")
    ranked = [
        (n, sum(1 for u in G.pred[n] if kind[u] == "note"))
        for n, k in G.nodes(data="kind")
        if k == "wanted"
    ]
    return sorted(ranked, key=lambda item: (-item[1], item[0]))


def isolated_clusters(G: nx.DiGraph, max_size: int = 5) -> list[tuple[str, ...]]:
    """Small islands: linked groups of 2..max_size notes cut off from the main body of notes.

    The largest component (ties: the one holding the smallest id) is the main body and is never
    reported, even when small. Single notes are orphans' business. Each group sorted; groups
    largest first, then by first id.
    """
    H = _note_graph(G)
    components = sorted(
        (tuple(sorted(c)) for c in nx.connected_components(H)), key=lambda c: (-len(c), c[0])
    )
    return [c for c in components[1:] if 2 <= len(c) <= max_size]


# --- the answer to "how do these two connect", as every front-end shows it ----------------------


def node_of(G: nx.DiGraph, node: str) -> GraphNode:
    """The graph's node `node` as a value (unknown ids raise KeyError(id))."""
    _require(G, node)
    data = G.nodes[node]
    return GraphNode(node, data["kind"], str(data["title"]), tuple(data.get("tags", ())))


def label(node: GraphNode) -> str:
    """How a sentence names a node: its title, marked when it is a wanted note."""
    return f"{node.title} (wanted)" if node.kind == "wanted" else node.title


@dataclass(frozen=True)
class PathStep:
    """One line of a path: the node reached, and the hop that reached it (None: the start)."""

    node: GraphNode
    hop: Hop | None

    @property
    def arrow(self) -> str | None:
        """`-->links_to`, `<--depends_on`…: the hop's direction and relation, or None."""
        return None if self.hop is None else f"{self.hop.direction}{self.hop.relation}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


@dataclass(frozen=True)
class Connection:
    """How two nodes connect: the path step by step, or why there is none (`why_not`)."""

    start: GraphNode
    end: GraphNode
    max_depth: int
    relations: tuple[str, ...] | None  # the relations walked; None: every relation
    directed: bool
    steps: tuple[PathStep, ...]  # the start first; empty when there is no path
    no_path: NoPath | None

    @property
    def found(self) -> bool:
        return self.no_path is None

    @property
    def hops(self) -> tuple[Hop, ...]:
        return tuple(step.hop for step in self.steps if step.hop is not None)

    def why_not(self) -> tuple[str, ...]:
        """Why there is no path, a sentence a line (empty when there is one)."""
        why = self.no_path
        if why is None:
            return ()
        a, b = label(self.start), label(self.end)
        lines = [f"No path from {a} to {b} within {_plural(self.max_depth, 'hop')}."]
        for name, degree, size in (
            (a, why.start_degree, why.start_component_size),
            (b, why.end_degree, why.end_component_size),
        ):
            lines.append(f"{name}: {_plural(degree, 'linked note')}, in a group of {size}.")
        if not why.connected:
            lines.append("They are in separate groups: no chain of links joins them.")
        elif self.relations is None and not self.directed:
            lines.append("They are linked, only further apart than that: allow more hops.")
        else:
            limits = [
                *(["along those relations"] if self.relations is not None else []),
                *(["following links only as written"] if self.directed else []),
            ]
            relax = [
                "allow more hops",
                *(["more relations"] if self.relations is not None else []),
                *(["both directions"] if self.directed else []),
            ]
            lines.append(
                f"They are linked, but not within {_plural(self.max_depth, 'hop')} "
                f"{', '.join(limits)}: {', '.join(relax[:-1])} or {relax[-1]}."
            )
        return tuple(lines)


def connect(
    G: nx.DiGraph,
    start: str,
    end: str,
    max_depth: int = 5,
    relations: Collection[str] | None = None,
    directed: bool = False,
) -> Connection:
    """`shortest_path` as an answer to show: named nodes, steps with arrows, or why not.
    A relation no link carries is refused (a typo, or another case: `Links_To`), rather than
    answered with "no path along those relations"."""
    if relations is not None:
        _known_relations(G, relations)
    result = shortest_path(
        G, start, end, max_depth=max_depth, relations=relations, directed=directed
    )
    a, b = node_of(G, start), node_of(G, end)
    walked = None if relations is None else tuple(sorted(set(relations)))
    if isinstance(result, NoPath):
        return Connection(a, b, max_depth, walked, directed, (), result)
    steps = (PathStep(a, None), *(PathStep(node_of(G, hop.dst), hop) for hop in result.hops))
    return Connection(a, b, max_depth, walked, directed, steps, None)


def _known_relations(G: nx.DiGraph, relations: Collection[str]) -> None:
    present: set[str] = set()
    for _, _, data in G.edges(data=True):
        present.update(data["relations"])
    unknown = sorted(set(relations) - present)
    if unknown:
        known = ", ".join(sorted(present)[:20]) or "none: the vault has no links"
        raise UsageError(
            f"no link has the relation {', '.join(map(repr, unknown))}"
            f" (the relations links carry here: {known})"
        )
