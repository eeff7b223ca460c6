"""Changing the vault: the one core operation every write goes through.

`Writer.apply` takes the index's write lock (the one `reindex` takes, so a write and a reindex,
or two writes from two processes, never interleave), writes a planned `edit.Change` with
`edit.write` (atomic; a note changed since it was read is refused with exit code 6 and nothing
is written), then reindexes exactly the paths it touched, re-resolving the links that a note
appearing, going, or changing its aliases or headings affects. The index is current when it
returns: front-ends never run the reindex after a write. Moving to the trash and restoring go
the same way; purging touches only `.trash/`, which the index never holds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem import edit, indexer, store
from vaultmem.config import Config
from vaultmem.edit.trash import KEEP, current_digest
from vaultmem.errors import CannotEdit
from vaultmem.index import Index
from vaultmem.indexer import ReindexReport

if TYPE_CHECKING:
    from vaultmem.embed import Embedder


@dataclass(frozen=True)
class Applied:
    """What a write did: the vault paths it changed (none when the note already read so), and
    the reindex of them (None when nothing was written, or the vault has no index yet)."""

    touched: tuple[str, ...]
    report: ReindexReport | None


@dataclass(frozen=True)
class Trashed:
    entry: edit.TrashEntry  # where the file went, and from where
    report: ReindexReport | None


@dataclass(frozen=True)
class Restored:
    path: str  # where the file is now
    report: ReindexReport | None


class Writer:
    """Writes into one vault and keeps its index current (the editor's service behind `Vault`)."""

    def __init__(
        self,
        root: Path,
        index: Index,
        config: Config,
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        self.root = root
        self.index = index
        self.config = config
        self._embedder = embedder
        self._files = indexer.FileSetCache()  # reused by writes in a row (under the lock)

    # ---- notes

    def read_for_edit(self, path: str) -> edit.NoteSource:
        """The note at vault path `path` as read for editing (its bytes once, their digest,
        encoding and lines), within the config's size limit."""
        return edit.read_note(self.root, path, max_bytes=self.config.max_file_bytes)

    def apply(
        self,
        change: edit.Change,
        *,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        embed: bool = True,
    ) -> Applied:
        """Write `change` and reindex what it touched, holding the index's write lock.

        Raises IndexBusy (exit 4) when the lock is held past `wait` seconds, ChangedOnDisk
        (exit 6) when the note is not the revision the change was computed from, NoteExists or
        CannotEdit when the write is refused; in each case nothing was written.
        """
        with indexer.lock(self.index.path, wait, on_wait):
            # a write that crashed here before left its temporary file beside the note
            folder = change.file.rpartition("/")[0]
            with contextlib.suppress(CannotEdit):
                edit.clean_temporaries(self.root, folder=folder)
            self._check_index("nothing was written")
            touched = edit.write(self.root, change)
            report = self._reindex_after(touched, embed, "written") if touched else None
        return Applied(touched, report)

    # ---- the trash

    def trash(
        self,
        path: str,
        *,
        expected_digest: str | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        now: dt.datetime | None = None,
    ) -> Trashed:
        """Move the note or attachment `path` to `.trash/` and drop it from the index.

        With `expected_digest` (the revision an agent read), a file changed since is refused
        (exit 6); without it, the file is trashed as it is now.
        """
        with indexer.lock(self.index.path, wait, on_wait):
            digest = expected_digest or current_digest(self.root, path)
            self._check_index("nothing was moved")
            entry = edit.move_to_trash(self.root, path, digest, now=now)
            report = self._reindex_after((path,), False, f"moved to {entry.path}")
        return Trashed(entry, report)

    def list_trash(self) -> tuple[edit.TrashEntry, ...]:
        """Every file in `.trash/`, most recently trashed first."""
        return edit.list_trash(self.root)

    def restore(
        self,
        entry: str,
        *,
        to: str | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> Restored:
        """Move a trash entry back where it came from (or to `to`), never over an existing
        file (NoteExists), and index it again."""
        with indexer.lock(self.index.path, wait, on_wait):
            self._check_index("nothing was restored")
            path = edit.restore(self.root, entry, to=to)
            report = self._reindex_after((path,), True, f"restored from {entry}")
        return Restored(path, report)

    def purge(
        self,
        *,
        older_than: dt.timedelta = KEEP,
        entries: tuple[str, ...] | None = None,
        now: dt.datetime | None = None,
    ) -> tuple[edit.TrashEntry, ...]:
        """Delete for good the named trash entries, or every one trashed longer ago than
        `older_than`. The index holds nothing of the trash, so it is not touched."""
        return edit.purge(self.root, older_than=older_than, paths=entries, now=now)

    # ---- keeping the index current

    def _check_index(self, nothing: str) -> None:
        """Refuse (CannotEdit) before touching the vault when the index cannot take the
        reindex that follows the change (a read-only index file or folder): a write that
        lands without it leaves the index behind and its caller told it failed (an agent
        retrying a loop it was told was not added writes it twice)."""
        if not self.index.path.exists():
            return
        try:
            store.probe_write(self.index.conn)
        except store.Error as exc:
            raise CannotEdit(
                f"the index at {self.index.path} cannot be written ({exc}); {nothing}."
                " Every change is indexed at once, so make the index file and its folder"
                " writable (or pass --index PATH to keep it elsewhere) and try again"
            ) from None

    def _reindex_after(self, paths: Iterable[str], embed: bool, done: str) -> ReindexReport | None:
        """`_reindex` after a change that is made: its failure says that the change stands
        and only the index is behind, so nobody makes the change a second time."""
        try:
            return self._reindex(paths, embed)
        except store.Error as exc:
            error = store.index_error(exc, self.index.path)
            if error is None:
                raise  # vaultmem's own SQL is wrong: a bug, shown as one
            names = ", ".join(dict.fromkeys(paths))
            raise type(error)(
                f"{names}: {done}, but the index could not be brought up to date: {error}"
            ) from exc

    def _reindex(self, paths: Iterable[str], embed: bool) -> ReindexReport | None:
        """Reindex `paths` (the caller holds the lock); None when there is no index to keep
        current (the next `vaultmem reindex` builds it, with these changes)."""
        started = time.perf_counter()
        if not self.index.path.exists():
            return None
        conn = self.index.conn
        report = indexer.reindex_touched(conn, self.root, self.config, paths, self._files)
        # the sections the write changed get vectors now (unchanged ones come from the cache),
        # so meaning search finds the new text at once
        if (
            embed
            and self._embedder is not None
            and store.get_meta(conn, "embed_model")
            and store.chunks_without_vectors(conn)
        ):
            vectors = indexer.embed_chunks(conn, self._embedder())
            report = replace(report, embeddings=vectors)
        return replace(report, seconds=round(time.perf_counter() - started, 3))
