"""Related notes: the notes most like one note, by meaning, shared links, co-citation and rare
shared tags, each with why.

Each kind of evidence is a number in [0, 1] (relative to the strongest of its kind among the
candidates) times its weight; a note's reasons say what each kind found. Links and tags count
by how rare they are: two notes that both link to a hub or carry a tag half the vault has are
barely alike, two that both link to a note only three others link to are.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem import store
from vaultmem.model import title_of

if TYPE_CHECKING:
    from vaultmem.vectors import VectorMatrix

WEIGHTS = {"meaning": 0.4, "links": 0.25, "cocited": 0.2, "tags": 0.15}
NEAREST = 200  # sections nearest to the note's mean vector, for the meaning evidence
HUB = 200  # a note linked from (or linking to) more notes than this says little: left out
COMMON_TAG = 0.2  # a tag on more than this share of the notes says little: left out
NAMED = 3  # the shared notes or tags named in a reason


@dataclass(frozen=True)
class Reason:
    kind: str  # meaning | links | cocited | tags
    strength: float  # what it added to the score
    detail: str  # "both link to A, B", "close in meaning (0.71)"
    shared: tuple[str, ...] = ()  # the notes or tags behind it


@dataclass(frozen=True)
class Related:
    path: str
    score: float
    reasons: tuple[Reason, ...] = field(default=())


def related(
    conn: store.Connection, path: str, limit: int = 10, matrix: VectorMatrix | None = None
) -> tuple[Related, ...]:
    """The notes most like `path`, best first (at most `limit`)."""
    evidence: dict[str, dict[str, float]] = defaultdict(dict)
    shared: dict[str, dict[str, list[tuple[float, str]]]] = defaultdict(lambda: defaultdict(list))
    similarity = _meaning(conn, path, matrix)
    for other, sim in similarity.items():
        evidence[other]["meaning"] = sim
    _coupling(conn, path, evidence, shared)
    _cocitation(conn, path, evidence, shared)
    _tags(conn, path, evidence, shared)
    evidence.pop(path, None)
    if not evidence:
        return ()
    top = {
        kind: max((e.get(kind, 0.0) for e in evidence.values()), default=0.0) for kind in WEIGHTS
    }
    out = []
    for other, found in evidence.items():
        reasons = []
        for kind, weight in WEIGHTS.items():
            value = found.get(kind, 0.0)
            if value <= 0 or top[kind] <= 0:
                continue
            names = tuple(n for _, n in sorted(shared[other][kind], reverse=True)[:NAMED])
            strength = weight * value / top[kind]
            reasons.append(Reason(kind, strength, _detail(kind, value, names), names))
        if reasons:
            out.append(Related(other, sum(r.strength for r in reasons), tuple(reasons)))
    out.sort(key=lambda r: (-r.score, r.path))
    return tuple(out[:limit])


def _detail(kind: str, value: float, names: tuple[str, ...]) -> str:
    listed = ", ".join(title_of(n) for n in names)
    if kind == "meaning":
        return f"close in meaning ({value:.2f})"
    if kind == "links":
        return f"both link to {listed}"
    if kind == "cocited":
        return f"linked together from {listed}"
    return "both tagged " + ", ".join(f"#{n}" for n in names)


def _meaning(conn: store.Connection, path: str, matrix: VectorMatrix | None) -> dict[str, float]:
    """Other notes by their section nearest to this note's mean vector (cosine)."""
    vector = store.note_vector(conn, path)
    if vector is None:
        return {}
    if matrix is not None and matrix.generation == store.generation(conn):
        import numpy as np  # the matrix holds numpy arrays: loaded already

        nearest = matrix.nearest(np.frombuffer(vector, dtype=np.float32), NEAREST)
    else:
        nearest = store.nearest_chunks(conn, vector, NEAREST)
    rows = store.chunk_rows(conn, [i for i, _ in nearest])
    out: dict[str, float] = {}
    for chunk_id, distance in nearest:
        if chunk_id in rows and distance is not None:
            other = rows[chunk_id].path
            out[other] = max(out.get(other, 0.0), 1.0 - float(distance))
    return {p: s for p, s in out.items() if s > 0}


def _rarity(degree: int) -> float:
    return 1.0 / math.log2(1 + max(1, degree))


def _coupling(
    conn: store.Connection,
    path: str,
    evidence: dict[str, dict[str, float]],
    shared: dict[str, dict[str, list[tuple[float, str]]]],
) -> None:
    """Notes linking to the same notes as this one (rarer targets count more)."""
    targets = store.related.link_targets(conn, path)
    degree = store.related.in_degrees(conn, targets)
    kept = [t for t in targets if degree.get(t, 0) <= HUB]
    for source, target in store.related.linking_to(conn, kept):
        if source == path:
            continue
        w = _rarity(degree.get(target, 1))
        evidence[source]["links"] = evidence[source].get("links", 0.0) + w
        shared[source]["links"].append((w, target))


def _cocitation(
    conn: store.Connection,
    path: str,
    evidence: dict[str, dict[str, float]],
    shared: dict[str, dict[str, list[tuple[float, str]]]],
) -> None:
    """Notes linked from the same notes as this one (sources with fewer links count more)."""
    sources = store.related.link_sources(conn, path)
    degree = store.related.out_degrees(conn, sources)
    kept = [s for s in sources if degree.get(s, 0) <= HUB]
    for source, target in store.related.linked_from(conn, kept):
        if target == path:
            continue
        w = _rarity(degree.get(source, 1))
        evidence[target]["cocited"] = evidence[target].get("cocited", 0.0) + w
        shared[target]["cocited"].append((w, source))


def _tags(
    conn: store.Connection,
    path: str,
    evidence: dict[str, dict[str, float]],
    shared: dict[str, dict[str, list[tuple[float, str]]]],
) -> None:
    """Notes carrying this note's rarer tags (inverse document frequency)."""
    total = store.related.note_count(conn)
    counts = dict(store.related.tags_with_counts(conn, path))
    kept = [t for t, n in counts.items() if 1 < n <= max(2, COMMON_TAG * total)]
    for other, tag in store.related.tagged(conn, kept):
        if other == path:
            continue
        w = math.log(total / counts[tag]) / math.log(max(total, 2))
        evidence[other]["tags"] = evidence[other].get("tags", 0.0) + w
        shared[other]["tags"].append((w, tag))
