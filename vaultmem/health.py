"""The index's health: stats, `doctor` (warnings, skipped files, link problems, integrity) and
the wanted links that name an alias, each with its rewrite."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from vaultmem import embed_choice, store
from vaultmem.parser import written_link
from vaultmem.resolver import name_key

_T = TypeVar("_T")


@dataclass(frozen=True)
class Stats:
    notes: int
    attachments: int
    chunks: int
    links: int
    resolved_links: int
    wanted_links: int
    wanted_notes: int
    ambiguous_links: int
    tags: int
    open_tasks: int
    done_tasks: int
    skipped: int
    notes_with_warnings: int
    index_path: str
    index_bytes: int
    schema_version: int
    last_reindex: float | None
    vectors: int = 0
    embed_model: str | None = None
    embed_by: str | None = None  # "auto" or "you"; None: the index predates the record
    embed_reason: str | None = None  # why this model, in words (vaultmem/embed_choice.py)


@dataclass(frozen=True)
class LinkProblem:
    src_path: str
    line: int
    written: str
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class DoctorReport:
    warnings: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...]
    ambiguous: tuple[LinkProblem, ...]
    alias_fixable: tuple[LinkProblem, ...]
    missing_anchors: tuple[LinkProblem, ...]
    index_problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def healthy(self) -> bool:
        return not self.index_problems


def stats(conn: store.Connection, index_path: Path) -> Stats:
    """How much the index holds, and how big its files are."""
    counts = store.index_counts(conn)
    last = store.get_meta(conn, "last_reindex")
    model = store.get_meta(conn, "embed_model")
    choice = embed_choice.recorded(conn)
    size = sum(
        os.path.getsize(str(index_path) + s)
        for s in ("", "-wal")
        if os.path.exists(str(index_path) + s)
    )
    return Stats(
        notes=counts.notes,
        attachments=counts.attachments,
        chunks=counts.chunks,
        links=counts.links,
        resolved_links=counts.resolved_links,
        wanted_links=counts.wanted_links,
        wanted_notes=counts.wanted_notes,
        ambiguous_links=counts.ambiguous_links,
        tags=counts.tags,
        open_tasks=counts.open_tasks,
        done_tasks=counts.done_tasks,
        skipped=counts.skipped,
        notes_with_warnings=counts.notes_with_warnings,
        index_path=str(index_path),
        index_bytes=size,
        schema_version=store.SCHEMA_VERSION,
        last_reindex=float(last) if last else None,
        vectors=counts.vectors,
        embed_model=model,
        embed_by=choice.by if choice else None,
        embed_reason=choice.reason if choice else _unrecorded(model),
    )


def _unrecorded(model: str | None) -> str | None:
    if model is None:
        return None
    return "made before vaultmem recorded why; kept (`vaultmem reindex --embeddings` chooses again)"


def _written(link: store.ProblemLink, kind: str | None = None) -> str:
    return written_link(
        link.target, link.heading, link.block, link.display, link.embed, kind or link.kind
    )


def alias_fixable(conn: store.Connection) -> tuple[LinkProblem, ...]:
    """Wanted links naming another note's alias, each with its `[[Note|Alias]]` rewrite."""
    rows = store.alias_fix_links(conn)
    ambiguous_names = store.shared_note_keys(conn, {r.alias_fix or "" for r in rows})
    out = []
    for r in rows:
        fix = r.alias_fix or ""
        name = fix.removesuffix(".md")  # a vault path when several files share the name
        if name_key(fix) not in ambiguous_names:
            name = name.rsplit("/", 1)[-1]  # the bare title is unique: Obsidian's short form
        out.append(
            LinkProblem(
                r.src_path,
                r.line,
                _written(r, "wiki"),
                f"'{r.target}' is an alias of {fix}",
                written_link(name, r.heading, r.block, r.display or r.target, r.embed),
            )
        )
    return tuple(out)


def unreadable(problem: str) -> DoctorReport:
    """The report on an index that cannot be opened at all: that one problem."""
    return DoctorReport((), (), (), (), (), (problem,))


def doctor(conn: store.Connection) -> DoctorReport:
    """Everything worth a person's attention: parser warnings, skipped files, ambiguous links,
    alias-fixable links, missing anchors, and problems of the index itself. A damaged index
    is reported here (what can still be read is listed), never raised."""
    index_problems: list[str] = []

    def read(what: str, rows: Callable[[], tuple[_T, ...]]) -> tuple[_T, ...]:
        try:
            return rows()
        except store.DatabaseError as exc:
            index_problems.append(
                f"{what} cannot be read from the index ({exc}): run `vaultmem reindex --full`"
            )
            return ()

    check = read("its integrity", lambda: (store.quick_check(conn),))
    if check and check[0] != "ok":
        index_problems.append(f"SQLite quick_check: {check[0]}; run `vaultmem reindex --full`")
    ambiguous = read(
        "ambiguous links",
        lambda: tuple(
            LinkProblem(
                r.src_path,
                r.line,
                _written(r),
                f"matches {', '.join(r.candidates)}; resolved to {r.dst_path}",
            )
            for r in store.ambiguous_links(conn)
        ),
    )
    missing = read(
        "links to missing headings",
        lambda: tuple(
            LinkProblem(
                r.src_path,
                r.line,
                _written(r),
                f"{r.dst_path} has no "
                + (f"block ^{r.block}" if r.block else f"heading {r.heading!r}"),
            )
            for r in store.broken_anchor_links(conn)
        ),
    )
    interrupted = read(
        "the reindex state",
        lambda: (store.dirty_count(conn) > 0 or store.get_meta(conn, "resolve_all") == "1",),
    )
    if interrupted and interrupted[0]:
        index_problems.append(
            "a reindex was interrupted before it re-resolved links; run `vaultmem reindex`"
        )
    return DoctorReport(
        warnings=read(
            "parse warnings",
            lambda: tuple((w.path, w.warning) for w in store.note_warnings(conn)),
        ),
        skipped=read(
            "skipped files",
            lambda: tuple((s.path, s.reason) for s in store.skipped_files(conn)),
        ),
        ambiguous=ambiguous,
        alias_fixable=read("alias-fixable links", lambda: alias_fixable(conn)),
        missing_anchors=missing,
        index_problems=tuple(dict.fromkeys(index_problems)),
    )
