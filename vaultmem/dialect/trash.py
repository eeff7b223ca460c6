"""The trash in the dialect: `trash`, `trash list`, `restore` and `trash purge`."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import TypedDict

from vaultmem.dialect.index import ReindexOut, reindex
from vaultmem.edit import TrashEntry
from vaultmem.model import title_of
from vaultmem.writer import Restored, Trashed


class TrashEntryOut(TypedDict):
    """One file in the trash: where it came from (`path`, `title`) and where it is now."""

    path: str  # where it was (a guess from its place in the trash when `known` is false)
    title: str
    entry: str  # its path in the vault, below .trash/: what `restore` and `purge` take
    trashed_at: str  # ISO 8601, UTC
    known: bool  # whether vaultmem's own log knows where it came from and when
    bytes: int


def trash_entry(e: TrashEntry) -> TrashEntryOut:
    return {
        "path": e.original,
        "title": title_of(e.original),
        "entry": e.path,
        "trashed_at": e.trashed_at.isoformat(timespec="seconds"),
        "known": e.known,
        "bytes": e.size,
    }


class TrashedOut(TypedDict):
    trashed: TrashEntryOut
    reindex: ReindexOut | None  # the reindex of what moved (null: the vault has no index yet)


def trashed(t: Trashed) -> TrashedOut:
    return {
        "trashed": trash_entry(t.entry),
        "reindex": reindex(t.report) if t.report else None,
    }


class TrashListOut(TypedDict):
    total: int
    bytes: int
    entries: list[TrashEntryOut]  # most recently trashed first


def trash_list(entries: Sequence[TrashEntry]) -> TrashListOut:
    return {
        "total": len(entries),
        "bytes": sum(e.size for e in entries),
        "entries": [trash_entry(e) for e in entries],
    }


class RestoredOut(TypedDict):
    path: str  # where the file is now
    title: str
    entry: str  # where it was in the trash
    reindex: ReindexOut | None


def restored(r: Restored, entry: str) -> RestoredOut:
    return {
        "path": r.path,
        "title": title_of(r.path),
        "entry": entry,
        "reindex": reindex(r.report) if r.report else None,
    }


class PurgedOut(TypedDict):
    total: int
    bytes: int
    purged: list[TrashEntryOut]


def purged(entries: Sequence[TrashEntry]) -> PurgedOut:
    return {
        "total": len(entries),
        "bytes": sum(e.size for e in entries),
        "purged": [trash_entry(e) for e in entries],
    }
