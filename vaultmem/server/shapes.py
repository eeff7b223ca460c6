"""The JSON shapes of the tools' answers (their output schemas), as TypedDicts: no MCP SDK here."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict  # pydantic reads field types only from this one on 3.11


class SearchHitOut(TypedDict):
    path: str
    title: str
    heading: str
    start_line: int
    end_line: int
    snippet: str
    score: float


class SearchOut(TypedDict):
    query: str
    mode: str
    results: list[SearchHitOut]
    notices: list[str]


class NoteTextOut(TypedDict):
    """Where the text came from; the text itself is the answer's second content block only
    (a note can be long: sending it twice would double what a client reads and pays for)."""

    path: str
    title: str
    heading: str | None
    start_line: int
    end_line: int
    chars: int
    truncated: bool
    headings: list[str]  # every heading of the note, to read another section next


class PersonaContextOut(TypedDict):
    """What a loaded persona is made of; its markdown is the answer's first content block."""

    slug: str
    path: str
    role: str
    budget: int
    used: int
    over_budget: bool
    usage: dict[str, int]
    left_out: list[str]
    parts: list[PersonaPartOut]


class PersonaPartOut(TypedDict):
    kind: str
    source: str
    heading: str | None
    chars: int


class BacklinkOut(TypedDict):
    path: str
    line: int
    relation: str
    anchor: str | None
    context: str


class BacklinksOut(TypedDict):
    note: str
    total: int
    backlinks: list[BacklinkOut]


class NodeOut(TypedDict):
    id: str
    title: str
    kind: str


class HopOut(TypedDict):
    src: str
    dst: str
    dst_title: str
    relation: str
    direction: Literal["-->", "<--"]


class EndOut(TypedDict):
    id: str
    linked_notes: int
    group_size: int


class ConnectionOut(TypedDict):
    start: NodeOut
    end: NodeOut
    found: bool
    hops: list[HopOut]
    why_not: str | None
    ends: list[EndOut]


class NeighborOut(TypedDict):
    id: str
    title: str
    kind: str
    distance: int


class NeighborsOut(TypedDict):
    note: str
    depth: int
    total: int
    neighbors: list[NeighborOut]


class WantedOut(TypedDict):
    name: str
    wanted_by: int
    linked_from: list[str]


class AliasLinkOut(TypedDict):
    path: str
    line: int
    written: str
    fix: str | None


class SuggestionOut(TypedDict):
    source: str
    target: str
    evidence: str


class GapsOut(TypedDict):
    notes: int
    totals: dict[str, int]
    orphans: list[str]
    dead_ends: list[str]
    wanted: list[WantedOut]
    alias_fixable: list[AliasLinkOut]
    weakly_linked: list[str]
    articulation_points: list[str]
    bridges: list[list[str]]
    isolated_clusters: list[list[str]]
    suggestions: list[SuggestionOut]
    expired: list[str]


class PersonaOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str | None
    budget: int
    aliases: list[str]


class PersonasOut(TypedDict):
    personas: list[PersonaOut]
