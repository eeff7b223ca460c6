"""The index's own key-value facts: schema bookkeeping, the generation counter, small caches."""

from __future__ import annotations

from vaultmem.store.schema import Connection


def get_meta(conn: Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def delete_meta(conn: Connection, *keys: str) -> None:
    conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in keys])


def generation(conn: Connection) -> int:
    """A counter bumped by every reindex that changed anything."""
    return int(get_meta(conn, "generation") or 0)
