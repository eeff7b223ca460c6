"""The link graph in the dialect: paths, neighbourhoods, clusters, cycles, fragile links, gaps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypedDict

from vaultmem.dialect.index import LinkProblemOut, link_problem
from vaultmem.dialect.refs import NodeOut, NoteRef, limited, node, note, notes

if TYPE_CHECKING:  # networkx loads with the graph's own code paths, not with every answer
    import networkx as nx

    from vaultmem import graph as link_graph
    from vaultmem.gaps import GapsReport

# --------------------------------------------------------------------------- the link graph


class PathEndOut(NodeOut):
    linked_notes: int | None  # without a path: the notes it links with (either way)
    group_size: int | None  # without a path: the size of its group of linked notes


# `from` is a Python keyword: these shapes are written in TypedDict's functional form.
HopOut = TypedDict(
    "HopOut",
    {"from": NodeOut, "to": NodeOut, "relation": str, "direction": Literal["-->", "<--"]},
)


class ConnectionOut(TypedDict):
    found: bool
    start: PathEndOut
    end: PathEndOut
    max_depth: int
    relations: list[str] | None  # the relations walked; null: every relation
    directed: bool
    hops: list[HopOut]
    why_not: str | None


def _end(graph_node: link_graph.GraphNode, degree: int | None, size: int | None) -> PathEndOut:
    return PathEndOut(**node(graph_node), linked_notes=degree, group_size=size)


def connection(c: link_graph.Connection) -> ConnectionOut:
    why = c.no_path
    prev = c.steps[0].node if c.steps else c.start
    hops: list[HopOut] = []
    for step in c.steps[1:]:
        assert step.hop is not None
        hops.append(
            {
                "from": node(prev),
                "to": node(step.node),
                "relation": step.hop.relation,
                "direction": step.hop.direction,
            }
        )
        prev = step.node
    return {
        "found": c.found,
        "start": _end(
            c.start,
            why.start_degree if why else None,
            why.start_component_size if why else None,
        ),
        "end": _end(
            c.end, why.end_degree if why else None, why.end_component_size if why else None
        ),
        "max_depth": c.max_depth,
        "relations": None if c.relations is None else list(c.relations),
        "directed": c.directed,
        "hops": hops,
        "why_not": " ".join(c.why_not()) or None,
    }


class NeighborOut(NodeOut):
    distance: int  # links away


class NeighborsOut(TypedDict):
    path: str | None  # the note looked around (null for a wanted note)
    title: str
    kind: str
    depth: int
    total: int  # every neighbour within depth, however many are listed
    neighbors: list[NeighborOut]


def neighbors(
    G: nx.DiGraph, center: str, depth: int, found: Sequence[tuple[str, int]], limit: int | None
) -> NeighborsOut:
    from vaultmem import graph as link_graph

    rows: list[NeighborOut] = [
        NeighborOut(**node(link_graph.node_of(G, other)), distance=distance)
        for other, distance in limited(found, limit)
    ]
    return {
        **node(link_graph.node_of(G, center)),
        "depth": depth,
        "total": len(found),
        "neighbors": rows,
    }


class ClusterOut(TypedDict):
    size: int
    hub: NoteRef  # the member linked with most others
    top_tags: list[str]
    members: list[NoteRef]


class ClustersOut(TypedDict):
    total: int
    clusters: list[ClusterOut]


def clusters(found: Sequence[link_graph.Cluster]) -> ClustersOut:
    return {
        "total": len(found),
        "clusters": [
            {
                "size": c.size,
                "hub": note(c.hub),
                "top_tags": list(c.top_tags),
                "members": notes(c.members),
            }
            for c in found
        ],
    }


class GroupOut(TypedDict):
    size: int
    members: list[NoteRef]


class CyclesOut(TypedDict):
    total: int
    cycles: list[GroupOut]


def group(members: Sequence[str]) -> GroupOut:
    return {"size": len(members), "members": notes(members)}


def cycles(found: Sequence[Sequence[str]]) -> CyclesOut:
    return {"total": len(found), "cycles": [group(c) for c in found]}


class ArticulationPointOut(NoteRef):
    pieces: int  # the parts its group splits into without it


class BridgeOut(TypedDict):
    ends: list[NoteRef]  # the two notes of the link, sorted by path


class FragileOut(TypedDict):
    articulation_points: list[ArticulationPointOut]
    bridges: list[BridgeOut]


def _points(points: Sequence[tuple[str, int]]) -> list[ArticulationPointOut]:
    return [ArticulationPointOut(**note(p), pieces=k) for p, k in points]


def _bridges(bridges: Sequence[tuple[str, str]]) -> list[BridgeOut]:
    return [{"ends": [note(a), note(b)]} for a, b in bridges]


def fragile(f: link_graph.Fragile) -> FragileOut:
    return {
        "articulation_points": _points(f.articulation_points),
        "bridges": _bridges(f.bridges),
    }


# --------------------------------------------------------------------------- knowledge gaps


class WantedOut(TypedDict):
    title: str  # the name the links use
    wanted_by: int  # how many notes link to it
    linked_from: list[NoteRef]


SuggestionOut = TypedDict("SuggestionOut", {"from": NoteRef, "to": NoteRef, "evidence": str})


class ExpiredOut(NoteRef):
    tier: str
    expired_at: str  # ISO 8601


class GapsOut(TypedDict):
    notes: int
    totals: dict[str, int]  # every class's full count, whatever the limit
    orphans: list[NoteRef]
    dead_ends: list[NoteRef]
    wanted: list[WantedOut]
    alias_fixable: list[LinkProblemOut]
    weakly_linked: list[NoteRef]
    articulation_points: list[ArticulationPointOut]
    bridges: list[BridgeOut]
    isolated_clusters: list[GroupOut]
    suggestions: list[SuggestionOut]
    expired: list[ExpiredOut]


def gaps(
    report: GapsReport, limit: int | None = None, linked_from_limit: int | None = None
) -> GapsOut:
    """The report, each class cut to `limit` rows (None: all), totals always whole."""

    def cut(rows: Sequence[Any]) -> Sequence[Any]:
        return limited(rows, limit)

    return {
        "notes": report.notes,
        "totals": report.totals(),
        "orphans": notes(cut(report.orphans)),
        "dead_ends": notes(cut(report.dead_ends)),
        "wanted": [
            {
                "title": w.name,
                "wanted_by": len(w.linked_from),
                "linked_from": notes(limited(w.linked_from, linked_from_limit)),
            }
            for w in cut(report.wanted)
        ],
        "alias_fixable": [link_problem(p) for p in cut(report.alias_fixable)],
        "weakly_linked": notes(cut(report.weakly_linked)),
        "articulation_points": _points(cut(report.articulation_points)),
        "bridges": _bridges(cut(report.bridges)),
        "isolated_clusters": [group(c) for c in cut(report.isolated_clusters)],
        "suggestions": [
            {"from": note(s.source), "to": note(s.target), "evidence": s.evidence}
            for s in cut(report.suggestions)
        ],
        "expired": [
            ExpiredOut(**note(e.path), tier=e.tier, expired_at=e.expired_at)
            for e in cut(report.expired)
        ],
    }
