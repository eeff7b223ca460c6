"""Chunk vectors (sqlite-vec's vec0 table) and the embedding cache keyed by text hash."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from vaultmem.store.meta import delete_meta, get_meta, set_meta
from vaultmem.store.schema import Connection, rows_in, scalar

# (chunk id, ...) pairs below stay tuples: they are keyed values streamed in bulk (126k on MDN)
# into the embedder and the in-memory matrix, not rows anyone reads by field.


def has_vectors(conn: Connection) -> bool:
    return bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'"
        ).fetchone()
    )


def ensure_vectors(conn: Connection, model: str, dim: int) -> None:
    """Make the vec0 table for `dim`-wide cosine vectors and record which model fills it."""
    if not has_vectors(conn):
        conn.execute(
            f"CREATE VIRTUAL TABLE chunk_vectors USING vec0("
            f"embedding float[{int(dim)}] distance_metric=cosine)"
        )
    set_meta(conn, "embed_model", model)
    set_meta(conn, "embed_dim", str(dim))


def drop_vectors(conn: Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS chunk_vectors")
    delete_meta(conn, "embed_model", "embed_dim")


def forget_cached_vectors(conn: Connection, model: str) -> None:
    """Drop the cached vectors of `model`: its next vectors are embedded, not reused."""
    conn.execute("DELETE FROM embeddings WHERE model = ?", (model,))


def forget_cached_widths(conn: Connection, model: str, keep: int) -> None:
    """Drop the cached vectors of `model` that are not `keep` bytes long (another version of
    the model made them)."""
    conn.execute("DELETE FROM embeddings WHERE model = ? AND length(vector) != ?", (model, keep))


def chunks_without_vectors(conn: Connection) -> list[tuple[int, str]]:
    """(chunk id, text hash) of every chunk with no vector yet."""
    if not has_vectors(conn):
        return conn.execute("SELECT id, text_hash FROM chunks ORDER BY id").fetchall()
    return conn.execute(
        "SELECT id, text_hash FROM chunks WHERE id NOT IN (SELECT rowid FROM chunk_vectors)"
        " ORDER BY id"
    ).fetchall()


def cached_vectors(conn: Connection, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
    """text hash -> the vector `model` gave that text before."""
    sql = "SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({marks})"
    return dict(rows_in(conn, sql, hashes, before=(model,)))


def store_vectors(
    conn: Connection, model: str, rows: Sequence[tuple[int, str, bytes]], cache: bool = True
) -> None:
    """Attach vectors to chunks (chunk id, text hash, float32 bytes), caching new ones."""
    if cache:
        cache_vectors(conn, model, [(h, v) for _, h, v in rows])
    conn.executemany(
        "INSERT OR REPLACE INTO chunk_vectors(rowid, embedding) VALUES (?, ?)",
        [(i, v) for i, _, v in rows],
    )


def cache_vectors(conn: Connection, model: str, rows: Sequence[tuple[str, bytes]]) -> None:
    """Keep vectors (text hash, float32 bytes) in the embedding cache only, not in the index's
    vectors (the upgrade fills the cache for a model the index does not use yet)."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO embeddings(model, text_hash, vector) VALUES (?, ?, ?)",
        [(model, h, v) for h, v in rows],
    )
    added = conn.total_changes - before
    if added:  # each new text may have replaced one: what prune_embedding_cache weighs
        set_meta(conn, "cache_added", str(int(get_meta(conn, "cache_added") or 0) + added))


def uncached_chunks(conn: Connection, model: str, limit: int) -> list[tuple[int, str]]:
    """(chunk id, text hash) of up to `limit` texts no vector of `model` is cached for, one
    chunk per text, in chunk order."""
    return conn.execute(
        "SELECT min(c.id), c.text_hash FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings"
        " e WHERE e.model = ? AND e.text_hash = c.text_hash) GROUP BY c.text_hash"
        " ORDER BY min(c.id) LIMIT ?",
        (model, limit),
    ).fetchall()


