"""An in-memory copy of the index's vectors, for long-running front-ends (TUI, MCP server).

sqlite-vec answers a k-nearest query by reading every vector from the database each time
(~60 ms over 126k sections); a numpy matrix kept in memory answers the same query in a few
milliseconds. Loading it costs a few seconds on a big vault, so front-ends load it in the
background and search uses sqlite-vec until it is ready.
"""

from __future__ import annotations

import functools

import numpy as np
from threadpoolctl import ThreadpoolController

from vaultmem import store


# One BLAS thread per query: with both cores, OpenBLAS made one 12k x 256 product 14x slower
# here (thread start-up dominates such small products).
@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # looks up the loaded BLAS libraries once per process


class VectorMatrix:
    """Chunk vectors as one normalised float32 matrix; `nearest` mirrors store.nearest_chunks."""

    def __init__(self, ids: np.ndarray, matrix: np.ndarray, model: str | None, generation: int):
        self.ids = ids
        self.matrix = matrix
        self.model = model
        self.generation = generation
        self._blas = _controller()

    @classmethod
    def load(cls, conn: store.Connection) -> VectorMatrix:
        """Every vector of the index, read in one snapshot: the generation and model it is
        labelled with are those of the vectors it holds, even while a reindex or the
        upgrade's swap (another model's vectors, another width) commits meanwhile."""
        with store.snapshot(conn):
            return cls._load(conn)

    @classmethod
    def _load(cls, conn: store.Connection) -> VectorMatrix:
        generation = store.generation(conn)
        model = store.get_meta(conn, "embed_model")
        count = store.vector_count(conn)
        if not count:
            return cls(*_as_matrix([], []), model, generation)
        # filled row by row: no list of 126k blobs and no joined copy beside the matrix
        ids = np.empty(count, dtype=np.int64)
        matrix: np.ndarray | None = None
        n = 0
        for rowid, blob in store.iter_vectors(conn):
            row = np.frombuffer(blob, dtype=np.float32)
            if matrix is None:
                matrix = np.empty((count, len(row)), dtype=np.float32)
            if n == count:  # rows added since the count: the next refresh picks them up
                break
            ids[n] = rowid
            matrix[n] = row
            n += 1
        assert matrix is not None
        return cls(*_normalised(ids[:n], matrix[:n]), model, generation)

    def __len__(self) -> int:
        return len(self.ids)

    def refresh(self, conn: store.Connection) -> VectorMatrix:
        """This matrix brought up to date with the index: only changed sections are read (in
        one snapshot, as `load`)."""
        with store.snapshot(conn):
            return self._refresh(conn)

    def _refresh(self, conn: store.Connection) -> VectorMatrix:
        generation = store.generation(conn)
        model = store.get_meta(conn, "embed_model")
        if generation == self.generation and model == self.model:
            return self
        if model != self.model:
            return VectorMatrix._load(conn)
        current = np.fromiter(store.vector_ids(conn), dtype=np.int64)
        keep = np.isin(self.ids, current, assume_unique=True)
        new_ids = np.setdiff1d(current, self.ids, assume_unique=True)
        ids, blobs = store.vectors_of(conn, new_ids.tolist())
        add_ids, add = _as_matrix(ids, blobs, self.matrix.shape[1] if len(self.ids) else None)
        return VectorMatrix(
            np.concatenate([self.ids[keep], add_ids]),
            np.concatenate([self.matrix[keep], add]) if len(add) else self.matrix[keep],
            model,
            generation,
        )

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the k nearest chunks, nearest first."""
        if not len(self.ids) or k < 1:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        with self._blas.limit(limits=1, user_api="blas"):
            sims = self.matrix @ (query / norm)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(self.ids[i]), float(1.0 - sims[i])) for i in top]


def _as_matrix(
    ids: list[int], blobs: list[bytes], dim: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros((0, dim or 0), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1).copy()
    return _normalised(np.asarray(ids, dtype=np.int64), matrix)


def _normalised(ids: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled to length 1 in place; zero vectors (empty text) dropped: near nothing, as
    in sqlite-vec."""
    norms = np.linalg.norm(matrix, axis=1)
    live = norms > 0
    if live.all():
        matrix /= norms[:, None]
        return ids, matrix
    return ids[live], matrix[live] / norms[live][:, None]
