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
  note       bm25 over each whole note (words spread over its sections), its best 20 notes
             joining the candidates
  names+     names beyond the file name (an opening H1, front matter `title:`, a folder note's
             folder), and
             the notes the query names joining the candidates (+cand)

Names are read from the index (title and aliases of the candidate notes); nothing is written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from vaultmem import ranking, search

RARE_SHARE = 0.05  # a word in more than 5 % of the sections is common
NAME_FLOOR = 0.5
NAME_CANDIDATES = 20
Run = Callable[[str], list[tuple[str, str]]]


class Names(Mapping[str, Sequence[str]]):
    """Title and aliases of notes, read from the index on demand; with `richer`, also the first
    heading when it is an H1, a front matter `title:` and, for a folder note (index.md,
    README.md), its folder's name."""

    def __init__(self, conn: Any, richer: bool = False) -> None:
        self.conn = conn
        self.richer = richer
        self.cache: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, path: str) -> tuple[str, ...]:
        if path not in self.cache:
            row = self.conn.execute(
                "SELECT id, title, frontmatter FROM notes WHERE path = ?", (path,))
            found = row.fetchone()
            if found is None:
                raise KeyError(path)
            aliases = [r[0] for r in self.conn.execute(
                "SELECT alias FROM aliases WHERE note_id = ?", (found[0],))]
            h1 = []
            if self.richer:  # the note's first heading when it is a level-1 heading
                first = self.conn.execute(
                    "SELECT level, text FROM headings WHERE note_id = ? ORDER BY line LIMIT 1",
                    (found[0],)).fetchone()
                h1 = [first[1]] if first and first[0] == 1 else []
            self.cache[path] = (found[1], *aliases, *h1, *(
                richer_names(path, found[2]) if self.richer else ()))
        return self.cache[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cache)

    def __len__(self) -> int:
        return len(self.cache)


def richer_names(path: str, frontmatter: str) -> list[str]:
    out = []
    try:
        title = json.loads(frontmatter).get("title")
    except (ValueError, AttributeError):
        title = None
    if isinstance(title, str) and title.strip():
        out.append(title)
    parts = path.split("/")
    if len(parts) >= 2 and parts[-1].lower() in ("index.md", "readme.md"):
        out.append(parts[-2].replace("_", " "))
    return out


class NameIndex:
    """Every note's names, to add the notes a query names to the candidates (as a title
    search would): notes whose name_match is at least NAME_FLOOR, best NAME_CANDIDATES."""

    def __init__(self, conn: Any, names: Names) -> None:
        rows = conn.execute(
            "SELECT n.path, min(c.id), min(c.start_line), n.title FROM notes n"
            " JOIN chunks c ON c.note_id = n.id WHERE n.kind = 'note' GROUP BY n.id").fetchall()
        self.first = {r[0]: (r[1], r[2], r[3]) for r in rows}
        self.names = {r[0]: names[r[0]] for r in rows}
        self.words: dict[str, set[str]] = {}
        for path, ns in self.names.items():
            for n in ns:
                for w in ranking._words(n):
                    self.words.setdefault(w[:5], set()).add(path)

    def candidates(self, query: set[str]) -> list[ranking.Candidate]:
        pool = set().union(*(self.words.get(w[:5], set()) for w in query)) if query else set()
        scored = sorted(((ranking.name_match(query, self.names[p]), p) for p in pool),
                        reverse=True)
        out = []
        for score, path in scored[:NAME_CANDIDATES]:
            if score < NAME_FLOOR:
                break
            chunk_id, line, title = self.first[path]
            out.append(ranking.Candidate(chunk_id, path, title, "", line, line))
        return out


@contextlib.contextmanager
def swapped(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _values(frontmatter: str) -> str:
    """A note's front matter values as words ("[[Ridley Scott]]" -> "Ridley Scott")."""
    try:
        data = json.loads(frontmatter)
    except ValueError:
        return ""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None:
            out.append(str(value).replace("[[", "").replace("]]", ""))

    walk(data)
    return "\n" + "\n".join(out)


class NoteBm25:
    """Whole-note bm25: every note's names, headings and text in one row of an in-memory FTS5
    table (the index's own tokenizer), the query's words OR-ed; scores relative to the best."""

    def __init__(self, conn: Any, names: Names, props: bool = False) -> None:
        import sqlean

        rows = conn.execute(
            "SELECT n.path, min(c.id), min(c.start_line), n.title,"
            " group_concat(f.headings || char(10) || f.body, char(10)), n.frontmatter"
            " FROM notes n JOIN chunks c ON c.note_id = n.id"
            " JOIN chunks_fts f ON f.rowid = c.id WHERE n.kind = 'note' GROUP BY n.id"
        ).fetchall()
        self.first = {r[0]: (r[1], r[2], r[3]) for r in rows}
        self.db = sqlean.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, names, body,"
                        " tokenize = 'porter unicode61 remove_diacritics 2')")
        self.db.executemany(
            "INSERT INTO docs VALUES (?, ?, ?)",
            [(r[0], "\n".join(names[r[0]]), (r[4] or "") + (_values(r[5]) if props else ""))
             for r in rows])

    def scores(self, words: Sequence[str], k: int = 100) -> dict[str, float]:
        if not words:
            return {}
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT path, -bm25(docs, 4.0, 1.0) FROM docs WHERE docs MATCH ?"
                               " ORDER BY bm25(docs, 4.0, 1.0) LIMIT ?", (match, k)).fetchall()
        top = rows[0][1] if rows and rows[0][1] > 0 else 0.0
        return {p: s / top for p, s in rows} if top else {}

    def candidate(self, path: str) -> ranking.Candidate:
        chunk_id, line, title = self.first[path]
        return ranking.Candidate(chunk_id, path, title, "", line, line)


def hybrid(weights: ranking.Weights, *, rare: bool = False, names: bool = False,
           borrow: bool = False, richer: bool = False, name_candidates: bool = False,
           note_candidates: int = 0, props: bool = False) -> Callable[[Any], Run]:
    def make(vault: Any) -> Run:
        conn = vault.conn
        lookup = Names(conn, richer)
        name_index = NameIndex(conn, lookup) if name_candidates else None
        notes = NoteBm25(conn, lookup, props) if weights.note else None
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
            if name_index is not None:
                have = {c.path for c in args[0]}
                extra = [c for c in name_index.candidates(set(args[2])) if c.path not in have]
                args = (list(args[0]) + extra, *args[1:])
            if notes is not None:
                scores = notes.scores(sorted(args[2]))
                kwargs["note_scores"] = scores
                if note_candidates:
                    have = {c.path for c in args[0]}
                    best = sorted(scores, key=lambda p: -scores[p])[:note_candidates]
                    extra = [notes.candidate(p) for p in best if p not in have]
                    args = (list(args[0]) + extra, *args[1:])
            return plain_rank(*args, **kwargs)

        def run(q: str) -> list[tuple[str, str]]:
            query = search.Query(q, 10, "hybrid", weights=weights)
            with contextlib.ExitStack() as stack:
                if rare:
                    stack.enter_context(swapped(search, "fts_queries", rare_queries))
                stack.enter_context(swapped(ranking, "rank", rank))
                result = search.run(conn, query, vault.embedder, None, vault.index.current_matrix())
            return [(h.path, h.header) for h in result.hits]

        return run

    return make


def _plain(vault: Any, weights: ranking.Weights, swap: dict[str, Any] | None = None) -> Run:
    """vaultmem's own hybrid search with these weights (and search's constants in `swap`;
    "text.NAME" names a constant of vaultmem.store.text)."""
    from vaultmem.store import text as store_text

    def run(q: str) -> list[tuple[str, str]]:
        query = search.Query(q, 10, "hybrid", weights=weights)
        with contextlib.ExitStack() as stack:
            for name, value in (swap or {}).items():
                module: Any = search
                if name.startswith("text."):
                    module, name = store_text, name.removeprefix("text.")
                elif name.startswith("ranking."):
                    module, name = ranking, name.removeprefix("ranking.")
                stack.enter_context(swapped(module, name, value))
            result = search.run(
                vault.conn, query, vault.embedder, None, vault.index.current_matrix()
            )
        return [(h.path, h.header) for h in result.hits]

    return run


def _centroids(vault: Any, weight: float) -> Run:
    """As _cards, with each note's vector the mean of its sections' vectors (no new
    embedding: read from the vectors held in memory)."""
    matrix, paths = _note_centroids(vault)
    return _note_vectors(vault, matrix, paths, weight)


def _cards(vault: Any, weight: float) -> Run:
    """Whole notes OR-ed, plus a meaning signal over note "cards": each note's names, its
    headings and the start of its first section, embedded once by the vault's model; a
    note's card similarity (scaled between the worst and best candidate) times `weight`, and
    the 20 notes whose cards are nearest join the candidates."""
    import numpy as np

    conn = vault.conn
    rows = conn.execute(
        "SELECT n.id, n.path, n.title, n.names, n.aliases,"
        " (SELECT group_concat(h.text, ' · ') FROM headings h WHERE h.note_id = n.id),"
        " (SELECT f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.id"
        "  WHERE c.note_id = n.id ORDER BY c.seq LIMIT 1)"
        " FROM notes n WHERE n.kind = 'note'").fetchall()
    paths = [r[1] for r in rows]
    cards = []
    for _, _, title, names, aliases, heads, body in rows:
        named = " · ".join(dict.fromkeys([title, *json.loads(aliases), *json.loads(names)]))
        cards.append(f"{named}\n{(heads or '')[:300]}\n{(body or '')[:400]}")
    model = vault.embedder()
    matrix = np.vstack([model.embed(cards[i:i + 512]) for i in range(0, len(cards), 512)])
    return _note_vectors(vault, matrix, paths, weight)


