"""Re-ranking the top hits with a stronger meaning model: all-MiniLM-L6-v2, in numpy.

The first stage (keywords, the vault's embedding model, the ranking signals) ranks every
candidate note; this step reads the best few again. Each of the top `depth` notes is scored by
how close in meaning to the query its shown section or its note's first section is (the closer
of the two; each read as title, heading path and plain text, cut to `tokens` tokens), by
all-MiniLM-L6-v2 (vaultmem/encoder.py: packaged weights, no download).
That similarity, scaled between the lowest and highest of those notes, is added to each note's
score at `weight`, and `--explain` shows it as `rerank`. Notes below the depth keep their
order after the re-ranked ones.

The passages' vectors are kept (by the hash of their text) for the life of the process, so a
long-running front-end (the TUI, the MCP server) embeds a section once. What it earns and what
it costs are measured in docs/BENCHMARKS.md (bench/rerank.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from vaultmem import store
    from vaultmem.encoder import MiniLM
    from vaultmem.ranking import Ranked

Array = NDArray[np.float32]


class PassageModel(Protocol):
    """What the re-ranker asks of its model: MiniLM (vaultmem/encoder.py), or a stand-in."""

    def embed(self, texts: Sequence[str], threads: int = ..., max_tokens: int = ...) -> Array:
        """One vector per text, each text cut to `max_tokens` tokens."""
        ...


# Measured on the MDN dev set, LoCoMo, SciFact and LongMemEval (docs/BENCHMARKS.md)
DEPTH = 20  # notes read again
WEIGHT = 0.5  # the similarity's share, beside a first-stage score whose best note is ~1-2
TOKENS = 64  # a passage's words past this are not read
CACHE_SIZE = 20_000  # passages' vectors kept per process (~30 MB at 384 floats)
PASSAGE_CHARS = 2_000  # characters of a section read before tokenising (~4 per token)


@dataclass(frozen=True)
class Settings:
    depth: int = DEPTH
    weight: float = WEIGHT
    tokens: int = TOKENS


class VectorCache:
    """Unit vectors by text hash, the least recently used dropped past `size`."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[str, Array] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Array | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is not None:
                self._items.move_to_end(key)
            return vector

    def __setitem__(self, key: str, vector: Array) -> None:
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def passage(title: str, heading: str, body: str) -> str:
    """What the model reads for a hit: its note's title, the section's heading path, its text
    as plain text (no markdown syntax, which the model was not trained on)."""
    from vaultmem.search import plain_text

    head = " › ".join(p for p in dict.fromkeys((title, heading)) if p)
    text = plain_text(body[:PASSAGE_CHARS])
    return f"{head}\n{text}" if head else text


class Reranker:
    """Scores the top hits by all-MiniLM-L6-v2's similarity to the query and re-orders them.
    `model` stands in for the packaged MiniLM (tests); `cache` keeps passages' vectors."""

    def __init__(
        self,
        settings: Settings = Settings(),
        model: Callable[[], PassageModel] | None = None,
        cache: VectorCache | MutableMapping[str, Array] | None = None,
    ) -> None:
        self.settings = settings
        self._model = model
        self.cache: VectorCache | MutableMapping[str, Array] = (
            cache if cache is not None else VectorCache()
        )

    def embed(self, texts: Sequence[str]) -> Array:
        """Unit vectors for texts, each cut to the settings' tokens; cached by text."""
        keys = [_key(t, self.settings.tokens) for t in texts]
        out: list[Array | None] = [self.cache.get(k) for k in keys]
        fresh: dict[str, Array] = {}
        wanted = list(dict.fromkeys(k for k, v in zip(keys, out, strict=True) if v is None))
        if wanted:
            text_of = dict(zip(keys, texts, strict=True))
            vectors = (self._model or _default_model)().embed(
                [text_of[k] for k in wanted], max_tokens=self.settings.tokens
            )
            for k, v in zip(wanted, _unit(vectors), strict=True):
                fresh[k] = v
                self.cache[k] = v
        rows = [v if v is not None else fresh[k] for v, k in zip(out, keys, strict=True)]
        if not rows:
            return np.zeros((0, 0), np.float32)
        return np.stack(rows)

    def passages(
        self, conn: store.Connection, ranked: Sequence[Ranked]
    ) -> tuple[list[str], list[str | None]]:
        """Each hit's shown section, and its note's first section where that is another one
        (a page's opening says what the whole page is about)."""
        from vaultmem import store

        firsts = store.first_chunks(conn, [r.path for r in ranked])
        ids = {r.best.chunk_id for r in ranked} | {c.id for c in firsts.values()}
        bodies = store.chunk_bodies(conn, sorted(ids))
        best = [
            passage(r.best.title, r.best.heading, bodies.get(r.best.chunk_id, "")) for r in ranked
        ]
        first: list[str | None] = []
        for r in ranked:
            c = firsts.get(r.path)
            if c is None or c.id == r.best.chunk_id:
                first.append(None)
            else:
                first.append(passage(c.title, c.heading, bodies.get(c.id, "")))
        return best, first

    def similarities(self, conn: store.Connection, query: str, ranked: Sequence[Ranked]) -> Array:
        """Each hit's similarity to the query: the closer of its two passages (`passages`)."""
        if not ranked:
            return np.zeros(0, np.float32)
        best, first = self.passages(conn, ranked)
        extra = [t for t in first if t is not None]
        vectors = self.embed([query, *best, *extra])
        sims: Array = vectors[1 : 1 + len(best)] @ vectors[0]
        more = iter((vectors[1 + len(best) :] @ vectors[0]).tolist())
        for i, text in enumerate(first):
            if text is not None:
                sims[i] = max(float(sims[i]), next(more))
        return sims

    def __call__(
        self, conn: store.Connection, query: str, ranked: Sequence[Ranked]
    ) -> list[Ranked]:
        depth = max(0, self.settings.depth)
        top, rest = list(ranked[:depth]), list(ranked[depth:])
        if len(top) < 2 or self.settings.weight == 0:
            return [*top, *rest]
        sims = self.similarities(conn, query, top)
        return [*fuse(top, sims, self.settings.weight), *rest]


def _default_model() -> MiniLM:
    from vaultmem.encoder import minilm

    return minilm()


def fuse(top: Sequence[Ranked], sims: Array, weight: float) -> list[Ranked]:
    """Each note's score plus `weight` x its similarity scaled to [0, 1] among these notes;
    best first (ties keep the first stage's order)."""
    low, high = float(sims.min()), float(sims.max())
    span = high - low
    out = []
    for r, sim in zip(top, sims, strict=True):
        part = weight * ((float(sim) - low) / span if span > 1e-9 else 0.0)
        out.append(replace(r, score=r.score + part, parts=(*r.parts, ("rerank", part))))
    order = sorted(range(len(out)), key=lambda i: (-out[i].score, i))
    return [out[i] for i in order]


def _key(text: str, tokens: int) -> str:
    return hashlib.blake2b(f"{tokens}\x00{text}".encode(), digest_size=16).hexdigest()


def _unit(vectors: Array) -> Array:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Array = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return out
