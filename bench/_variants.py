"""Experimental rankings for issue 13, run through vaultmem's real search with one change each.

Each variant is `make(vault) -> run(query) -> [(path, heading)]`: a hybrid search through
vaultmem.search.run with ranking.Weights changed, and, where the idea lives outside the ranking,
one search function swapped for the duration of the call (the bench is single-threaded):

  title      a note whose title or an alias is what the query names (ranking.name_match)
  evidence   a note's other sections add to its best (ranking.other_sections)
  rare       OR query without the words that hold in more than RARE_SHARE of the sections,
             when the query has rarer ones (common words stop drowning rare ones)
  heading-   the heading signal halved / doubled (a heading match inside another note)
  borrow     a section that is only a heading is shown and scored with the text after it
             (the next section of the same note takes its place)

Names are read from the index (title and aliases of the candidate notes); nothing is written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from vaultmem import ranking, search

RARE_SHARE = 0.05  # a word in more than 5 % of the sections is common
Run = Callable[[str], list[tuple[str, str]]]


class Names(Mapping[str, Sequence[str]]):
    """Title and aliases of notes, read from the index on demand."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cache: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, path: str) -> tuple[str, ...]:
        if path not in self.cache:
            row = self.conn.execute("SELECT id, title FROM notes WHERE path = ?", (path,))
            found = row.fetchone()
            if found is None:
                raise KeyError(path)
            aliases = [r[0] for r in self.conn.execute(
                "SELECT alias FROM aliases WHERE note_id = ?", (found[0],))]
            self.cache[path] = (found[1], *aliases)
        return self.cache[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cache)

    def __len__(self) -> int:
        return len(self.cache)


@contextlib.contextmanager
def swapped(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def hybrid(weights: ranking.Weights, *, rare: bool = False, names: bool = False,
           borrow: bool = False) -> Callable[[Any], Run]:
    def make(vault: Any) -> Run:
        conn = vault.conn
        lookup = Names(conn)
        df_cache: dict[str, int] = {}
        total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

        def df(word: str) -> int:
            if word not in df_cache:
                df_cache[word] = conn.execute(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                    (f'"{word}"',)).fetchone()[0]
            return df_cache[word]

        plain_queries = search.fts_queries

        def rare_queries(text: str) -> list[str]:
            words = search.query_words(text)
            kept = [w for w in words if df(w) <= RARE_SHARE * total]
            if not kept or len(kept) == len(words):
                return plain_queries(text)
            # all words first (as before), then only the rarer ones OR-ed
            quoted = [f'"{w}"' for w in words]
            return [" AND ".join(quoted), " OR ".join(f'"{w}"' for w in kept)]

        plain_rank = ranking.rank

        def rank(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
            if names:
                kwargs["names"] = lookup
            if borrow:
                args = (_borrowed(conn, args[0]), *args[1:])
            return plain_rank(*args, **kwargs)

        def run(q: str) -> list[tuple[str, str]]:
            query = search.Query(q, 10, "hybrid", weights=weights)
            with contextlib.ExitStack() as stack:
                if rare:
                    stack.enter_context(swapped(search, "fts_queries", rare_queries))
                stack.enter_context(swapped(ranking, "rank", rank))
                result = search.run(conn, query, vault.embedder, None, vault._matrix)
            return [(h.path, h.header) for h in result.hits]

        return run

    return make


def _borrowed(conn: Any, candidates: Sequence[ranking.Candidate]) -> list[ranking.Candidate]:
    """Heading-only sections replaced by the section after them in the same note."""
    ids = [c.chunk_id for c in candidates]
    if not ids:
        return list(candidates)
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT c.id, c.note_id, c.seq, c.start_line, c.end_line FROM chunks c"
        f" WHERE c.id IN ({marks})", ids).fetchall()
    bare = {r[0]: (r[1], r[2]) for r in rows if r[3] == r[4]}
    if not bare:
        return list(candidates)
    out = []
    for c in candidates:
        if c.chunk_id in bare:
            note_id, ord_ = bare[c.chunk_id]
            nxt = conn.execute(
                "SELECT c.id, c.start_line, c.end_line, c.heading FROM chunks c"
                " WHERE c.note_id = ? AND c.seq = ?", (note_id, ord_ + 1)).fetchone()
            if nxt is not None:
                c = replace(c, chunk_id=nxt[0], end_line=nxt[2])
        out.append(c)
    return out


BASE = ranking.Weights()
VARIANTS: dict[str, Callable[[Any], Run]] = {
    "base": hybrid(BASE),
    "title0.2": hybrid(replace(BASE, title=0.2), names=True),
    "title0.5": hybrid(replace(BASE, title=0.5), names=True),
    "title1.0": hybrid(replace(BASE, title=1.0), names=True),
    "evidence0.1": hybrid(replace(BASE, evidence=0.1)),
    "evidence0.3": hybrid(replace(BASE, evidence=0.3)),
    "rare": hybrid(BASE, rare=True),
    "heading0": hybrid(replace(BASE, heading=0.0)),
    "heading0.1": hybrid(replace(BASE, heading=0.1)),
    "borrow": hybrid(BASE, borrow=True),
    "title0.5+evidence0.1": hybrid(replace(BASE, title=0.5, evidence=0.1), names=True),
    "title0.5+rare": hybrid(replace(BASE, title=0.5), names=True, rare=True),
    # the meaning weight, for a stronger model than the one 0.3 was measured with
    "vector0.5": hybrid(replace(BASE, vector=0.5)),
    "vector0.8": hybrid(replace(BASE, vector=0.8)),
    "vector1.2": hybrid(replace(BASE, vector=1.2)),
}