def _note_vectors(vault: Any, matrix: Any, paths: list[str], weight: float) -> Run:
    """A `card` signal from one vector per note (rows of `matrix`, in `paths` order)."""
    import numpy as np

    conn = vault.conn
    model = vault.embedder()
    matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    first = {r[1]: r for r in conn.execute(
        "SELECT c.id, n.path, n.title, c.start_line FROM notes n JOIN chunks c"
        " ON c.note_id = n.id AND c.seq = 0")}
    plain_rank = ranking.rank
    state: dict[str, Any] = {}

    def rank(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        sims = state["sims"]
        cands = list(args[0])
        have = {c.path for c in cands}
        for i in np.argsort(-sims)[:20]:
            p = paths[int(i)]
            if p not in have and p in first:
                cid, _, title, line = first[p]
                cands.append(ranking.Candidate(cid, p, title, "", line, line))
        ranked = plain_rank(cands, *args[1:], **{**kwargs, "limit": 200})
        index = {p: i for i, p in enumerate(paths)}
        got = [float(sims[index[r.path]]) for r in ranked if r.path in index]
        low, high = (min(got), max(got)) if got else (0.0, 1.0)
        out = []
        for r in ranked:
            s = float(sims[index[r.path]]) if r.path in index else low
            extra = weight * ((s - low) / (high - low) if high > low else 0.0)
            out.append(ranking.Ranked(r.path, r.best, r.score + extra, (*r.parts, ("card", extra))))
        out.sort(key=lambda r: (-r.score, r.path))
        return out[: kwargs.get("limit", 10)]

    def run(q: str) -> list[tuple[str, str]]:
        state["sims"] = matrix @ model.embed([q])[0]
        query = search.Query(q, 10, "hybrid", weights=ranking.Weights())
        with swapped(search, "NOTES_AND_FIRST", False), swapped(ranking, "rank", rank):
            result = search.run(conn, query, vault.embedder, None, vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


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


# The defaults before issue 13's winners were turned on (no title, no whole-note signal): the
# baseline the new defaults are measured against in the same run. The variants below were
# measured against it (docs/BENCHMARKS.md, "Ranking ideas").
BEFORE = replace(ranking.Weights(), title=0.0, note=0.0, authority=0.0)
BASE = BEFORE
VARIANTS: dict[str, Callable[[Any], Run]] = {
    "defaults": lambda vault: _plain(vault, ranking.Weights()),
    "before": lambda vault: _plain(vault, BEFORE),
    "notes-or": lambda vault: _plain(vault, ranking.Weights(), swap={"NOTES_AND_FIRST": False}),
    "notes-and100": lambda vault: _plain(vault, ranking.Weights(), swap={"NOTES_ENOUGH": 100}),
    "notes-or-cards0.3": lambda vault: _cards(vault, 0.3),
    "notes-or-cards0.6": lambda vault: _cards(vault, 0.6),
    "title-only": lambda vault: _plain(vault, replace(ranking.Weights(), note=0.0)),
    "note-only": lambda vault: _plain(vault, replace(ranking.Weights(), title=0.0)),
    "notes-or-note1.0": lambda vault: _plain(
        vault, replace(ranking.Weights(), note=1.0), swap={"NOTES_AND_FIRST": False}
    ),
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
    # names beyond the file name: front matter `title:`, a folder note's folder name; and
    # the notes so named joining the candidates
    "names+title0.5": hybrid(replace(BASE, title=0.5), names=True, richer=True),
    "names+title1.0": hybrid(replace(BASE, title=1.0), names=True, richer=True),
    "names+title0.5+evidence0.1": hybrid(replace(BASE, title=0.5, evidence=0.1), names=True,
                                         richer=True),
    "names+cand+title0.5": hybrid(replace(BASE, title=0.5), names=True, richer=True,
                                  name_candidates=True),
    "names+cand+title1.0": hybrid(replace(BASE, title=1.0), names=True, richer=True,
                                  name_candidates=True),
    "names+cand+title0.5+evidence0.1": hybrid(replace(BASE, title=0.5, evidence=0.1),
                                              names=True, richer=True, name_candidates=True),
    # a keyword match over the whole note, its best notes joining the candidates
    "note0.3": hybrid(replace(BASE, note=0.3), note_candidates=20),
    "note0.6": hybrid(replace(BASE, note=0.6), note_candidates=20),
    "note1.0": hybrid(replace(BASE, note=1.0), note_candidates=20),
    "names+title0.5+note0.6": hybrid(replace(BASE, title=0.5, note=0.6), names=True,
                                     richer=True, note_candidates=20),
    "names+title0.5+note0.6+evidence0.1": hybrid(
        replace(BASE, title=0.5, note=0.6, evidence=0.1), names=True, richer=True,
        note_candidates=20),
    "props+note0.6": hybrid(replace(BASE, note=0.6), note_candidates=20, props=True),
    "names+title0.5+props+note0.6": hybrid(replace(BASE, title=0.5, note=0.6), names=True,
                                           richer=True, note_candidates=20, props=True),
    # the meaning weight, for a stronger model than the one 0.3 was measured with
    "vector0.5": hybrid(replace(BASE, vector=0.5)),
    "vector0.8": hybrid(replace(BASE, vector=0.8)),
    "vector1.2": hybrid(replace(BASE, vector=1.2)),
}


# Round 3 (engineer C): fusion, names as candidates, bm25 column weights, question words.
def _bm25(weights: tuple[float, ...]) -> str:
    return f"bm25(chunks_fts, {', '.join(str(w) for w in weights)})"


def _note_bm25(weights: tuple[float, float]) -> str:
    return f"bm25(notes_fts, {weights[0]}, {weights[1]})"


# words of a question that say how it is asked, not what it is about
QUESTION_WORDS = frozenset(
    ["vs", "versus", "difference", "between", "way", "using", "use", "mean", "means",
     "meaning", "javascript", "js", "css", "html", "browser", "web", "page", "code"])
DEFAULTS = ranking.Weights()  # from round 4 on, with link authority 0.3: "before" it, use
# replace(DEFAULTS, authority=0.0) (round 4's tables do, as "defaults")
VARIANTS.update({
    "rrf": lambda vault: _plain(vault, replace(DEFAULTS, fusion="rrf")),
    "rrf-k10": lambda vault: _plain(vault, replace(DEFAULTS, fusion="rrf", rrf_k=10)),
    "named10": lambda vault: _plain(vault, DEFAULTS, swap={"NAMED_CANDIDATES": 10}),
    "named10-title0.8": lambda vault: _plain(
        vault, replace(DEFAULTS, title=0.8), swap={"NAMED_CANDIDATES": 10}),
    "title0.8": lambda vault: _plain(vault, replace(DEFAULTS, title=0.8)),
    "title0.3": lambda vault: _plain(vault, replace(DEFAULTS, title=0.3)),
    "note0.8": lambda vault: _plain(vault, replace(DEFAULTS, note=0.8)),
    "note0.4": lambda vault: _plain(vault, replace(DEFAULTS, note=0.4)),
    "vec0.5": lambda vault: _plain(vault, replace(DEFAULTS, vector=0.5)),
    "vec0.2": lambda vault: _plain(vault, replace(DEFAULTS, vector=0.2)),
    "vec0.4": lambda vault: _plain(vault, replace(DEFAULTS, vector=0.4)),  # round 5 (MiniLM)
    "vec0.35": lambda vault: _plain(vault, replace(DEFAULTS, vector=0.35)),  # round 6
    "keyword0.7": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.7)),
    "heads8": lambda vault: _plain(vault, DEFAULTS, swap={
        "text.BM25": _bm25((10.0, 8.0, 8.0, 4.0, 2.0, 1.0, 0.25))}),
    "heads2": lambda vault: _plain(vault, DEFAULTS, swap={
        "text.BM25": _bm25((10.0, 8.0, 2.0, 4.0, 2.0, 1.0, 0.25))}),
    "path5": lambda vault: _plain(vault, DEFAULTS, swap={
        "text.BM25": _bm25((10.0, 8.0, 4.0, 4.0, 5.0, 1.0, 0.25))}),
    "path0.5": lambda vault: _plain(vault, DEFAULTS, swap={
        "text.BM25": _bm25((10.0, 8.0, 4.0, 4.0, 0.5, 1.0, 0.25))}),
    "notenames8": lambda vault: _plain(vault, DEFAULTS, swap={
        "text._NOTE_BM25": _note_bm25((8.0, 1.0))}),
    "notenames2": lambda vault: _plain(vault, DEFAULTS, swap={
        "text._NOTE_BM25": _note_bm25((2.0, 1.0))}),
    "centroid0.3": lambda vault: _centroids(vault, 0.3),
    "centroid0.15": lambda vault: _centroids(vault, 0.15),
    "cards0.3": lambda vault: _cards(vault, 0.3),
    # the OR queries leave out words in more than this share of the sections (notes); 0.5 is
    # where bm25 gives a word no weight at all
    "common0.1": lambda vault: _plain(vault, DEFAULTS, swap={"COMMON_SHARE": 0.1}),
    "common0.2": lambda vault: _plain(vault, DEFAULTS, swap={"COMMON_SHARE": 0.2}),
    "common-off": lambda vault: _plain(vault, DEFAULTS, swap={"COMMON_SHARE": 1.0}),
    "qwords": lambda vault: _plain(vault, DEFAULTS, swap={
        "STOPWORDS": search.STOPWORDS | QUESTION_WORDS}),
})


# Round 4 (engineer R, session 3): priors and fields the earlier rounds did not try. Each one is
# a named signal handed to ranking.rank (`signals`: label, weight, a value in [0, 1] per note),
# so it is added where the real signals are (before the graph tie-breaker), with the defaults'
# weights otherwise unchanged.
Signal = tuple[str, float, dict[str, float]]
MakeSignals = Callable[[str, Sequence[ranking.Candidate]],
                       tuple[list[ranking.Candidate], list[Signal]]]


