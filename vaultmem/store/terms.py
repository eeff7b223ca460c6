"""FTS5 keyword queries ranked from cached per-word bm25 scores, bit for bit (issue 13).

FTS5's bm25 of a row is `-1.0 * score`, where `score` starts at 0.0 and adds, for each of
the query's phrases in order, `idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))`:
a term that depends only on that phrase (its idf, its weighted count f in the row), the row
(its size D) and the table (avgdl); a phrase missing from the row adds exactly 0.0. So a
phrase's term in every row that holds it is exactly minus the bm25 of a query of that phrase
alone, and the bm25 of a query of phrases joined by OR (or by AND: the rows holding them all)
is those terms added in the query's order: the same IEEE additions SQLite makes, hence the
same bits. (That holds where the C compiler did not fuse the multiply and the add into one
FMA instruction: SQLite's x86-64 builds do not, other builds may; `enabled()` allows x86-64
only, and a process's first answers are checked against SQLite's own.) Ties keep SQLite's
order: its sorter breaks them by arrival, and FTS5 hands rows over in rowid order.

An OR query costs FTS5 bm25 on every row that holds any of its words (most of MDN's sections
for a title query), which it cannot cut short; a warm process (TUI, MCP server) asks the same
common words again and again, so each word's (rowids, terms) are kept per index state: keyed
by the index's creation time, its generation and the FTS5 table's structure record, which
SQLite rewrites on every committed change to the table's text (a reindex, a write through
`vault.apply`, another process's), so a changed index is never answered from old terms.
The cache is bounded by rows (TERM_ROWS, 16 bytes each: 64 MB in all; MDN's 200 benchmark
queries use 2.0 M rows) and forgets the least recently used words first.
"""

from __future__ import annotations

import platform
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from vaultmem.store.meta import generation, get_meta
from vaultmem.store.schema import Connection

if TYPE_CHECKING:
    import numpy as np

Table = Literal["chunks_fts", "notes_fts"]

TERM_ROWS = 4_000_000  # rows of terms kept in all (rowid int64 + term float64: 64 MB)
STATES_KEPT = 4  # index states (per table) kept at once: tests and front-ends open several
CHECKED = 3  # a process's first answers per table are compared with SQLite's own
_ANY = re.compile(r'"[^"]+"(?: OR "[^"]+")+')
_EVERY = re.compile(r'"[^"]+"(?: AND "[^"]+")*')
_WORD = re.compile(r'"([^"]+)"')

_lock = threading.Lock()
_states: OrderedDict[tuple[str, str, int, bytes], OrderedDict[str, tuple[np.ndarray, np.ndarray]]]
_states = OrderedDict()
_rows = 0  # rows held by every state's words
_checked: dict[str, int] = {}
_broken: set[str] = set()  # tables whose answers differed from SQLite's (never seen so far)


def enabled() -> bool:
    """Whether this machine's SQLite adds the terms as numpy does (see the module's text)."""
    return platform.machine().lower() in ("x86_64", "amd64")


def phrases(match: str) -> tuple[list[str], bool] | None:
    """The phrases of an FTS5 query of quoted phrases all joined by OR or all by AND (as
    search.fts_queries makes them; one phrase alone counts as AND), and whether a row must
    hold every one of them; else None."""
    if _ANY.fullmatch(match):
        return _WORD.findall(match), False
    if _EVERY.fullmatch(match):
        return _WORD.findall(match), True
    return None


def clear() -> None:
    """Forget every cached term (tests; a process that wants its memory back)."""
    global _rows
    with _lock:
        _states.clear()
        _rows = 0
        _checked.clear()
        _broken.clear()


def cached_rows() -> int:
    """How many rows of terms the cache holds."""
    return _rows


def ranked(
    conn: Connection, table: Table, bm25: str, match: str, limit: int
) -> list[tuple[int, float]] | None:
    """`SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH match ORDER BY rank
    LIMIT limit` for a query of phrases joined by OR (or by AND), from cached per-phrase
    terms: the same rows, order and scores (an AND query's bm25 is the same sum over its
    phrases, of the rows holding them all). None when the query is not such a query or this
    machine cannot (the caller then asks SQLite)."""
    parsed = phrases(match)
    if parsed is None or limit < 1 or not enabled() or table in _broken:
        return None
    words, every = parsed
    state = _state_key(conn, table)
    lists = [_terms(conn, table, bm25, state, w) for w in words]
    rows = _top(lists, limit, every)
    if _checked.get(table, 0) < CHECKED:
        _checked[table] = _checked.get(table, 0) + 1
        if rows != _sql(conn, table, bm25, match, limit):
            _broken.add(table)  # this SQLite adds differently: ask it from now on
            return None
    return rows


