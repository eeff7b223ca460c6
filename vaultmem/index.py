"""One vault's index as the services use it: a connection per thread, reindexing, and the
chunk vectors kept in memory for long-running front-ends."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem import store
from vaultmem.config import Config
from vaultmem.errors import VaultmemError
from vaultmem.indexer import PickEmbedder, Progress, ReindexReport, reindex

if TYPE_CHECKING:
    from vaultmem.embed import Embedder
    from vaultmem.vectors import VectorMatrix


class Index:
    """The index file of one vault and what is cached about it (per instance, never global)."""

    def __init__(self, root: Path, path: Path, config: Config) -> None:
        self.root = root
        self.path = path
        self.config = config
        # One connection per thread: front-ends search from worker threads while another
        # thread reindexes, and a sqlite3 connection must not be shared between threads.
        self._local = threading.local()
        self._conns: list[store.Connection] = []
        self._conns_lock = threading.Lock()
        self._epoch = 0  # bumped when the index file may have been replaced
        self._matrix: VectorMatrix | None = None
        self._matrix_lock = threading.Lock()

    # ---- derived data kept beside the index

    def cache_key(self) -> str:
        """What a cached value derived from the index is valid for: this index file (its
        creation time) at this generation."""
        return f"{store.get_meta(self.conn, 'created_at')}:{store.generation(self.conn)}"

    def _cache_file(self, name: str) -> Path:
        return self.path.with_name(f"{self.path.name}.{name}.json")

    def read_cache(self, name: str, key: str) -> object | None:
        """The value `write_cache` kept under `name` for `key`, else None (none, another key,
        an unreadable or damaged file: the caller derives it again)."""
        try:
            data = json.loads(self._cache_file(name).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return data.get("value")

    def write_cache(self, name: str, key: str, value: object) -> None:
        """Keep a value derived from the index for other processes (atomically; nothing when
        the index's folder is read-only: the next process derives it again)."""
        target = self._cache_file(name)
        with contextlib.suppress(OSError):
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"key": key, "value": value}, out, ensure_ascii=False)
                os.replace(tmp, target)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    # ---- connections

    @property
    def conn(self) -> store.Connection:
        """This thread's connection to the index (opened on first use)."""
        conn: store.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.epoch != self._epoch:
            self._drop(conn)  # the index file was replaced (a full reindex) since it opened
            conn = None
        if conn is None:
            conn = store.open_existing(self.path)
            self._local.conn = conn
            self._local.epoch = self._epoch
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def reopen(self) -> None:
        """Have every thread open the index afresh on its next use (another process may have
        replaced a damaged file); a connection in use now finishes what it is doing first."""
        self._epoch += 1

    def _drop(self, conn: store.Connection) -> None:
        with self._conns_lock:
            if conn in self._conns:
                self._conns.remove(conn)
        with contextlib.suppress(store.Error):
            conn.close()

    def close(self) -> None:
        """Close every thread's connection; the next use opens a fresh one."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
            self._local = threading.local()
        for conn in conns:
            with contextlib.suppress(store.Error):
                conn.close()

    def generation(self) -> int:
        """The index's generation: what caches of derived data are keyed by."""
        return store.generation(self.conn)

    # ---- reindexing

    def reindex(
        self,
        full: bool = False,
        progress: Progress | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        embedder: Embedder | PickEmbedder | None = None,
        redo_embeddings: bool = False,
    ) -> ReindexReport:
        """Bring the index up to date (vectors too, given an `embedder` or one to pick).
        Other threads may keep searching meanwhile (WAL readers see the last commit)."""
        report = reindex(
            self.root,
            self.path,
            self.config,
            full=full,
            progress=progress,
            wait=wait,
            on_wait=on_wait,
            embedder=embedder,
            redo_embeddings=redo_embeddings,
        )
        if full:
            # A full reindex empties a readable index in place, but replaces a damaged file
            # or one of another schema: every thread reopens its connection on next use.
            # (Other reindexes keep the file, and warm connections are worth keeping.)
            self._epoch += 1
        if self._matrix is not None:
            self._refresh_matrix()
        return report

    # ---- vectors in memory

    @property
    def matrix(self) -> VectorMatrix | None:
        """The vectors in memory as last loaded (None until `warm` loads them)."""
        return self._matrix

    def warm(self, background: bool = True) -> threading.Thread | None:
        """Load the vectors into memory so meaning search skips sqlite-vec's full scan; for
        long-running front-ends. Search works as before until the load finishes."""
        if not background:
            self._refresh_matrix()
            return None
        thread = threading.Thread(target=self._refresh_matrix, name="vaultmem-warm", daemon=True)
        thread.start()
        return thread

    def drop_matrix(self) -> None:
        """Forget the vectors in memory (search falls back to sqlite-vec until `warm`)."""
        with self._matrix_lock:
            self._matrix = None

    def current_matrix(self) -> VectorMatrix | None:
        """The vectors in memory, caught up with the index first when it changed since (a
        reindex, maybe by another process): only the changed sections are read, and the
        whole matrix is reloaded only when the model changed. None when never warmed."""
        matrix = self._matrix
        if matrix is not None and matrix.generation != self.generation():
            self._refresh_matrix()
            matrix = self._matrix
        return matrix

    def _refresh_matrix(self) -> None:
        from vaultmem.vectors import VectorMatrix

        with self._matrix_lock:
            try:
                conn = self.conn
                old = self._matrix
                self._matrix = old.refresh(conn) if old else VectorMatrix.load(conn)
            except VaultmemError:
                self._matrix = None  # no index yet: search reports that itself