def _with_signals(vault: Any, weights: ranking.Weights, make: MakeSignals) -> Run:
    """vaultmem's hybrid search with `make(query, candidates)`'s extra candidates and signals."""
    plain_rank = ranking.rank
    state: dict[str, str] = {}

    def rank(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        extra, signals = make(state["q"], args[0])
        have = {c.chunk_id for c in args[0]}
        cands = list(args[0]) + [c for c in extra if c.chunk_id not in have]
        kwargs["signals"] = (*kwargs.get("signals", ()), *signals)
        return plain_rank(cands, *args[1:], **kwargs)

    def run(q: str) -> list[tuple[str, str]]:
        state["q"] = q
        query = search.Query(q, 10, "hybrid", weights=weights)
        with swapped(ranking, "rank", rank):
            result = search.run(vault.conn, query, vault.embedder, None,
                                vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


def _first_sections(conn: Any) -> dict[str, ranking.Candidate]:
    return {r[1]: ranking.Candidate(r[0], r[1], r[2], "", r[3], r[3]) for r in conn.execute(
        "SELECT c.id, n.path, n.title, c.start_line FROM notes n JOIN chunks c"
        " ON c.note_id = n.id AND c.seq = 0 WHERE n.kind = 'note'")}


def _slugs(conn: Any) -> dict[str, str]:
    """Front matter `slug:` (lower case) -> path: how MDN's own links name its pages."""
    out = {}
    for path, fm in conn.execute("SELECT path, frontmatter FROM notes WHERE kind = 'note'"
                                 " AND frontmatter LIKE '%\"slug\"%'"):
        slug = json.loads(fm).get("slug")
        if isinstance(slug, str):
            out[slug.strip("/").lower()] = path
    return out


def link_edges(conn: Any, slug: bool = False) -> set[tuple[str, str]]:
    """Distinct note -> note links (resolved by vaultmem; with `slug`, MDN's unresolved
    `/en-US/docs/<slug>` links too, by the target's front matter slug: an upper bound for what
    the prior would earn on MDN if its links resolved, not something vaultmem does)."""
    rows = conn.execute(
        "SELECT n.path, l.dst_path, l.target FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE n.kind = 'note'").fetchall()
    notes = {r[0] for r in conn.execute("SELECT path FROM notes WHERE kind = 'note'")}
    slugs = _slugs(conn) if slug else {}
    edges = set()
    for src, dst, target in rows:
        if dst is None and slugs and target.startswith("/en-US/docs/"):
            dst = slugs.get(target.removeprefix("/en-US/docs/").split("#")[0].strip("/").lower())
        if dst is not None and dst != src and dst in notes:
            edges.add((src, dst))
    return edges


def pagerank(edges: set[tuple[str, str]], damping: float = 0.85) -> dict[str, float]:
    """PageRank by power iteration (numpy; networkx's needs scipy, which is not installed);
    a note without out-links spreads its rank over every note."""
    import numpy as np

    nodes = sorted({n for e in edges for n in e})
    at = {n: i for i, n in enumerate(nodes)}
    src = np.array([at[a] for a, _ in edges])
    dst = np.array([at[b] for _, b in edges])
    n = len(nodes)
    out = np.bincount(src, minlength=n).astype(float)
    rank = np.full(n, 1.0 / n)
    for _ in range(100):
        spread = np.zeros(n)
        np.add.at(spread, dst, rank[src] / out[src])
        dangling = rank[out == 0].sum()
        new = (1 - damping) / n + damping * (spread + dangling / n)
        done = np.abs(new - rank).sum() < 1e-10
        rank = new
        if done:
            break
    return {node: float(rank[i]) for i, node in enumerate(nodes)}


def authority(edges: set[tuple[str, str]], how: str = "inlinks") -> dict[str, float]:
    """A note's link authority in [0, 1]: log-scaled in-degree (distinct linking notes) over
    the vault's largest, or PageRank on the same graph (log-scaled between the least and most)."""
    import math

    if not edges:
        return {}
    if how == "inlinks":
        count: dict[str, int] = {}
        for _, dst in edges:
            count[dst] = count.get(dst, 0) + 1
        top = math.log1p(max(count.values()))
        return {p: math.log1p(n) / top for p, n in count.items()}
    pr = pagerank(edges)
    low, high = min(pr.values()), max(pr.values())
    if high <= low:
        return {}
    return {p: math.log(v / low) / math.log(high / low) for p, v in pr.items()}


def _authority(vault: Any, weight: float, how: str = "inlinks", slug: bool = False,
               weights: ranking.Weights | None = None) -> Run:
    values = authority(link_edges(vault.conn, slug), how)
    return _with_signals(vault, weights or DEFAULTS,
                         lambda q, cands: ([], [("authority", weight, values)]))


def _hubness(conn: Any) -> dict[str, float]:
    """How much a note is a list of links: its links per word of text, 0 below one link in
    twenty words, 1 from one in five."""
    words = dict(conn.execute(
        "SELECT n.path, sum(length(f.body) - length(replace(f.body, ' ', '')) + 1)"
        " FROM notes n JOIN chunks c ON c.note_id = n.id JOIN chunks_fts f ON f.rowid = c.id"
        " WHERE n.kind = 'note' GROUP BY n.id").fetchall())
    links = dict(conn.execute("SELECT n.path, count(*) FROM links l JOIN notes n"
                              " ON n.id = l.src_id GROUP BY n.id").fetchall())
    out = {}
    for path, n in links.items():
        ratio = n / max(1, words.get(path, 1))
        if ratio > 0.05:
            out[path] = min(1.0, (ratio - 0.05) / 0.15)
    return out


def _hub_penalty(vault: Any, weight: float) -> Run:
    values = _hubness(vault.conn)
    return _with_signals(vault, DEFAULTS, lambda q, cands: ([], [("hub", -weight, values)]))


def _note_centroids(vault: Any) -> tuple[Any, list[str]]:
    """One normalised vector per note: the mean of its sections' vectors (from memory)."""
    import numpy as np

    conn = vault.conn
    held = vault.index.current_matrix()
    note_of = dict(conn.execute("SELECT c.id, n.path FROM chunks c JOIN notes n"
                                " ON n.id = c.note_id WHERE n.kind = 'note'").fetchall())
    paths = sorted(set(note_of.values()))
    place = {p: i for i, p in enumerate(paths)}
    rows = np.array([place.get(note_of.get(int(i), ""), -1) for i in held.ids])
    keep = rows >= 0
    matrix = np.zeros((len(paths), held.matrix.shape[1]), dtype=np.float32)
    np.add.at(matrix, rows[keep], held.matrix[keep])
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    return matrix, paths


def _centroid(vault: Any, weight: float, weights: ranking.Weights | None = None,
              nearest: int = 20, also: Callable[..., Any] | None = None) -> Run:
    """A `centroid` signal: the query's similarity to each candidate note's mean vector,
    scaled between the lowest and highest among the candidates; the `nearest` notes by it
    join the candidates (by their first section)."""
    import numpy as np

    matrix, paths = _note_centroids(vault)
    index = {p: i for i, p in enumerate(paths)}
    first = _first_sections(vault.conn)
    model = vault.embedder()

    def make(q: str, cands: Sequence[ranking.Candidate]) -> tuple[list[Any], list[Signal]]:
        sims = matrix @ model.embed([q])[0]
        extra = [first[paths[int(i)]] for i in np.argsort(-sims)[:nearest]
                 if paths[int(i)] in first]
        pool = {c.path for c in cands} | {c.path for c in extra}
        got = {p: float(sims[index[p]]) for p in pool if p in index}
        low, high = (min(got.values()), max(got.values())) if got else (0.0, 1.0)
        spread = high - low
        values = {p: (s - low) / spread if spread > 0 else 0.0 for p, s in got.items()}
        signals: list[Signal] = [("centroid", weight, values)]
        if also is not None:
            more, more_signals = also(q, cands)
            extra += more
            signals += more_signals
        return extra, signals

    return _with_signals(vault, weights or DEFAULTS, make)


_FRONT = re.compile(r"\A---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_MACRO = re.compile(r"\{\{[^{}]*\}\}")


def _macro_word(m: re.Match[str]) -> str:
    """A template macro as the name it refers to: {{domxref("Window")}} -> Window."""
    quoted = re.search(r'"([^"]*)"', m.group(0))
    return f" {quoted.group(1)} " if quoted else " "


def lead_paragraph(text: str) -> str:
    """A note's opening sentence(s): the first paragraph of prose after the front matter (not
    a heading, quote or callout, list, table, code or a line of template macros), as plain
    text, 400 characters at most."""
    body = _FRONT.sub("", text, count=1)
    fenced = False
    para: list[str] = []
    for line in [*body.splitlines(), ""]:
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fenced = not fenced
            para = []
            continue
        if fenced:
            continue
        if not s:
            joined = search.plain_text(_MACRO.sub(_macro_word, " ".join(para)))
            if len(joined.split()) >= 4:
                return joined[:400]
            para = []
            continue
        if s.startswith(("#", ">", "|", "- ", "* ", "<!--", "![[")) or _MACRO.fullmatch(s):
            para = []
            continue
        para.append(s)
    return ""


class LeadBm25:
    """bm25 over every note's lead paragraph (an in-memory FTS5 table, the index's
    tokenizer), the query's words OR-ed; scores relative to the best."""

    def __init__(self, vault: Any) -> None:
        import sqlean

        root = vault.root
        rows = []
        for (path,) in vault.conn.execute("SELECT path FROM notes WHERE kind = 'note'"):
            try:
                text = (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lead = lead_paragraph(text)
            if lead:
                rows.append((path, lead))
        self.leads = dict(rows)
        self.db = sqlean.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE leads USING fts5(path UNINDEXED, lead,"
                        " tokenize = 'porter unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO leads VALUES (?, ?)", rows)

    def scores(self, q: str, k: int = 100) -> dict[str, float]:
        words = search.query_words(q)
        if not words:
            return {}
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT path, -bm25(leads) FROM leads WHERE leads MATCH ?"
                               " ORDER BY bm25(leads) LIMIT ?", (match, k)).fetchall()
        top = rows[0][1] if rows and rows[0][1] > 0 else 0.0
        return {p: s / top for p, s in rows} if top else {}


def _lead_maker(vault: Any, weight: float, cands_n: int = 0) -> MakeSignals:
    leads = LeadBm25(vault)
    first = _first_sections(vault.conn)

    def make(q: str, cands: Sequence[ranking.Candidate]) -> tuple[list[Any], list[Signal]]:
        scores = leads.scores(q)
        best = sorted(scores, key=lambda p: -scores[p])[:cands_n]
        return [first[p] for p in best if p in first], [("lead", weight, scores)]

    return make


def _lead(vault: Any, weight: float, cands_n: int = 0,
          weights: ranking.Weights | None = None) -> Run:
    return _with_signals(vault, weights or DEFAULTS, _lead_maker(vault, weight, cands_n))


def adjacent_pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.pairwise(words))


def phrase_share(pairs: Sequence[tuple[str, str]], texts: Sequence[str]) -> float:
    """The share of the query's adjacent word pairs that stand next to each other in one of
    `texts` (a word longer than ranking.STEM letters matches by its first STEM letters)."""
    if not pairs:
        return 0.0

    def same(a: str, b: str) -> bool:
        return a == b or (len(a) > ranking.STEM and b.startswith(a[: ranking.STEM]))

    seqs = [[w.lower() for w in ranking._WORD_RE.findall(t)] for t in texts]
    hit = 0
    for a, b in pairs:
        if any(same(a, s[i]) and same(b, s[i + 1]) for s in seqs for i in range(len(s) - 1)):
            hit += 1
    return hit / len(pairs)


def _phrase_maker(vault: Any, weight: float, headings: bool = True) -> MakeSignals:
    conn = vault.conn
    cache: dict[str, list[str]] = {}

    def texts(path: str) -> list[str]:
        if path not in cache:
            row = conn.execute("SELECT id, title, names, aliases FROM notes WHERE path = ?",
                               (path,)).fetchone()
            if row is None:
                cache[path] = []
            else:
                out = [row[1], *json.loads(row[2]), *json.loads(row[3])]
                if headings:
                    out += [r[0] for r in conn.execute(
                        "SELECT text FROM headings WHERE note_id = ?", (row[0],))]
                cache[path] = out
        return cache[path]

    def make(q: str, cands: Sequence[ranking.Candidate]) -> tuple[list[Any], list[Signal]]:
        pairs = adjacent_pairs(search.query_words(q))
        if not pairs:
            return [], []
        values = {}
        for path in {c.path for c in cands}:
            share = phrase_share(pairs, texts(path))
            if share:
                values[path] = share
        return [], [("phrase", weight, values)]

    return make


def _phrase(vault: Any, weight: float, headings: bool = True) -> Run:
    return _with_signals(vault, DEFAULTS, _phrase_maker(vault, weight, headings))


VARIANTS.update({
    "r3-defaults": lambda vault: _plain(vault, replace(DEFAULTS, authority=0.0)),
    "r4-defaults": lambda vault: _with_signals(vault, DEFAULTS, lambda q, c: ([], [])),
    "inlinks0.1": lambda vault: _authority(vault, 0.1),
    "inlinks0.2": lambda vault: _authority(vault, 0.2),
    "inlinks0.4": lambda vault: _authority(vault, 0.4),
    "pagerank0.2": lambda vault: _authority(vault, 0.2, "pagerank"),
    "slug-inlinks0.1": lambda vault: _authority(vault, 0.1, slug=True),
    "slug-inlinks0.2": lambda vault: _authority(vault, 0.2, slug=True),
    "slug-inlinks0.4": lambda vault: _authority(vault, 0.4, slug=True),
    "slug-pagerank0.2": lambda vault: _authority(vault, 0.2, "pagerank", slug=True),
    "hub0.2": lambda vault: _hub_penalty(vault, 0.2),
    "centroid0.3b": lambda vault: _centroid(vault, 0.3),
    "centroid0.2b": lambda vault: _centroid(vault, 0.2),
    "centroid0.3-nocand": lambda vault: _centroid(vault, 0.3, nearest=0),
    "centroid0.3+title0.8": lambda vault: _centroid(vault, 0.3, replace(DEFAULTS, title=0.8)),
    "centroid0.3+note0.8": lambda vault: _centroid(vault, 0.3, replace(DEFAULTS, note=0.8)),
    "lead0.2": lambda vault: _lead(vault, 0.2),
    "lead0.4": lambda vault: _lead(vault, 0.4),
    "lead0.4+cand": lambda vault: _lead(vault, 0.4, cands_n=20),
    "lead0.8": lambda vault: _lead(vault, 0.8),
    "phrase0.1": lambda vault: _phrase(vault, 0.1),
    "phrase0.2": lambda vault: _phrase(vault, 0.2),
    "phrase-names0.2": lambda vault: _phrase(vault, 0.2, headings=False),
    "centroid0.3+lead0.4": lambda vault: _centroid(
        vault, 0.3, also=_lead_maker(vault, 0.4)),
})


# Link authority as built (ranking.Weights.authority, store.linking_note_counts: resolved links
# and URL-style links to a note's slug or permalink), at two scales.
def _auth(weight: float, scale: int = 1000, **more: float) -> Callable[[Any], Run]:
    return lambda vault: _plain(vault, replace(DEFAULTS, authority=weight, **more),
                                swap={"ranking.AUTHORITY_SCALE": scale})


VARIANTS.update({
    "auth0.2": _auth(0.2),
    "auth0.3": _auth(0.3),
    "auth0.4": _auth(0.4),
    "auth0.6": _auth(0.6),
    "auth0.2-s100": _auth(0.2, 100),
    "auth0.3-s100": _auth(0.3, 100),
    "auth0.4-s100": _auth(0.4, 100),
    "auth0.4+title0.8": _auth(0.4, title=0.8),
    "auth0.4+note0.8": _auth(0.4, note=0.8),
    "auth0.4+centroid0.3": lambda vault: _centroid(
        vault, 0.3, replace(DEFAULTS, authority=0.4)),
})
VARIANTS.update({
    "auth0.3+centroid0.3": lambda vault: _centroid(vault, 0.3, replace(DEFAULTS, authority=0.3)),
    "auth0.3+centroid0.3-nocand": lambda vault: _centroid(
        vault, 0.3, replace(DEFAULTS, authority=0.3), nearest=0),
})


# Round 5 (engineer X, session 4): query expansion by word neighbours, identifier words in
# names, MiniLM title cards. Each is a variant of the real search (the defaults' weights).
CARD_TOKENS = 32  # a MiniLM title card: a note's name and the start of its first section


def card_texts(conn: Any) -> tuple[list[str], list[str]]:
    """Each note's MiniLM card: its best name (the front matter title or H1 when the indexer
    found one, else its title) and its first section as plain text; paths in the same order."""
    rows = conn.execute(
        "SELECT n.path, n.title, n.names, (SELECT f.body FROM chunks c JOIN chunks_fts f"
        " ON f.rowid = c.id WHERE c.note_id = n.id ORDER BY c.seq LIMIT 1)"
        " FROM notes n WHERE n.kind = 'note' ORDER BY n.path").fetchall()
    paths, texts = [], []
    for path, title, names, body in rows:
        named = json.loads(names or "[]")
        name = named[0] if named else title
        paths.append(path)
        texts.append(f"{name}. {search.plain_text(_MACRO.sub(_macro_word, (body or '')[:1500]))}")
    return paths, texts


def minilm_cards(conn: Any, cache: Any) -> tuple[Any, list[str]]:
    """The notes' MiniLM card vectors (normalised), embedded once and kept in `cache` (.npz;
    rebuilt when the notes differ); prints what embedding them cost."""
    import os
    import sys
    import time

    import numpy as np

    from vaultmem import encoder

    paths, texts = card_texts(conn)
    if os.path.exists(cache):
        held = np.load(cache, allow_pickle=False)
        if list(held["paths"]) == paths:
            return held["matrix"], paths
    model = encoder.minilm()
    cpu, wall = time.process_time(), time.perf_counter()
    matrix = model.embed(texts, threads=1, max_tokens=CARD_TOKENS + 2)  # + [CLS] and [SEP]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    print(f"MiniLM cards: {len(texts)} notes, {cpu:.1f} CPU-s, {wall:.1f} s wall,"
          f" load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    np.savez(cache, matrix=matrix.astype(np.float32), paths=np.array(paths),
             cpu_s=cpu, wall_s=wall)
    return matrix, paths


_SURFACE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\w+")


def surface_words(text: str) -> set[str]:
    """A text's words, lower-cased, with identifiers also split where their case changes
    (`toUpperCase` gives touppercase, to, upper, case)."""
    out = {w.lower() for w in re.findall(r"\w+", text)}
    out |= {w.lower() for w in _SURFACE.findall(text)}
    return {w for w in out if w.isalpha() and len(w) >= 3}


def porter_stems(words: Sequence[str]) -> dict[str, str]:
    """Each word's stem as the index's tokenizer makes it (FTS5's porter, asked in memory)."""
    import sqlean

    db = sqlean.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE w USING fts5(t, tokenize = 'porter unicode61"
               " remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(w, 'instance')")
    db.executemany("INSERT INTO w(rowid, t) VALUES (?, ?)", enumerate(words, start=1))
    stems = {words[doc - 1]: term for term, doc in db.execute("SELECT term, doc FROM v")}
    return {w: stems.get(w, w) for w in words}


class Vocabulary:
    """The index's own words (surface forms, identifiers split), each with the number of
    sections holding it and a word vector from `model` ("wordllama": the vault's model;
    "minilm": the packaged MiniLM, each word alone through the encoder), kept in a cache."""

    def __init__(self, conn: Any, model: str, cache: str, min_df: int = 2) -> None:
        import os
        import sys
        import time

        import numpy as np

        self.model = model
        if os.path.exists(cache):
            held = np.load(cache, allow_pickle=False)
            self.words = [str(w) for w in held["words"]]
            self.df = held["df"]
            self.matrix = held["matrix"]
        else:
            cpu, wall = time.process_time(), time.perf_counter()
            df: dict[str, int] = {}
            for heads, body in conn.execute("SELECT headings, body FROM chunks_fts"):
                for w in surface_words(f"{heads}\n{body}"):
                    df[w] = df.get(w, 0) + 1
            self.words = sorted(w for w, n in df.items() if n >= min_df)
            self.df = np.array([df[w] for w in self.words], dtype=np.int64)
            counted = time.process_time() - cpu
            self.matrix = self._embed(self.words)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(f"vocabulary ({model}): {len(self.words)} words; {counted:.1f} CPU-s counting,"
                  f" {cpu - counted:.1f} embedding; {wall:.1f} s wall", file=sys.stderr,
                  flush=True)
            np.savez(cache, words=np.array(self.words), df=self.df, matrix=self.matrix)
        self.at = {w: i for i, w in enumerate(self.words)}
        self.prose = self._prose(conn, cache.replace(".npz", "-prose.npz"))
        self.stem = porter_stems(self.words)
        self.sections = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        self.cache: dict[str, Any] = {}

    def _prose(self, conn: Any, cache: str) -> Any:
        """Per word, the sections where it stands as a lower-case word of its own (prose, not
        a fragment of an identifier such as `createArticle`)."""
        import os

        import numpy as np

        if os.path.exists(cache):
            return np.load(cache)["prose"]
        counts = np.zeros(len(self.words), dtype=np.int64)
        for heads, body in conn.execute("SELECT headings, body FROM chunks_fts"):
            for w in set(re.findall(r"\b[a-z]+\b", f"{heads}\n{body}")):
                i = self.at.get(w)
                if i is not None:
                    counts[i] += 1
        np.savez(cache, prose=counts)
        return counts

    def _embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if self.model == "minilm":
            from vaultmem import encoder

            v = encoder.minilm().embed(list(texts), threads=1)
        else:
            from vaultmem import embed

            v = embed.WordLlamaEmbedder().embed(list(texts))
        v = np.asarray(v, dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    def vector(self, text: str) -> Any:
        if text not in self.cache:
            i = self.at.get(text)
            self.cache[text] = self.matrix[i] if i is not None else self._embed([text])[0]
        return self.cache[text]

    def neighbours(self, vec: Any, avoid: set[str], k: int, floor: float,
                   max_share: float, min_prose: int = 0) -> list[tuple[str, float]]:
        """The `k` words nearest `vec` at `floor` or more, not one of `avoid`'s stems and held
        by at most `max_share` of the sections."""
        import numpy as np

        sims = self.matrix @ vec
        out: list[tuple[str, float]] = []
        stems = {self.stem.get(a) or porter_stems([a])[a] for a in avoid}
        for i in np.argsort(-sims)[:60]:
            if sims[i] < floor:
                break
            w = self.words[int(i)]
            if w in avoid or self.stem[w] in stems or self.df[i] > max_share * self.sections:
                continue
            if any(w.startswith(a[:5]) and len(a) >= 5 for a in avoid):
                continue
            if min_prose and (self.prose[i] < min_prose
                              or any(a in w or w in a for a in avoid if len(a) >= 3)):
                continue
            out.append((w, float(sims[i])))
            if len(out) == k:
                break
        return out


def _db_path(conn: Any) -> str:
    return str(conn.execute("PRAGMA database_list").fetchone()[2])


def _vocabulary(conn: Any, model: str) -> Vocabulary:
    import hashlib

    key = hashlib.blake2b(_db_path(conn).encode(), digest_size=6).hexdigest()
    import os

    folder = os.environ.get("VAULTMEM_BENCH_TMP", "/tmp")
    return Vocabulary(conn, model, f"{folder}/vocab-{key}-{model}.npz")


def expansion_words(vocab: Vocabulary, q: str, how: str, k: int, floor: float,
                    max_share: float, min_prose: int = 0, word_share: float = 1.0) -> list[str]:
    """Words of the index near the query's: per query word ("word") or near the whole query
    ("query"), not the query's own words or their forms."""
    words = search.query_words(q)
    avoid = set(words)
    if how == "query":
        return [w for w, _ in vocab.neighbours(vocab._embed([q])[0], avoid, k, floor, max_share,
                                                min_prose)]
    out: list[str] = []
    for w in words:
        if len(w) < 3 or not w.isalpha():
            continue
        i = vocab.at.get(w)
        if i is not None and vocab.df[i] > word_share * vocab.sections:
            continue  # a common word: its neighbours are as common and say as little
        for u, _ in vocab.neighbours(vocab.vector(w), avoid, k, floor, max_share, min_prose):
            if u not in out:
                out.append(u)
    return out


def _expanded(vault: Any, model: str = "wordllama", how: str = "word", k: int = 2,
              floor: float = 0.45, weight: float = 0.3, max_share: float = 0.05,
              notes: bool = True, log: bool = False, min_prose: int = 0,
              word_share: float = 1.0, also: MakeSignals | None = None) -> Run:
    """The query's keyword evidence plus `weight` x the bm25 of its expansion words (word
    neighbours in the index's vocabulary), for sections and whole notes: bm25 is a sum over
    the query's terms, so this is bm25 with the expansion terms weighted `weight`."""
    conn = vault.conn
    vocab = _vocabulary(conn, model)
    first = _first_sections(conn)
    from vaultmem import store

    def make(q: str, cands: Sequence[ranking.Candidate], kwargs: dict[str, Any]
             ) -> list[ranking.Candidate]:
        extra = expansion_words(vocab, q, how, k, floor, max_share, min_prose, word_share)
        if log:
            print(f"  {q!r} + {extra}", flush=True)
        if not extra:
            return list(cands)
        match = " OR ".join(f'"{w}"' for w in extra)
        by_id = {c.chunk_id: c for c in cands}
        for m in store.keyword_chunks(conn, match, search.CANDIDATES):
            old = by_id.get(m.id)
            add = weight * -m.bm25
            if old is None:
                by_id[m.id] = ranking.Candidate(m.id, m.path, m.title, m.heading, m.start_line,
                                                m.end_line, keyword=add)
            else:
                by_id[m.id] = replace(old, keyword=(old.keyword or 0.0) + add)
        out = list(by_id.values())
        if notes and kwargs.get("note_scores") is not None:
            text = q
            whole = search.fts_queries(
                text, search.common_words(conn, search.query_words(text), "notes"))
            raw = dict(search._whole_notes(conn, whole)) if whole else {}
            for p, s in store.keyword_notes(conn, match, search.NOTES_SCORED):
                raw[p] = raw.get(p, 0.0) + weight * s
            top = max(raw.values(), default=0.0)
            if top > 0:
                kwargs["note_scores"] = {p: s / top for p, s in raw.items()}
                have = {c.path for c in out}
                best = sorted(raw, key=lambda p: -raw[p])[:search.NOTE_CANDIDATES]
                out += [first[p] for p in best if p not in have and p in first]
        return out

    plain_rank = ranking.rank
    state: dict[str, str] = {}

    def rank(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        cands = make(state["q"], args[0], kwargs)
        if also is not None:
            more, signals = also(state["q"], cands)
            have = {c.chunk_id for c in cands}
            cands += [c for c in more if c.chunk_id not in have]
            kwargs["signals"] = (*kwargs.get("signals", ()), *signals)
        return plain_rank(cands, *args[1:], **kwargs)

    def run(q: str) -> list[tuple[str, str]]:
        state["q"] = q
        query = search.Query(q, 10, "hybrid", weights=DEFAULTS)
        with swapped(ranking, "rank", rank):
            result = search.run(vault.conn, query, vault.embedder, None,
                                vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


VARIANTS.update({
    "r5-defaults": lambda vault: _with_signals(vault, DEFAULTS, lambda q, c: ([], [])),
    "xw-wl": lambda vault: _expanded(vault, "wordllama"),
    "xw-wl-log": lambda vault: _expanded(vault, "wordllama", log=True),
    "xw-ml": lambda vault: _expanded(vault, "minilm", floor=0.55),
    "xw-ml-log": lambda vault: _expanded(vault, "minilm", floor=0.55, log=True),
    "xq-ml-log": lambda vault: _expanded(vault, "minilm", "query", k=5, floor=0.45, log=True),
    "xq-wl-log": lambda vault: _expanded(vault, "wordllama", "query", k=5, floor=0.5, log=True),
})


def _card_maker(vault: Any, weight: float, nearest: int = 20) -> MakeSignals:
    """A `card` signal from MiniLM title cards (minilm_cards): the query's MiniLM similarity
    to each candidate note's card, scaled between the lowest and highest among the
    candidates; the `nearest` notes by it join the candidates (by their first section)."""
    import hashlib
    import os

    import numpy as np

    from vaultmem import encoder

    conn = vault.conn
    key = hashlib.blake2b(_db_path(conn).encode(), digest_size=6).hexdigest()
    folder = os.environ.get("VAULTMEM_BENCH_TMP", "/tmp")
    matrix, paths = minilm_cards(conn, f"{folder}/cards-{key}.npz")
    index = {p: i for i, p in enumerate(paths)}
    first = _first_sections(conn)
    model = encoder.minilm()

    def make(q: str, cands: Sequence[ranking.Candidate]) -> tuple[list[Any], list[Signal]]:
        vec = model.embed([q])[0]
        vec = vec / max(float(np.linalg.norm(vec)), 1e-9)
        extra = []
        if nearest:
            sims = matrix @ vec
            extra = [first[paths[int(i)]] for i in np.argsort(-sims)[:nearest]
                     if paths[int(i)] in first]
        pool = [p for p in {c.path for c in cands} | {c.path for c in extra} if p in index]
        got = dict(zip(pool, (matrix[[index[p] for p in pool]] @ vec).tolist(), strict=True))
        low, high = (min(got.values()), max(got.values())) if got else (0.0, 1.0)
        spread = high - low
        values = {p: (s - low) / spread if spread > 0 else 0.0 for p, s in got.items()}
        return extra, [("card", weight, values)]

    return make


def _minilm_card(vault: Any, weight: float, nearest: int = 20,
                 weights: ranking.Weights | None = None) -> Run:
    return _with_signals(vault, weights or DEFAULTS, _card_maker(vault, weight, nearest))


VARIANTS.update({
    "mcard0.3": lambda vault: _minilm_card(vault, 0.3),
    "mcard0.5": lambda vault: _minilm_card(vault, 0.5),
    "mcard0.3-nocand": lambda vault: _minilm_card(vault, 0.3, nearest=0),
})


def _x2(model: str, how: str = "word", **kw: Any) -> Callable[[Any], Run]:
    """Expansion with prose words only (5 sections or more, no compound of a query word),
    of the query's words held by at most 2 % of the sections."""
    return lambda vault: _expanded(vault, model, how, **{
        "min_prose": 5, "word_share": 0.02, **kw})


VARIANTS.update({
    "x2w-wl0.3": _x2("wordllama", floor=0.45),
    "x2w-ml0.3": _x2("minilm", floor=0.55),
    "x2w-ml0.15": _x2("minilm", floor=0.55, weight=0.15),
    "x2w-ml0.3-log": _x2("minilm", floor=0.55, log=True),
    "x2q-ml0.3": _x2("minilm", "query", k=4, floor=0.45),
    "x2q-ml0.15": _x2("minilm", "query", k=4, floor=0.45, weight=0.15),
    "x2q-ml0.3-log": _x2("minilm", "query", k=4, floor=0.45, log=True),
})


def split_identifier(name: str, known: Any = None) -> str:
    """A name's identifiers as words: split where the case changes (`toUpperCase` -> to Upper
    Case) and, given `known` (a set of words), a lower-case compound into two or three known
    words (`keydown` -> key down, `setinterval` -> set interval); "" when nothing splits."""
    out: list[str] = []
    changed = False
    for token in re.findall(r"\w+", name):
        pieces = _SURFACE.findall(token)
        if len(pieces) > 1:
            out += pieces
            changed = True
            continue
        parts = _compound(token.lower(), known) if known else None
        if parts:
            out += parts
            changed = True
        else:
            out.append(token)
    return " ".join(out) if changed else ""


def _compound(word: str, known: Any, depth: int = 0) -> list[str] | None:
    """`word` as two or three words of `known` (each of 3 letters or more), longest first."""
    if len(word) < 6 or depth > 1:
        return None
    for cut in range(len(word) - 3, 2, -1):
        head, tail = word[:cut], word[cut:]
        if head in known:
            if tail in known:
                return [head, tail]
            rest = _compound(tail, known, depth + 1)
            if rest:
                return [head, *rest]
    return None


def _idnames(vault: Any, title: bool = True, note: bool = True, compounds: bool = True,
             weights: ranking.Weights | None = None, split: bool = True) -> Run:
    """Identifiers in names split into words: for the title signal (one more name per note)
    and for the whole-note match (NoteBm25 over names with the split forms added)."""
    conn = vault.conn
    known: set[str] | None = None
    if compounds:
        vocab = _vocabulary(conn, "wordllama")
        known = {w for w, n in zip(vocab.words, vocab.prose, strict=True) if n >= 20}
    plain = dict(conn.execute("SELECT path, names FROM notes WHERE kind = 'note'").fetchall())
    titles = dict(conn.execute("SELECT path, title FROM notes WHERE kind = 'note'").fetchall())

    class Split(Names):
        def __getitem__(self, path: str) -> tuple[str, ...]:
            if path not in self.cache:
                own = (titles.get(path, ""), *json.loads(plain.get(path) or "[]"))
                extra = [s for n in own if split and (s := split_identifier(n, known))]
                self.cache[path] = (*own, *dict.fromkeys(extra))
            return self.cache[path]

    names = Split(conn)
    whole = NoteBm25(conn, names, props=True) if note else None
    first = _first_sections(conn)
    plain_rank = ranking.rank
    state: dict[str, str] = {}

    def rank(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        cands = list(args[0])
        if title:
            kwargs["names"] = names
        if whole is not None and kwargs.get("note_scores") is not None:
            words = search.query_words(state["q"])
            common = search.common_words(conn, words, "notes")
            scores = whole.scores([w for w in words if w not in common] or words)
            kwargs["note_scores"] = scores
            have = {c.path for c in cands}
            best = sorted(scores, key=lambda p: -scores[p])[:search.NOTE_CANDIDATES]
            cands += [first[p] for p in best if p not in have and p in first]
        return plain_rank(cands, *args[1:], **kwargs)

    def run(q: str) -> list[tuple[str, str]]:
        state["q"] = q
        query = search.Query(q, 10, "hybrid", weights=weights or DEFAULTS)
        with swapped(ranking, "rank", rank):
            result = search.run(conn, query, vault.embedder, None, vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


VARIANTS.update({
    "idnames": lambda vault: _idnames(vault),
    "idnames-nocomp": lambda vault: _idnames(vault, compounds=False),
    "idnames-title": lambda vault: _idnames(vault, note=False),
    "notebm25-control": lambda vault: _idnames(vault, title=False, split=False),
})

VARIANTS.update({
    "mcard0.5-nocand": lambda vault: _minilm_card(vault, 0.5, nearest=0),
    "mcard0.4-nocand": lambda vault: _minilm_card(vault, 0.4, nearest=0),
    "mcard0.3+x2q": lambda vault: _x2("minilm", "query", k=4, floor=0.45,
                                      also=_card_maker(vault, 0.3, 0))(vault),
    "mcard0.5+x2q": lambda vault: _x2("minilm", "query", k=4, floor=0.45,
                                      also=_card_maker(vault, 0.5, 0))(vault),
    "mcard0.3+x2w-wl": lambda vault: _x2("wordllama", floor=0.45,
                                         also=_card_maker(vault, 0.3, 0))(vault),
    "x2w-wl0.2": _x2("wordllama", floor=0.45, weight=0.2),
    "x2w-wl0.3-k1": _x2("wordllama", floor=0.45, k=1),
    "x2w-wl0.3-f0.5": _x2("wordllama", floor=0.5),
})


_COMPARED = (re.compile(r"^(.+?)\s+(?:vs\.?|versus)\s+(.+?)\??$", re.IGNORECASE),
             re.compile(r"difference between (.+?) and (.+?)\??$", re.IGNORECASE))
_OPERATOR = re.compile(r"[=!<>&|+\-*/%^~?:.]{2,}")


def compared_sides(q: str) -> list[str]:
    """The two things a comparison names ("== vs ===", "difference between let and var")."""
    for pattern in _COMPARED:
        m = pattern.search(q.strip())
        if m:
            return [m.group(1).strip(), m.group(2).strip()]
    return []


def side_match(side: str, names: Sequence[str]) -> float:
    """How well one of `names` is what one side of a comparison names: by its words (stop
    words kept: "for in" is the name `for...in`), or, for a side of symbols only ("=="), a name
    holding that operator as its own token."""
    words = {w.lower() for w in re.findall(r"\w+", side)}
    if words:
        return ranking.name_match(words, names)
    ops = set(_OPERATOR.findall(side))
    if not ops:
        return 0.0
    return 1.0 if any(ops & set(_OPERATOR.findall(n)) for n in names) else 0.0


def _comparison(vault: Any, weight: float = 0.5, per_side: int = 5, floor: float = 0.5) -> Run:
    """A comparison's two sides as names: the notes each side names best join the candidates
    (`per_side` at most, side_match `floor` or more), and a `compared` signal (`weight` x the
    better side's match) scores every candidate."""
    conn = vault.conn
    rows = conn.execute("SELECT path, title, names, aliases FROM notes WHERE kind = 'note'")
    every = {p: (t, *json.loads(n or "[]"), *json.loads(a or "[]")) for p, t, n, a in rows}
    first = _first_sections(conn)

    def make(q: str, cands: Sequence[ranking.Candidate]) -> tuple[list[Any], list[Signal]]:
        sides = compared_sides(q)
        if not sides:
            return [], []
        extra, values = [], {}
        for side in sides:
            scored = sorted(((side_match(side, ns), p) for p, ns in every.items()),
                            key=lambda sp: (-sp[0], sp[1]))
            extra += [first[p] for s, p in scored[:per_side] if s >= floor and p in first]
        for path in {c.path for c in cands} | {c.path for c in extra}:
            best = max(side_match(side, every.get(path, ())) for side in sides)
            if best:
                values[path] = best
        return extra, [("compared", weight, values)]

    return _with_signals(vault, DEFAULTS, make)


VARIANTS.update({
    "compared0.5": lambda vault: _comparison(vault, 0.5),
    "compared0.3": lambda vault: _comparison(vault, 0.3),
    "compared0.5-nocand": lambda vault: _comparison(vault, 0.5, per_side=0),
})


def _vs_stop(vault: Any, compared: float = 0.0) -> Run:
    """"vs" and "versus" as stop words (a comparison's marker, not what it is about), with the
    comparison signal at `compared`."""
    stop = search.STOPWORDS | {"vs", "versus"}
    if compared:
        make = _comparison(vault, compared)

        def run(q: str) -> list[tuple[str, str]]:
            with swapped(search, "STOPWORDS", stop):
                return make(q)

        return run
    return _plain(vault, DEFAULTS, swap={"STOPWORDS": stop})


VARIANTS.update({
    "vsstop": lambda vault: _vs_stop(vault),
    "compared0.5+vsstop": lambda vault: _vs_stop(vault, 0.5),
    "compared1.0": lambda vault: _comparison(vault, 1.0),
})


# --------------------------------------------------------------------------- round 6
# (engineer V, 2026-12-02): how the keyword, whole-note and meaning evidence meet. Each variant
# rewrites what ranking.rank is handed (candidates' keyword scores, the whole-note scores, the
# weights, extra signals) and calls the real rank, inside the real search.run.

Rewrite = Callable[[list[ranking.Candidate], dict[str, float] | None, ranking.Weights],
                   tuple[list[ranking.Candidate], dict[str, float] | None, ranking.Weights,
                         list[Signal]]]


def _rewritten(vault: Any, rewrite: Rewrite, weights: ranking.Weights = DEFAULTS) -> Run:
    plain_rank = ranking.rank

    def rank(cands: Sequence[ranking.Candidate], facts: Any, words: set[str],
             w: ranking.Weights = DEFAULTS, **kwargs: Any) -> list[ranking.Ranked]:
        new, notes, w2, signals = rewrite(list(cands), kwargs.get("note_scores"), w)
        kwargs["note_scores"] = notes
        kwargs["signals"] = (*kwargs.get("signals", ()), *signals)
        return plain_rank(new, facts, words, w2, **kwargs)

    def run(q: str) -> list[tuple[str, str]]:
        query = search.Query(q, 10, "hybrid", weights=weights)
        with swapped(ranking, "rank", rank):
            result = search.run(vault.conn, query, vault.embedder, None,
                                vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


def _note_best_keyword(cands: Sequence[ranking.Candidate]) -> dict[str, float]:
    best: dict[str, float] = {}
    for c in cands:
        if c.keyword:
            best[c.path] = max(best.get(c.path, 0.0), c.keyword)
    return best


def _kw_minmax(cands: list[ranking.Candidate], notes: dict[str, float] | None,
               w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """Keyword scores min-max scaled among the candidates' notes (as the meaning scores are):
    shifted so that the weakest note's best section scores 0."""
    best = _note_best_keyword(cands)
    if len(best) < 2:
        return cands, notes, w, []
    low = min(best.values())
    return [replace(c, keyword=(c.keyword - low) if c.keyword else None)
            for c in cands], notes, w, []


def _note_minmax(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                 w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """Whole-note scores min-max scaled among the notes scored (best 100)."""
    if not notes or len(notes) < 2:
        return cands, notes, w, []
    low, high = min(notes.values()), max(notes.values())
    return cands, {p: (s - low) / (high - low) for p, s in notes.items()}, w, []


def _note_gap(cands: list[ranking.Candidate], notes: dict[str, float] | None,
              w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """The whole note counts only for what it holds beyond its best section: max(0, whole-note
    share - best-section share)."""
    if not notes:
        return cands, notes, w, []
    best = _note_best_keyword(cands)
    top = max(best.values(), default=0.0)
    ks = {p: s / top for p, s in best.items()} if top > 0 else {}
    return cands, {p: max(0.0, s - ks.get(p, 0.0)) for p, s in notes.items()}, w, []


def _kw_max(cands: list[ranking.Candidate], notes: dict[str, float] | None,
            w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """One keyword score per note, the better of its best section's and its whole text's
    (each relative to the best); no separate whole-note signal."""
    if not notes:
        return cands, notes, w, []
    best = _note_best_keyword(cands)
    top = max(best.values(), default=0.0)
    ks = {p: s / top for p, s in best.items()} if top > 0 else {}
    lift = {p: max(0.0, s - ks.get(p, 0.0)) for p, s in notes.items()}
    return cands, None, replace(w, note=0.0), [("note", w.keyword, lift)]


VARIANTS.update({
    "r6-defaults": lambda vault: _rewritten(vault, lambda c, n, w: (c, n, w, [])),
    "r6-before": lambda vault: _plain(vault, BEFORE),
    "r6-note0": lambda vault: _plain(vault, replace(DEFAULTS, note=0.0)),
    "r6-note0.3": lambda vault: _plain(vault, replace(DEFAULTS, note=0.3)),
    "r6-note0.45": lambda vault: _plain(vault, replace(DEFAULTS, note=0.45)),
    "r6-kwmm": lambda vault: _rewritten(vault, _kw_minmax),
    "r6-notemm": lambda vault: _rewritten(vault, _note_minmax),
    "r6-kwmm+notemm": lambda vault: _rewritten(
        vault, lambda c, n, w: _note_minmax(*_kw_minmax(c, n, w)[:3])),
    "r6-notegap": lambda vault: _rewritten(vault, _note_gap),
    "r6-kwmax": lambda vault: _rewritten(vault, _kw_max),
})


def _only(**parts: float) -> ranking.Weights:
    zero = dict(keyword=0.0, vector=0.0, heading=0.0, path=0.0, date=0.0, graph=0.0, title=0.0,
                note=0.0, authority=0.0)
    return replace(DEFAULTS, **{**zero, **parts})


VARIANTS.update({
    "r6-sections-only": lambda vault: _plain(vault, _only(keyword=1.0)),
    "r6-notes-only": lambda vault: _plain(vault, _only(note=1.0)),
    "r6-vector-only": lambda vault: _plain(vault, _only(vector=1.0)),
    "r6-sections+vector": lambda vault: _plain(vault, _only(keyword=1.0, vector=0.3)),
    "r6-notes+vector": lambda vault: _plain(vault, _only(note=1.0, vector=0.3)),
})


_SECTIONS: dict[int, dict[str, int]] = {}


def _section_counts(conn: Any) -> dict[str, int]:
    """Each note's number of sections (chunks), read once per connection."""
    key = id(conn)
    if key not in _SECTIONS:
        _SECTIONS[key] = dict(conn.execute(
            "SELECT n.path, count(*) FROM notes n JOIN chunks c ON c.note_id = n.id"
            " GROUP BY n.id").fetchall())
    return _SECTIONS[key]


def _note_damped(vault: Any, damp: Callable[[int], float],
                 weights: ranking.Weights = DEFAULTS) -> Run:
    """The whole-note signal times damp(the note's number of sections)."""
    counts = _section_counts(vault.conn)

    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        if not notes:
            return cands, notes, w, []
        return cands, {p: s * damp(counts.get(p, 1)) for p, s in notes.items()}, w, []

    return _rewritten(vault, rewrite, weights)


VARIANTS.update({
    "r6-damp-sqrt": lambda vault: _note_damped(vault, lambda n: n ** -0.5),
    "r6-damp-3": lambda vault: _note_damped(vault, lambda n: min(1.0, 3 / n)),
    "r6-damp-5": lambda vault: _note_damped(vault, lambda n: min(1.0, 5 / n)),
    "r6-damp-log": lambda vault: _note_damped(vault, lambda n: 1 / (1 + math.log(n))),
})


def _notes_common(vault: Any, share: float) -> Run:
    """The whole-note OR query leaves out the words held by more than `share` of the notes,
    on indexes of any size (the sections' queries unchanged)."""
    plain = search.common_words

    def common(conn: Any, words: Sequence[str], among: str = "sections") -> frozenset[str]:
        if among != "notes":
            return plain(conn, words, among)
        with swapped(search, "COMMON_SHARE", share), swapped(search, "COMMON_CHECKED_FROM", 0):
            return plain(conn, words, among)

    run = _plain(vault, DEFAULTS)

    def wrapped(q: str) -> list[tuple[str, str]]:
        with swapped(search, "common_words", common):
            return run(q)

    return wrapped


VARIANTS.update({
    "r6-notecommon0.1": lambda vault: _notes_common(vault, 0.1),
    "r6-notecommon0.2": lambda vault: _notes_common(vault, 0.2),
    "r6-notecommon0.3": lambda vault: _notes_common(vault, 0.3),
})


def _note_floor(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """A candidate note with a keyword match but beyond the whole-note query's best
    NOTES_SCORED scores the lowest whole-note score seen (an upper bound) instead of 0."""
    if not notes or len(notes) < search.NOTES_SCORED:
        return cands, notes, w, []
    low = min(notes.values())
    more = {c.path: low for c in cands if c.keyword and c.path not in notes}
    return cands, {**notes, **more}, w, []


VARIANTS.update({
    "r6-scored300": lambda vault: _plain(vault, DEFAULTS, swap={"NOTES_SCORED": 300}),
    "r6-scored1000": lambda vault: _plain(vault, DEFAULTS, swap={"NOTES_SCORED": 1000}),
    "r6-notefloor": lambda vault: _rewritten(vault, _note_floor),
    "r6-notecands0": lambda vault: _plain(vault, DEFAULTS, swap={"NOTE_CANDIDATES": 0}),
})


def _vector_evidence(weight: float) -> Rewrite:
    """Meaning evidence beyond a note's best section: its next sections among the vector
    hits, scaled as the vector signal is (between the lowest and highest similarity of the
    candidates), as ranking.other_sections does for keywords."""
    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        sims = [c.vector for c in cands if c.vector is not None]
        if len(sims) < 2:
            return cands, notes, w, []
        low, high = min(sims), max(sims)
        per: dict[str, list[float]] = {}
        for c in cands:
            if c.vector is not None and high > low:
                per.setdefault(c.path, []).append((c.vector - low) / (high - low))
        return cands, notes, w, [("vevidence", weight, {
            p: ranking.other_sections(s) for p, s in per.items() if len(s) > 1})]
    return rewrite


VARIANTS.update({
    "r6-vevid0.1": lambda vault: _rewritten(vault, _vector_evidence(0.1)),
    "r6-vevid0.2": lambda vault: _rewritten(vault, _vector_evidence(0.2)),
})

VARIANTS.update({
    "r6-vevid0.05": lambda vault: _rewritten(vault, _vector_evidence(0.05)),
})

VARIANTS.update({
    "r6-kw0.5-note1.0": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.5, note=1.0)),
    "r6-kw0.3-note1.0": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.3, note=1.0)),
    "r6-kw0-note1.0": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.0, note=1.0)),
    "r6-kw0-note1.0-vec0.2": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.0, note=1.0,
                                                                  vector=0.2)),
    "r6-kw0-note1.0-vec0.4": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.0, note=1.0,
                                                                  vector=0.4)),
})


def _prf(vault: Any, weight: float, rare: float = 0.02, top_notes: int = 3,
         words: int = 5) -> Run:
    """Pseudo-relevance feedback limited to rare words: the first stage's best `top_notes`
    notes; their words held by at most `rare` of the notes, not in the query, found in at
    least two of them, the best `words` by their count there times idf; the whole-note query
    again with them (OR the query's words); each note's bm25 under it, relative to the best,
    as a `prf` signal at `weight`; ranked again."""
    from vaultmem.store import text as store_text

    conn = vault.conn
    total = int(conn.execute("SELECT count(*) FROM notes_fts").fetchone()[0])
    df: dict[str, int] = {}
    plain_rank = ranking.rank
    word_re = re.compile(r"[^\W\d_]{4,}")

    def note_words(path: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (body,) in conn.execute(
                "SELECT f.body FROM chunks c JOIN notes n ON n.id = c.note_id"
                " JOIN chunks_fts f ON f.rowid = c.id WHERE n.path = ?", (path,)):
            for w in word_re.findall(body.lower()):
                counts[w] = counts.get(w, 0) + 1
        return counts

    def rank(cands: Sequence[ranking.Candidate], facts: Any, qwords: set[str],
             w: ranking.Weights = DEFAULTS, **kwargs: Any) -> list[ranking.Ranked]:
        limit = kwargs.pop("limit", 10)
        first = plain_rank(cands, facts, qwords, w, limit=top_notes, **kwargs)
        per = [note_words(r.path) for r in first]
        seen: dict[str, int] = {}
        for counts in per:
            for word in counts:
                seen[word] = seen.get(word, 0) + 1
        pool = [x for x, n in seen.items() if n >= 2 and x not in qwords
                and x not in search.STOPWORDS]
        scored = []
        for x in pool:
            if x not in df:
                df[x] = store_text.notes_holding(conn, x)
            if 0 < df[x] <= rare * total:
                idf = math.log(total / df[x])
                scored.append((sum(c.get(x, 0) for c in per) * idf, x))
        extra = [x for _, x in sorted(scored, reverse=True)[:words]]
        if not extra:
            return plain_rank(cands, facts, qwords, w, limit=limit, **kwargs)
        match = " OR ".join(f'"{x}"' for x in [*sorted(qwords), *extra])
        found = store_text.keyword_notes(conn, match, search.NOTES_SCORED)
        top = found[0][1] if found and found[0][1] > 0 else 0.0
        values = {p: s / top for p, s in found} if top else {}
        kwargs["signals"] = (*kwargs.get("signals", ()), ("prf", weight, values))
        return plain_rank(cands, facts, qwords, w, limit=limit, **kwargs)

    def run(q: str) -> list[tuple[str, str]]:
        query = search.Query(q, 10, "hybrid", weights=DEFAULTS)
        with swapped(ranking, "rank", rank):
            result = search.run(vault.conn, query, vault.embedder, None,
                                vault.index.current_matrix())
        return [(h.path, h.header) for h in result.hits]

    return run


VARIANTS.update({
    "r6-prf0.3": lambda vault: _prf(vault, 0.3),
    "r6-prf0.5": lambda vault: _prf(vault, 0.5),
    "r6-prf0.3-r5": lambda vault: _prf(vault, 0.3, rare=0.05),
    "r6-prf0.3-t5": lambda vault: _prf(vault, 0.3, top_notes=5, words=8),
})


def _note_headed(vault: Any) -> Run:
    """The whole-note signal only for notes with at least one heading (a note without any is
    one stream of text cut by length: its best section is the unit)."""
    headed = {r[0] for r in vault.conn.execute(
        "SELECT DISTINCT n.path FROM notes n JOIN headings h ON h.note_id = n.id")}

    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        if not notes:
            return cands, notes, w, []
        return cands, {p: s for p, s in notes.items() if p in headed}, w, []

    return _rewritten(vault, rewrite)


VARIANTS.update({"r6-note-headed": _note_headed})

VARIANTS.update({
    # the keyword evidence's total weight back to 1 (round 2 added the whole note's 0.6 to the
    # best section's 1.0 without measuring the meaning weight again): the same 1 : 0.6 split
    "r6-lexical1": lambda vault: _plain(vault, replace(DEFAULTS, keyword=0.625, note=0.375)),
    "r6-vec0.48": lambda vault: _plain(vault, replace(DEFAULTS, vector=0.48)),
})


def _short_whole(vault: Any, most: int = 3) -> Run:
    """A note of at most `most` sections is read as one passage: its keyword share is its
    whole-note share (relative to the best note) in place of its best section's."""
    counts = _section_counts(vault.conn)

    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        if not notes:
            return cands, notes, w, []
        best = _note_best_keyword(cands)
        top = max(best.values(), default=0.0)
        if top <= 0:
            return cands, notes, w, []
        out = []
        for c in cands:
            if c.keyword and counts.get(c.path, 1) <= most and best.get(c.path):
                # scale every section of the note so that its best one scores the whole
                # note's share (relative to the best section of the search)
                factor = notes.get(c.path, 0.0) * top / best[c.path]
                c = replace(c, keyword=c.keyword * factor or None)
            out.append(c)
        return out, notes, w, []

    return _rewritten(vault, rewrite)


VARIANTS.update({
    "r6-short-whole3": lambda vault: _short_whole(vault, 3),
    "r6-short-whole1": lambda vault: _short_whole(vault, 1),
})


def _agreement(alpha: float, k: int = 10) -> Rewrite:
    """The meaning weight grows with how much the keyword and the meaning halves agree: the
    share of the best `k` notes by meaning that are among the best `k` by keywords, times
    `alpha` (0.3 -> up to 0.3 x (1 + alpha))."""
    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        kw = _note_best_keyword(cands)
        vec: dict[str, float] = {}
        for c in cands:
            if c.vector is not None:
                vec[c.path] = max(vec.get(c.path, -1.0), c.vector)
        top_kw = set(sorted(kw, key=lambda p: -kw[p])[:k])
        top_vec = sorted(vec, key=lambda p: -vec[p])[:k]
        if not top_vec:
            return cands, notes, w, []
        agree = sum(1 for p in top_vec if p in top_kw) / len(top_vec)
        return cands, notes, replace(w, vector=w.vector * (1 + alpha * agree)), []
    return rewrite


VARIANTS.update({
    "r6-agree1": lambda vault: _rewritten(vault, _agreement(1.0)),
    "r6-agree2": lambda vault: _rewritten(vault, _agreement(2.0)),
})


def _short_max(vault: Any) -> Run:
    """A note of one section keeps the better of its two keyword shares: its section's
    (relative to the best section) and its whole note's (relative to the best note)."""
    counts = _section_counts(vault.conn)

    def rewrite(cands: list[ranking.Candidate], notes: dict[str, float] | None,
                w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
        if not notes:
            return cands, notes, w, []
        best = _note_best_keyword(cands)
        top = max(best.values(), default=0.0)
        if top <= 0:
            return cands, notes, w, []
        out = []
        for c in cands:
            if c.keyword and counts.get(c.path, 1) == 1 and best.get(c.path):
                c = replace(c, keyword=max(c.keyword, notes.get(c.path, 0.0) * top))
            out.append(c)
        return out, notes, w, []

    return _rewritten(vault, rewrite)


VARIANTS.update({"r6-short-max1": _short_max})


def _note_cap(cands: list[ranking.Candidate], notes: dict[str, float] | None,
              w: ranking.Weights) -> tuple[Any, Any, Any, list[Signal]]:
    """The whole note confirms its best section's keyword evidence but does not pass it: its
    share capped at the section's (a note without a keyword section keeps its own)."""
    if not notes:
        return cands, notes, w, []
    best = _note_best_keyword(cands)
    top = max(best.values(), default=0.0)
    if top <= 0:
        return cands, notes, w, []
    return cands, {p: min(s, best[p] / top) if p in best else s
                   for p, s in notes.items()}, w, []


VARIANTS.update({"r6-notecap": lambda vault: _rewritten(vault, _note_cap)})


# --------------------------------------------------------------------------- round 7
# (engineer S, 2026-12-02): the weights by the query's shape. The ideas were swept with
# bench/rank_replay.py (each question's ranking inputs captured once, ranked again per idea);
# these run it (r7-long: past 7 words, meaning 0.4 and the whole note 0.3) and the defaults
# without it (r7-nolong, r7-defaults: the same since the rule is off) through search.run.

VARIANTS.update({
    "r7-defaults": lambda vault: _plain(vault, replace(ranking.Weights(), long_words=0)),
    "r7-nolong": lambda vault: _plain(vault, replace(ranking.Weights(), long_words=0)),
    "r7-long": lambda vault: _plain(vault, replace(ranking.Weights(), long_words=7)),
})