def cache_coverage(conn: Connection, model: str) -> tuple[int, int]:
    """(chunks, chunks whose text has a cached vector of `model`)."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?"
        " AND e.text_hash = c.text_hash)), 0) FROM chunks c",
        (model,),
    ).fetchone()
    return int(row[0]), int(row[1])


def cached_widths(conn: Connection, model: str) -> set[int]:
    """The sizes in bytes of the cached vectors of `model` that the chunks' texts use."""
    return {
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT length(e.vector) FROM chunks c JOIN embeddings e"
            " ON e.model = ? AND e.text_hash = c.text_hash",
            (model,),
        )
    }


def vectors_from_cache(conn: Connection, model: str, dim: int) -> int:
    """Replace every chunk's vector by the cached one of `model` (`dim` numbers wide), in the
    transaction under way; returns how many chunks got one. The caller has checked that the
    cache covers every chunk at that width: a chunk left without one would be searched by
    keywords only, never by another model's vector."""
    conn.execute("DROP TABLE IF EXISTS chunk_vectors")
    ensure_vectors(conn, model, dim)
    before = conn.total_changes
    conn.execute(
        "INSERT INTO chunk_vectors(rowid, embedding) SELECT c.id, e.vector FROM chunks c"
        " JOIN embeddings e ON e.model = ? AND e.text_hash = c.text_hash ORDER BY c.id",
        (model,),
    )
    return conn.total_changes - before


def prune_embedding_cache(
    conn: Connection, model: str, slack: float = 0.25, floor: int = 100
) -> bool:
    """Forget cached vectors no chunk uses any more (other models' are kept: switching back
    is then free), once enough new ones were cached since the last pruning to have left more
    than `slack` of the chunks' worth stale: the anti-join reads the whole cache (~0.25 s over
    126k sections), too slow to run after every one-note edit."""
    added = int(get_meta(conn, "cache_added") or 0)
    chunks = int(scalar(conn, "SELECT count(*) FROM chunks"))
    if added <= chunks * slack + floor:
        return False
    conn.execute(
        "DELETE FROM embeddings WHERE model = ? AND text_hash NOT IN"
        " (SELECT text_hash FROM chunks)",
        (model,),
    )
    set_meta(conn, "cache_added", "0")
    return True


def nearest_chunks(conn: Connection, vector: bytes, k: int) -> list[tuple[int, float]]:
    """(chunk id, cosine distance) of the k nearest chunks, nearest first (as the in-memory
    VectorMatrix.nearest gives them)."""
    if not has_vectors(conn):
        return []
    return conn.execute(
        "SELECT rowid, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ?"
        " ORDER BY distance",
        (vector, k),
    ).fetchall()


def note_vector(conn: Connection, path: str) -> bytes | None:
    """The mean of a note's section vectors (float32 bytes), or None without vectors."""
    if not has_vectors(conn):
        return None
    rows = conn.execute(
        "SELECT v.embedding FROM chunks c JOIN notes n ON n.id = c.note_id"
        " JOIN chunk_vectors v ON v.rowid = c.id WHERE n.path = ?",
        (path,),
    ).fetchall()
    if not rows:
        return None
    import numpy as np  # only here in the store: not loaded on every CLI start

    matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    mean = matrix.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32).tobytes() if norm > 0 else None


def vector_count(conn: Connection) -> int:
    return int(scalar(conn, "SELECT count(*) FROM chunk_vectors")) if has_vectors(conn) else 0


def iter_vectors(conn: Connection) -> Iterator[tuple[int, bytes]]:
    """Every chunk's id and vector, for an in-memory matrix."""
    if has_vectors(conn):
        yield from conn.execute("SELECT rowid, embedding FROM chunk_vectors")


def vector_ids(conn: Connection) -> list[int]:
    if not has_vectors(conn):
        return []
    return [r[0] for r in conn.execute("SELECT rowid FROM chunk_vectors")]


def vectors_of(conn: Connection, ids: Sequence[int]) -> tuple[list[int], list[bytes]]:
    """The vectors of some chunks, as parallel lists of ids and float32 bytes."""
    rows = list(
        rows_in(conn, "SELECT rowid, embedding FROM chunk_vectors WHERE rowid IN ({marks})", ids)
    )
    return [r[0] for r in rows], [r[1] for r in rows]