def _sql(
    conn: Connection, table: Table, bm25: str, match: str, limit: int
) -> list[tuple[int, float]]:
    found = conn.execute(
        f"SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
        (match, limit),
    ).fetchall()
    return [(int(r), float(s)) for r, s in found]


def _state_key(conn: Connection, table: Table) -> tuple[str, str, int, bytes]:
    """What the terms of a table are valid for: the index (its creation time), its generation
    and the table's FTS5 structure record (its segments and write counter: it changes with
    every committed insert or delete of text, even one not followed by a generation bump)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()
    return (
        get_meta(conn, "created_at") or "",
        table,
        generation(conn),
        bytes(row[0]) if row and row[0] is not None else b"",
    )


def _terms(
    conn: Connection, table: Table, bm25: str, state: tuple[str, str, int, bytes], word: str
) -> tuple[np.ndarray, np.ndarray]:
    """A phrase's rowids (ascending) and its bm25 term in each, cached for this state."""
    global _rows
    with _lock:
        words = _states.get(state)
        if words is not None and (got := words.get(word)) is not None:
            words.move_to_end(word)
            _states.move_to_end(state)
            return got
    import numpy as np  # a warm process has it loaded already (the vectors)

    found = conn.execute(
        f"SELECT rowid, {bm25} FROM {table} WHERE {table} MATCH ?", (f'"{word}"',)
    ).fetchall()
    if found:
        pairs = np.array(found, dtype=np.float64)
        ids = np.array([r for r, _ in found], dtype=np.int64)  # exact, even past 2**53
        terms = -pairs[:, 1]  # minus the one-phrase bm25: the term, exactly
    else:
        ids, terms = np.zeros(0, np.int64), np.zeros(0, np.float64)
    if len(ids) > 1 and (np.diff(ids) <= 0).any():  # FTS5 gives rowid order; to be sure
        order = np.argsort(ids, kind="stable")
        ids, terms = ids[order], terms[order]
    with _lock:
        words = _states.get(state)
        if words is None:
            words = _states[state] = OrderedDict()
            # states of the same index and table that are gone now: never asked again
            for old in [k for k in _states if k[:2] == state[:2] and k != state]:
                _rows -= sum(len(i) for i, _ in _states.pop(old).values())
            while len(_states) > STATES_KEPT:
                _rows -= sum(len(i) for i, _ in _states.popitem(last=False)[1].values())
        if word not in words:
            words[word] = (ids, terms)
            _rows += len(ids)
        _states.move_to_end(state)
        _evict()
        return ids, terms


def _evict() -> None:
    """Least recently used words (of the least recently used states first) go past TERM_ROWS."""
    global _rows
    while _rows > TERM_ROWS and _states:
        state, words = next(iter(_states.items()))
        if not words:
            del _states[state]
            continue
        _, (ids, _t) = words.popitem(last=False)
        _rows -= len(ids)


def _top(
    lists: Sequence[tuple[np.ndarray, np.ndarray]], limit: int, every: bool = False
) -> list[tuple[int, float]]:
    """The best `limit` rows of the summed terms, as SQLite orders them: rank (minus the sum)
    ascending, ties by rowid. `every`: only the rows held by every list (an AND query)."""
    import numpy as np

    held = [(ids, terms) for ids, terms in lists if len(ids)]
    if not held or (every and len(held) < len(lists)):
        return []
    size = max(int(ids[-1]) for ids, _ in held) + 1
    total = sum(len(ids) for ids, _ in held)
    if size <= 4 * total + 1024:
        acc = np.zeros(size, dtype=np.float64)
        holding = np.zeros(size, dtype=np.int32)  # how many lists hold each row
        for ids, terms in lists:  # the query's order: the same additions as SQLite's
            acc[ids] += terms
            holding[ids] += 1
        found = np.flatnonzero(holding == len(lists) if every else holding)
        rank = -acc[found]
    else:  # sparse rowids: a dense array would be mostly empty
        found = np.unique(np.concatenate([ids for ids, _ in held]))
        acc = np.zeros(len(found), dtype=np.float64)
        holding = np.zeros(len(found), dtype=np.int32)
        for ids, terms in lists:
            at = np.searchsorted(found, ids)
            acc[at] += terms
            holding[at] += 1
        rank = -acc
        if every:
            found, rank = found[holding == len(lists)], rank[holding == len(lists)]
    if len(found) > limit:
        kth = np.partition(rank, limit - 1)[limit - 1]
        keep = rank <= kth
        found, rank = found[keep], rank[keep]
    order = np.lexsort((found, rank))[:limit]
    return list(zip(found[order].tolist(), rank[order].tolist(), strict=True))
