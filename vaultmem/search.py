"""Search: keyword (FTS5), meaning (vectors) or both fused, with filters, dates and --explain."""

from __future__ import annotations

import datetime as dt
import html
import re
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from vaultmem import decay, query, ranking, store
from vaultmem.dates import DateRoute, note_day, route
from vaultmem.errors import ModelServerDown, ModelServerError, UsageError, VaultmemError
from vaultmem.memory.salience import expired

if TYPE_CHECKING:
    from vaultmem.embed import Embedder
    from vaultmem.llm import LLM
    from vaultmem.rerank import Reranker
    from vaultmem.vectors import VectorMatrix

Mode = Literal["hybrid", "keyword", "semantic"]
MODES: tuple[Mode, ...] = ("hybrid", "keyword", "semantic")

HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
_WORD_RE = re.compile(r"\w+", re.UNICODE)
# Words so common that bm25 gives them almost no weight while each one makes FTS5 rank most of
# the index; dropped from a query unless nothing else is left ("how does the web work").
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
CANDIDATES = 100  # chunks each retriever hands to the fusion
NOTE_CANDIDATES = 20  # the best whole notes by keywords join the candidates (first section)
NOTES_SCORED = 100  # whole notes scored for the note signal
# Whole notes: any word (OR) at once. AND first (then OR when it finds fewer than NOTES_ENOUGH
# notes) is cheaper on common words but measured worse on the MDN dev set (success@3 0.698
# against 0.728; docs/BENCHMARKS.md), so it is off.
NOTES_AND_FIRST = False
NOTES_ENOUGH = 20
PHRASE_CHECKED = 500  # sections a phrase matches whose text is read to check the paragraph
AMONG_NOTES = 200  # an operator letting through at most this many notes: each is a candidate
AND_ENOUGH = 30  # sections matching every word, past which the OR query is skipped
FEEDBACK_SECTIONS = 5  # pseudo-relevance feedback reads the best few sections…
FEEDBACK_WORDS = 5  # …and adds the words most of them share
# Notes whose names hold the query's words (an FTS5 query over names alone) join the
# candidates by their first section: this many at most (0 is off), each only when
# ranking.name_match gives it at least NAMED_FLOOR.
NAMED_CANDIDATES = 0
NAMED_LOOKED_AT = 50
NAMED_FLOOR = 0.5


@dataclass(frozen=True)
class Hit:
    path: str
    title: str
    start_line: int
    end_line: int
    score: float
    snippet: str  # matched words wrapped in HIGHLIGHT_START/HIGHLIGHT_END
    header: str
    explain: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: tuple[Hit, ...]
    mode: Mode = "keyword"
    notices: tuple[str, ...] = ()  # degraded behaviour a person should hear about (stderr)
    route: DateRoute | None = None
    expired_hidden: int = 0  # expired notes left out that would be hits (Query.count_expired)


@dataclass(frozen=True)
class Filters:
    tag: str | None = None  # a tag or a parent of nested tags, without "#"
    path: str | None = None  # a vault path prefix ("work/")
    since: dt.date | None = None  # notes dated on or after (see dates.note_day)
    mtime: bool = False  # `since` compares the files' modification times instead
    personas: bool = False  # persona notes (type: persona) are left out unless asked for
    expired: bool = False  # notes past their decay tier's lifetime: left out unless asked for

    def active(self) -> bool:
        return bool(self.tag or self.path or self.since)


@dataclass(frozen=True)
class Query:
    text: str
    limit: int = 10
    mode: Mode = "hybrid"
    filters: Filters = field(default_factory=Filters)
    hyde: bool = False
    now: dt.datetime | None = None  # the clock date routing and decay use (injectable)
    weights: ranking.Weights | None = None  # None: the measured defaults for the mode
    count_expired: bool = False  # say how many expired notes were left out (expired_hidden)


def plain(snippet: str) -> str:
    return snippet.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "")


_M = f"[{HIGHLIGHT_START}{HIGHLIGHT_END}]*"  # highlight marks may sit inside the syntax
_LINE_MARKS = re.compile(
    rf"^[ \t]*(?:>[ \t]*)*{_M}(?:#{{1,6}}[ \t]+|[-*+][ \t]+\[.\][ \t]+|[-*+][ \t]+|\d+[.)][ \t]+)?",
    re.MULTILINE,
)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~).*$", re.MULTILINE)
_TABLE_RULE = re.compile(
    r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M
)
_CALLOUT = re.compile(r"\[![\w-]+\][+-]?")
# Bounded: a snippet or a section of a hostile note can hold 200,000 `[` in a row, and an
# unbounded `[^\]]*` tries every one of them from every one (quadratic: minutes); a link or
# tag longer than the bound is left as text.
_EMBED = re.compile(r"!\[\[[^\]]{0,300}\]\]|!\[[^\]]{0,300}\]\([^)]{0,500}\)")
_WIKILINK = re.compile(r"\[\[([^\]|]{0,300})(?:\|([^\]]{0,300}))?\]\]")
_MDLINK = re.compile(r"\[([^\]]{0,300})\]\([^)]{0,500}\)")
_COMMENT = re.compile(r"%%.*?(?:%%|$)", re.DOTALL)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,500}>")
_BLOCK_ID = re.compile(rf"[ \t]\^[\w-]+{_M}(?=[ \t]*(?:$|…))", re.MULTILINE)
_FOOTNOTE = re.compile(r"\[\^[^\]]{0,300}\]")
_EMPHASIS = re.compile(r"(\*\*|__|==|~~|\*|`+)")
_LEFTOVER = re.compile(r"!?\[\[|\]\]|\]\([^)]*\)?|(?<!\w)_|_(?!\w)|\|")


SNIPPET_CHARS = 4000  # more than any snippet shown: a longer one is a hostile note's run


def plain_text(snippet: str) -> str:
    """A snippet as plain text (its highlight marks kept): no heading or list marks, tables'
    pipes, embeds, link syntax, emphasis, HTML or entities such as `&nbsp;`; whitespace
    collapsed. Snippets cut markdown anywhere, so half a link or table row is cleaned too."""
    text = _COMMENT.sub(" ", snippet[:SNIPPET_CHARS])
    text = _FENCE.sub(" ", text)
    text = _TABLE_RULE.sub(" ", text)
    text = _LINE_MARKS.sub(lambda m: m.group(0).strip(" \t>#-*+[]x.)0123456789"), text)
    text = _CALLOUT.sub(" ", text)
    text = _EMBED.sub(" ", text)
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1).replace("#", " › ").strip(" ›"), text)
    text = _MDLINK.sub(r"\1", text)
    text = _FOOTNOTE.sub("", text)
    text = _BLOCK_ID.sub("", text)
    text = _HTML_TAG.sub(" ", text)
    text = html.unescape(text).replace("\xa0", " ")
    text = _EMPHASIS.sub("", text)
    text = _LEFTOVER.sub(" ", text)
    return " ".join(text.split())


def query_words(text: str) -> list[str]:
    words = list(dict.fromkeys(w.lower() for w in _WORD_RE.findall(text)))
    return [w for w in words if w not in STOPWORDS] or words


def fts_queries(text: str, common: Collection[str] = ()) -> list[str]:
    """Any user text as safe FTS5 queries: all words (AND) first, then any word (OR).

    Every word is quoted, so FTS5 syntax in the text (`C++`, `"`, `AND`, `*`) is just words.
    Notes holding every word come first; the OR query fills the remaining places. Besides
    matching what people expect of a search box, the AND query is ~10x cheaper: FTS5 ranks every
    row an OR query matches, and a common word matches most of a big vault. The OR query
    leaves out the `common` words (see common_words), unless nothing else is left.
    """
    words = query_words(text)
    quoted = [f'"{w}"' for w in words]
    if len(quoted) <= 1:
        return quoted
    rest = [f'"{w}"' for w in words if w not in common] or quoted
    return [" AND ".join(quoted), " OR ".join(rest)]


# Words in more than half of a big index's sections. FTS5's bm25 gives such a word no weight
# (its idf, log((N - n + 0.5) / (n + 0.5)), is clamped to 1e-6 once n > N/2), yet each one
# makes an OR query rank nearly every section: MDN's "web" is in 118,853 of its 126,466
# sections (through their paths), and ranking them took 0.6 s at a load of 15. Leaving them
# out of the OR queries keeps every score that matters (the AND query keeps every word).
# Counting costs a query per word, once per word and index generation; small indexes skip it.
COMMON_SHARE = 0.5
COMMON_CHECKED_FROM = 5000  # sections: below, an OR query is cheap anyway
_COUNTS: dict[tuple[str, int, str], tuple[int, dict[str, int]]] = {}
_COUNTED_WORDS = 50_000  # per index: a long-running process forgets past this many words


def common_words(
    conn: store.Connection, words: Sequence[str], among: Literal["sections", "notes"] = "sections"
) -> frozenset[str]:
    """The words of `words` held by more than COMMON_SHARE of the index's sections (or of its
    whole notes, for the whole-note query: MDN's "property" is in 9,411 of 14,076 notes)."""
    if len(words) < 2:
        return frozenset()
    key = (store.get_meta(conn, "created_at") or "", store.generation(conn), among)
    known = _COUNTS.get(key)
    if known is None:
        if len(_COUNTS) > 8:  # indexes come and go in tests and front-ends: keep a few
            _COUNTS.clear()
        size = store.section_count(conn) if among == "sections" else store.note_text_count(conn)
        known = _COUNTS[key] = (size, {})
    total, counts = known
    if total < COMMON_CHECKED_FROM:
        return frozenset()
    if len(counts) > _COUNTED_WORDS:
        counts.clear()
    holding = store.sections_holding if among == "sections" else store.notes_holding
    for w in words:
        if w not in counts:
            counts[w] = holding(conn, w)
    return frozenset(w for w in words if counts[w] > COMMON_SHARE * total)


_DECAYING: dict[tuple[str, int], Sequence[store.DecayingNote]] = {}


def expired_paths(conn: store.Connection, now: dt.datetime) -> frozenset[str]:
    """The notes past their decay tier's lifetime at `now` (issue 11 §6: they leave default
    search). The notes with a `decay:` property are looked up once per index generation (a
    scan of every front matter: ~20 ms on MDN's 14k pages)."""
    key = (store.get_meta(conn, "created_at") or "", store.generation(conn))
    rows = _DECAYING.get(key)
    if rows is None:
        if len(_DECAYING) > 8:  # indexes come and go in tests and front-ends: keep a few
            _DECAYING.clear()
        rows = _DECAYING[key] = store.decaying_notes(conn)
    if not rows:
        return frozenset()
    found = expired([(r.path, r.frontmatter, r.file_time) for r in rows], now)
    return frozenset(path for path, _ in found)


def run(
    conn: store.Connection,
    q: Query,
    embedder: Callable[[], Embedder] | None,
    llm: Callable[[], LLM | None] | None = None,
    matrix: VectorMatrix | None = None,
    reranker: Reranker | None = None,
    *,
    beside: Callable[[], store.Connection] | None = None,
) -> SearchResult:
    """One search, any mode; `embedder`/`llm` are only loaded when the mode needs them.
    `matrix`, an in-memory copy of the index's vectors, answers nearest-section queries in
    place of sqlite-vec when it is up to date. `reranker` (hybrid and semantic modes) reads
    the best few notes again with a stronger meaning model (vaultmem/rerank.py). `beside`
    gives the calling thread its own connection to the same index (Index.conn): with the
    vectors in memory, the whole-note query then runs on the worker thread too."""
    if q.limit < 1:
        raise UsageError("--limit must be at least 1")
    if q.mode not in MODES:
        raise UsageError(f"unknown search mode {q.mode!r}: use one of {', '.join(MODES)}")
    now = q.now or dt.datetime.now(dt.UTC)
    parsed = query.parse(q.text)  # operators ("phrase", -word, tag:, path:, …): QueryError
    notices: list[str] = list(parsed.notices)
    # The date a query names ("in May 2023", "last weekend") routes the search to notes of
    # those days (ranking's date signal); its words stay in the query as well, for the notes
    # that say the date in their text ("## May 2023" in a changelog) rather than in their
    # date (round 7, docs/BENCHMARKS.md: LoCoMo and LongMemEval both gain)
    when = route(parsed.typed, now.date())  # "2026-03-01" whole, as typed
    text = parsed.text
    if not query_words(text) and when is None:
        if query.only_excludes(parsed.filter) and query_words(q.text):
            # "-webkit-box-shadow": nothing to look for but what to leave out, which is more
            # likely a word that starts with '-' than a search for every other note
            notices.append("the query only says what to leave out: searched its words instead")
            parsed = query.Parsed(q.text, None, parsed.notices)
            text = q.text
        elif parsed.filter is None or query.only_excludes(parsed.filter):
            return SearchResult(q.text, (), q.mode, tuple(notices))  # nothing to look for
    only = _passing(conn, parsed.filter, {}) if parsed.filter is not None else None
    mode = q.mode
    model = store.get_meta(conn, "embed_model")
    if mode != "keyword":
        problem = _vectors_problem(conn, model, embedder)
        if problem:
            if mode == "semantic":
                raise _semantic_impossible(problem, embedder)
            notices.append(problem + "; searched by keywords only")
            mode = "keyword"
    personas = frozenset() if q.filters.personas else store.persona_paths(conn)
    gone = frozenset() if q.filters.expired else expired_paths(conn, now)
    hidden = personas | gone
    # the expired notes `include_expired` would show (an expired persona stays out anyway)
    counted = gone - personas if q.count_expired else frozenset()
    fast = only is None and not q.filters.active() and when is None and q.weights is None
    # a long-running process (its vectors in memory) ranks its keyword queries from cached
    # per-word scores (store/terms.py: the same results); a one-shot search would only fill them
    warm = matrix is not None
    if mode == "keyword" and fast:
        hits, left_out = _keyword_only(conn, text, q.limit, hidden, cached=warm, counted=counted)
        return SearchResult(q.text, hits, mode, tuple(notices), expired_hidden=left_out)

    fetch = CANDIDATES * (4 if q.filters.active() or only is not None else 1)
    weights = q.weights or (ranking.Weights() if mode == "hybrid" else _single(mode))
    candidates: dict[int, ranking.Candidate] = {}
    # With the vectors in memory, the meaning half needs no connection: it runs on another
    # thread while this one asks FTS5 (numpy and SQLite both let go of the GIL meanwhile).
    pending: Future[tuple[list[tuple[int, float]], _Side | None]] | None = None
    waiting = threading.Event()  # set when this thread waits for the vectors
    usable = matrix is not None and matrix.generation == store.generation(conn)
    if mode != "keyword" and embedder is not None and usable and not q.hyde:
        assert matrix is not None
        pending = _POOL.submit(
            _vectors_job,
            _VectorsAsked(embedder, matrix, text, fetch, beside, waiting, q.filters, now),
            bool(weights.authority),
        )
    every = fts_queries(text)
    matches = fts_queries(text, common_words(conn, query_words(text)))
    match = every[-1] if every else ""  # every word: what snippets highlight
    whole: list[str] = []
    if mode != "semantic" and matches and weights.note:
        whole = fts_queries(text, common_words(conn, query_words(text), "notes"))
    notes_job = _whole_notes_beside(beside, whole, warm) if pending is not None else None
    if mode != "semantic" and matches:
        # AND first: when enough sections hold every word, ranking every section that holds
        # any of them (the OR query, ~10x the cost on common words) adds nothing measurable
        # (docs/BENCHMARKS.md, retrieval). A section's bm25 is the same under both queries.
        and_matched = False
        for n, fts in enumerate(matches):
            found = store.keyword_chunks(conn, fts, fetch, cached=warm)
            if n == 0 and len(matches) > 1:
                and_matched = bool(found)
            for m in found:
                candidates.setdefault(
                    m.id,
                    ranking.Candidate(
                        m.id, m.path, m.title, m.heading, m.start_line, m.end_line, keyword=-m.bm25
                    ),
                )
            if len(candidates) >= AND_ENOUGH:
                break
        if not candidates and matches != every:  # nothing without the common words
            for m in store.keyword_chunks(conn, every[-1], fetch, cached=warm):
                candidates.setdefault(
                    m.id,
                    ranking.Candidate(
                        m.id, m.path, m.title, m.heading, m.start_line, m.end_line, keyword=-m.bm25
                    ),
                )
        if weights.feedback and len(matches) > 1 and not and_matched:
            _expand(conn, candidates, text, fetch, weights.feedback, cached=warm)
    if only is not None and len(only) <= AMONG_NOTES:
        # few notes pass the operators: each is a candidate, by its best sections for the
        # words where they have any, else by its first section
        among = sorted(only)
        if mode != "semantic" and matches:
            for m in store.filters.keyword_chunks_among(conn, matches[-1], among, fetch):
                candidates.setdefault(
                    m.id,
                    ranking.Candidate(
                        m.id, m.path, m.title, m.heading, m.start_line, m.end_line, keyword=-m.bm25
                    ),
                )
        have = {c.path for c in candidates.values()}
        for c in store.first_chunks(conn, [p for p in among if p not in have]).values():
            candidates.setdefault(
                c.id, ranking.Candidate(c.id, c.path, c.title, c.heading, c.start_line, c.end_line)
            )
    note_scores: dict[str, float] | None = None
    if whole:
        notes = _whole_notes_taken(conn, notes_job, whole, warm)
        note_scores = _note_scores(conn, candidates, whole, fetch, found=notes)
    if mode != "semantic" and NAMED_CANDIDATES and weights.title:
        _named(conn, candidates, query_words(text))
    early: NotesFacts | None = None
    shown: dict[int, str] = {}  # snippets by chunk id, read ahead
    memo = ranking.Memo(frozenset(query_words(text)))  # text scores, some computed ahead
    if pending is not None and not pending.done():
        # while the vectors are computed: the facts of the notes found so far, how many notes
        # link to each (cached), their text scores and the likely hits' snippets, so that less
        # is left once the vectors are in (the same results: each is what would be read after)
        early = _note_facts(conn, sorted({c.path for c in candidates.values()}), q.filters, now)
        if weights.authority:
            _link_counts(conn, list(early[0]))
        if not pending.done():
            ranking.prepare(memo, list(candidates.values()), early[0], weights)
        if match and not pending.done():  # most hits' snippets (the rest are read after)
            shown = store.snippets(conn, match, _likely_hits(candidates, q.limit))
    nearest: list[tuple[int, float]] = []
    side: _Side | None = None
    if pending is not None:
        waiting.set()
        try:
            nearest, side = pending.result()
        except (ModelServerDown, ModelServerError) as exc:
            if mode == "semantic":
                raise
            notices.append(f"{exc}; searched by keywords only")
    elif mode != "keyword" and embedder is not None:
        texts = [text]
        if q.hyde:
            passage = _hyde(llm, text, notices)
            if passage:
                texts.append(passage)
        try:
            vectors = embedder().embed(texts)
        except (ModelServerDown, ModelServerError) as exc:
            if mode == "semantic":
                raise
            notices.append(f"{exc}; searched by keywords only")
        else:
            vector = vectors.mean(axis=0) if len(texts) > 1 else vectors[0]
            if matrix is not None and usable:
                nearest = matrix.nearest(vector, fetch)
            else:
                import numpy as np  # loaded with the embedder already: not on keyword search

                nearest = store.nearest_chunks(
                    conn, np.asarray(vector, np.float32).tobytes(), fetch
                )
    if nearest:
        rows = side.rows if side is not None else store.chunk_rows(conn, [i for i, _ in nearest])
        for chunk_id, distance in nearest:
            if chunk_id not in rows or distance is None:  # None: a zero vector
                continue
            sim = 1.0 - float(distance)
            old = candidates.get(chunk_id)
            if old is not None:
                candidates[chunk_id] = ranking.Candidate(**{**old.__dict__, "vector": sim})
            else:
                c = rows[chunk_id]
                candidates[chunk_id] = ranking.Candidate(
                    chunk_id, c.path, c.title, c.heading, c.start_line, c.end_line, vector=sim
                )
    if when is not None:
        days = _days(when)
        for c in store.first_chunks_dated(conn, days, 50):
            candidates.setdefault(
                c.id, ranking.Candidate(c.id, c.path, c.title, c.heading, c.start_line, c.end_line)
            )

    paths = sorted({c.path for c in candidates.values()})
    if side is not None and side.facts is not None:
        early = _merged(early, side.facts)
    facts, allowed = _facts(conn, paths, q.filters, now, early)
    if weights.authority:
        facts = _linked_from(conn, facts)
    if note_scores and weights.one_section:
        facts = _with_sections(conn, facts)
    if only is not None:
        allowed &= only

    def ranked_of(kept: list[ranking.Candidate], limit: int) -> list[ranking.Ranked]:
        return ranking.rank(
            kept,
            facts,
            set(query_words(text)),
            weights,
            route=when,
            now=now,
            limit=limit,
            note_scores=note_scores,
            memo=memo,
        )

    left_out = _expired_left_out(candidates, allowed - personas, counted, q.limit, ranked_of)
    allowed -= hidden
    kept = [c for c in candidates.values() if c.path in allowed]
    if mode == "keyword":
        reranker = None
    ranked = ranked_of(kept, max(q.limit, reranker.settings.depth) if reranker else q.limit)
    if reranker is not None:
        try:
            ranked = reranker(conn, text, ranked)
        except VaultmemError as exc:  # the model package is gone or damaged
            notices.append(f"{exc}; not re-ranked")
        ranked = ranked[: q.limit]
    hits = _hits(conn, ranked, match, shown)
    return SearchResult(q.text, hits, mode, tuple(notices), when, expired_hidden=left_out)


def _expired_left_out(
    candidates: dict[int, ranking.Candidate],
    allowed: set[str],
    counted: frozenset[str],
    limit: int,
    ranked_of: Callable[[list[ranking.Candidate], int], list[ranking.Ranked]],
) -> int:
    """How many of the `counted` expired notes would be among the hits with them let in:
    the same candidates ranked again with them (the candidates do not depend on whether
    expired notes are wanted, only the notes allowed do, so this is what a search with
    `include_expired` would rank, before any re-ranking); nothing to rank when no candidate
    is one of them. A ranking costs a fraction of a search: the queries, vectors and
    snippets are not asked again."""
    if not counted:
        return 0
    let_in = [c for c in candidates.values() if c.path in allowed]
    if not any(c.path in counted for c in let_in):
        return 0
    return sum(1 for r in ranked_of(let_in, limit) if r.path in counted)


# One worker: a search's meaning half overlaps its keyword half; more threads would only
# compete for the two cores between concurrent searches.
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultmem-vectors")


def _matrix_nearest(
    embedder: Callable[[], Embedder], matrix: VectorMatrix, text: str, k: int
) -> list[tuple[int, float]]:
    return matrix.nearest(embedder().embed([text])[0], k)


@dataclass(frozen=True)
class _VectorsAsked:
    """What the worker needs for a search's meaning half."""

    embedder: Callable[[], Embedder]
    matrix: VectorMatrix
    text: str
    k: int
    beside: Callable[[], store.Connection] | None  # the worker's own connection
    waiting: threading.Event  # set once the searching thread waits for the vectors
    filters: Filters
    now: dt.datetime


@dataclass(frozen=True)
class _Side:
    """What the worker read for the vector hits while the searching thread was still busy:
    their sections' rows, and (unless that thread was waiting by then) their notes' facts."""

    rows: dict[int, store.ChunkRow]
    facts: NotesFacts | None


def _vectors_job(
    asked: _VectorsAsked, authority: bool
) -> tuple[list[tuple[int, float]], _Side | None]:
    """The nearest sections; then, while the searching thread is still busy with its own
    half (not yet waiting), what it would read for them next, on the worker's own
    connection: the same rows and facts, read in parallel instead of after."""
    nearest = _matrix_nearest(asked.embedder, asked.matrix, asked.text, asked.k)
    if asked.beside is None or not nearest or asked.waiting.is_set():
        return nearest, None
    try:
        conn = asked.beside()
        rows = store.chunk_rows(conn, [i for i, _ in nearest])
        if asked.waiting.is_set():
            return nearest, _Side(rows, None)
        paths = sorted({r.path for r in rows.values()})
        facts = _note_facts(conn, paths, asked.filters, asked.now)
        if authority and not asked.waiting.is_set():
            _link_counts(conn, paths)
        return nearest, _Side(rows, facts)
    except (store.Error, VaultmemError):  # the worker's connection failed: read them after
        return nearest, None


def _merged(one: NotesFacts | None, other: NotesFacts) -> NotesFacts:
    """Two reads of notes' facts as one (a note read by both has the same facts in each)."""
    if one is None:
        return other
    return {**one[0], **other[0]}, one[1] | other[1]


def _whole_notes_beside(
    beside: Callable[[], store.Connection] | None, matches: list[str], cached: bool = False
) -> Future[list[tuple[str, float]]] | None:
    """The whole-note query, queued on the worker behind the vector product, on the worker's
    own connection (one connection runs one statement at a time): it runs beside the
    sections' queries of this thread when those take longer than the vectors."""
    if beside is None or not matches:
        return None
    return _POOL.submit(lambda: _whole_notes(beside(), matches, cached))


def _whole_notes_taken(
    conn: store.Connection,
    job: Future[list[tuple[str, float]]] | None,
    matches: list[str],
    cached: bool = False,
) -> list[tuple[str, float]]:
    """The whole-note query's notes: from the worker when it has started on them, else (not
    started yet: this thread is free now) run here; asked here again when the worker's own
    connection failed (an error of the index itself shows up here too)."""
    if job is None or job.cancel():
        return _whole_notes(conn, matches, cached)
    try:
        return job.result()
    except (store.Error, VaultmemError):
        return _whole_notes(conn, matches, cached)


def _expand(
    conn: store.Connection,
    candidates: dict[int, ranking.Candidate],
    text: str,
    fetch: int,
    weight: float,
    *,
    cached: bool = False,
) -> None:
    """Pseudo-relevance feedback: when no section holds every word of the query, add the words
    the best sections share, search again, and let what that finds join at a lower weight."""
    top = sorted((c for c in candidates.values() if c.keyword), key=lambda c: -(c.keyword or 0.0))[
        :FEEDBACK_SECTIONS
    ]
    if not top:
        return
    asked = set(query_words(text))
    counts: dict[str, int] = {}
    for body in store.chunk_bodies(conn, [c.chunk_id for c in top]).values():
        for word in {w.lower() for w in _WORD_RE.findall(body)}:
            if len(word) > 3 and word not in STOPWORDS and word not in asked and not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    extra = [w for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n > 1]
    if not extra:
        return
    expanded = " OR ".join(f'"{w}"' for w in [*asked, *extra[:FEEDBACK_WORDS]])
    for m in store.keyword_chunks(conn, expanded, fetch, cached=cached):
        if m.id not in candidates:
            candidates[m.id] = ranking.Candidate(
                m.id, m.path, m.title, m.heading, m.start_line, m.end_line, keyword=-m.bm25 * weight
            )


def _note_scores(
    conn: store.Connection,
    candidates: dict[int, ranking.Candidate],
    matches: list[str],
    fetch: int,
    *,
    found: list[tuple[str, float]] | None = None,
) -> dict[str, float]:
    """Whole-note keyword scores in [0, 1] (relative to the best note), AND first as for the
    sections; the best few notes join the candidates by their first section, so a note whose
    words are spread over its sections is found at all. `found`: the notes of
    _whole_notes(matches), when already asked."""
    if found is None:
        found = _whole_notes(conn, matches)
    if not found or found[0][1] <= 0:
        return {}
    top = found[0][1]
    have = {c.path for c in candidates.values()}
    new = [p for p, _ in found[:NOTE_CANDIDATES] if p not in have]
    for c in store.first_chunks(conn, new).values():
        candidates.setdefault(
            c.id, ranking.Candidate(c.id, c.path, c.title, c.heading, c.start_line, c.end_line)
        )
    return {p: s / top for p, s in found}


def _whole_notes(
    conn: store.Connection, matches: list[str], cached: bool = False
) -> list[tuple[str, float]]:
    """The best whole notes for the queries of fts_queries, best first (see _note_scores)."""
    found: list[tuple[str, float]] = []
    for n, fts in enumerate(matches):
        if not NOTES_AND_FIRST and n < len(matches) - 1:
            continue
        found = store.keyword_notes(conn, fts, NOTES_SCORED, cached=cached)
        if len(found) >= NOTES_ENOUGH or n == len(matches) - 1:
            break
    return found


def _named(
    conn: store.Connection, candidates: dict[int, ranking.Candidate], words: list[str]
) -> None:
    """The notes a query names (by their title, aliases or other names) join the candidates:
    a note titled "ARIA" is an answer to "what is ARIA" even when longer pages say ARIA more."""
    have = {c.path for c in candidates.values()}
    found = [p for p in store.notes_named_by(conn, words, NAMED_LOOKED_AT) if p not in have]
    if not found:
        return
    asked = set(words)
    names = store.note_facts(conn, found)
    scored = sorted(
        ((ranking.name_match(asked, names[p].names), p) for p in found if p in names),
        key=lambda sp: (-sp[0], sp[1]),
    )
    chosen = [p for s, p in scored[:NAMED_CANDIDATES] if s >= NAMED_FLOOR]
    for c in store.first_chunks(conn, chosen).values():
        candidates.setdefault(
            c.id, ranking.Candidate(c.id, c.path, c.title, c.heading, c.start_line, c.end_line)
        )


def _passing(conn: store.Connection, node: query.Node, cache: dict[str, set[str]]) -> set[str]:
    """The notes an operator tree lets through."""

    def every() -> set[str]:
        if "" not in cache:
            cache[""] = store.filters.all_notes(conn)
        return cache[""]

    if isinstance(node, query.Not):
        return every() - _passing(conn, node.node, cache)
    if isinstance(node, query.AnyOf):
        return set().union(*(_passing(conn, n, cache) for n in node.nodes))
    if isinstance(node, query.AllOf):
        wanted = [n for n in node.nodes if not isinstance(n, query.Not)]
        out = set(every()) if not wanted else _passing(conn, wanted[0], cache)
        for other in wanted[1:]:
            out &= _passing(conn, other, cache)
        for left_out in node.nodes:
            if isinstance(left_out, query.Not) and out:
                out -= _passing(conn, left_out.node, cache)
        return out
    return _term_notes(conn, node, every)


def _term_notes(
    conn: store.Connection, term: query.Term, every: Callable[[], set[str]]
) -> set[str]:
    words = [w.lower() for w in _WORD_RE.findall(term.value)]
    both = " AND ".join(f'"{w}"' for w in words)
    f = store.filters
    if term.op == "tag":
        return f.notes_tagged(conn, term.value)
    if term.op == "path":
        return f.notes_in_path(conn, term.value)
    if term.op == "file":
        return f.notes_named(conn, term.value)
    if term.op.startswith("task"):
        done = {"task": None, "task-todo": False, "task-done": True}[term.op]
        return f.notes_with_tasks(conn, words, done)
    if not words:  # "++": nothing a word index can hold, so nothing to hold back
        return every()
    if term.op == "phrase":  # in a note's names, or in one paragraph of its text
        phrase = '"' + " ".join(words) + '"'
        if len(words) == 1:
            return f.notes_matching(conn, phrase)
        found = f.sections_matching(conn, phrase)
        named = f.notes_matching(conn, f"names : {phrase}")
        if len(found) > PHRASE_CHECKED:  # too many to read: FTS5's adjacent words will do
            return named | {m.path for m in found}
        bodies = store.chunk_bodies(conn, [m.id for m in found])
        joined = re.compile(r"[^\w\n]*\n?[^\w\n]*".join(map(re.escape, words)), re.IGNORECASE)
        return named | {m.path for m in found if joined.search(bodies.get(m.id, ""))}
    if term.op == "content":
        return f.notes_matching(conn, f"body : ({both})")
    if term.op == "section":
        return {m.path for m in f.sections_matching(conn, both)}
    if term.op == "line":
        found = f.sections_matching(conn, both)
        bodies = store.chunk_bodies(conn, [m.id for m in found])
        return {m.path for m in found if _one_line_holds(bodies.get(m.id, ""), words)}
    return f.notes_matching(conn, both)  # a word inside a group with operators


def _one_line_holds(text: str, words: list[str]) -> bool:
    """Whether one line holds every word (a word matches the start of a word: "run", "runs")."""
    for line in text.splitlines():
        have = [w.lower() for w in _WORD_RE.findall(line)]
        if all(any(h.startswith(w) for h in have) for w in words):
            return True
    return False


def _single(mode: Mode) -> ranking.Weights:
    """Keyword-only or meaning-only ranking still gets the small signals (dates, headings)."""
    if mode == "keyword":
        return ranking.Weights(vector=0.0)
    return ranking.Weights(
        keyword=0.0, vector=1.0, low_overlap=0.0, title=0.0, note=0.0, authority=0.0
    )


def _semantic_impossible(problem: str, embedder: Callable[[], Embedder] | None) -> VaultmemError:
    """Why meaning search cannot run: the missing vectors (exit 2: run what the message
    says), or, when the model that would make them is down too, that (exit 5: running
    `vaultmem reindex` would not help until the server is back)."""
    if embedder is not None:
        try:
            embedder().health()
        except (ModelServerDown, ModelServerError) as exc:
            return type(exc)(f"{problem}, and the model that would make them is down: {exc}")
    return UsageError(problem)


def _vectors_problem(
    conn: store.Connection, model: str | None, embedder: Callable[[], Embedder] | None
) -> str | None:
    if embedder is None:
        return "no embedding model configured"
    if model is None or not store.has_vectors(conn):
        return "the index has no vectors yet (run `vaultmem reindex`)"
    wanted = embedder().name
    if wanted != model:
        return (
            f"the index holds vectors from {model}, but the embedder is {wanted} "
            "(run `vaultmem reindex --embeddings`)"
        )
    return None


def _hyde(llm: Callable[[], LLM | None] | None, text: str, notices: list[str]) -> str | None:
    from vaultmem.llm import hyde_passage

    model = llm() if llm else None
    if model is None:
        notices.append("--hyde needs a text model (--llm or VAULTMEM_LLM); searched without it")
        return None
    passage = hyde_passage(model, text)
    if passage is None:
        notices.append("HyDE skipped: the text model did not answer usefully")
    return passage


def _days(when: DateRoute) -> list[str]:
    span = min((when.end - when.start).days, 62)
    return [(when.start + dt.timedelta(days=i)).isoformat() for i in range(span + 1)]


NotesFacts = tuple[dict[str, ranking.NoteFacts], set[str]]  # facts by path, the allowed paths


def _facts(
    conn: store.Connection,
    paths: list[str],
    filters: Filters,
    now: dt.datetime,
    known: NotesFacts | None = None,
) -> NotesFacts:
    """The candidates' notes' facts (with the links among them) and the notes the filters
    allow. `known`: _note_facts of some of the paths, read while the vectors were computed."""
    facts, allowed = _note_facts(
        conn, [p for p in paths if not known or p not in known[0]], filters, now
    )
    if known:
        wanted = set(paths)
        facts.update((p, f) for p, f in known[0].items() if p in wanted)
        allowed |= known[1] & wanted
    links: dict[str, set[str]] = {}
    for a, b in store.links_among(conn, paths):
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    for path, linked in links.items():
        if (f := facts.get(path)) is not None:
            facts[path] = replace(f, links=frozenset(linked))
    return facts, allowed


def _note_facts(
    conn: store.Connection, paths: list[str], filters: Filters, now: dt.datetime
) -> NotesFacts:
    """_facts without the links among the notes: what each note says of itself."""
    rows = store.note_facts(conn, paths) if paths else {}
    facts: dict[str, ranking.NoteFacts] = {}
    allowed: set[str] = set()
    tag = (filters.tag or "").lstrip("#").lower()
    for path, note in rows.items():
        date = note.date
        modified = dt.datetime.fromtimestamp(note.mtime_ns / 1e9, dt.UTC)
        expiry = decay.expires_at(note.frontmatter, modified) if note.may_decay else None
        expired = bool(expiry and expiry[1] is not None and expiry[1] <= now)
        facts[path] = ranking.NoteFacts(date, frozenset(), expired, modified, note.names)
        if tag and tag not in note.tags:
            continue
        if filters.path and not path.startswith(filters.path.lstrip("/")):
            continue
        if filters.since:
            # a note's day (`date`, or one in its path); undated notes are not "since" anything
            day = modified.date() if filters.mtime else note_day(path, date)
            if day is None or day < filters.since:
                continue
        allowed.add(path)
    return facts, allowed


# How many notes link to each note, per index: looked up for the candidates a search has not
# met before (one query over the links, ~3 ms of CPU for an MDN search's ~100), kept until
# the index changes (search as you type meets the same notes again and again).
_LINKED: dict[tuple[str, int], dict[str, int]] = {}
_LINKED_KEPT = 50_000  # notes per index: a long-running process forgets past this many
_SECTIONS: dict[tuple[str, int], dict[str, int]] = {}  # sections per note, as _LINKED


def _linked_from(
    conn: store.Connection, facts: dict[str, ranking.NoteFacts]
) -> dict[str, ranking.NoteFacts]:
    """The notes' facts with how many other notes link to each (link authority)."""
    found = _link_counts(conn, list(facts))
    return {p: replace(f, linked_from=found[p]) if found[p] else f for p, f in facts.items()}


def _link_counts(conn: store.Connection, paths: list[str]) -> dict[str, int]:
    """How many other notes link to each of `paths` (cached per index generation)."""
    return _kept_counts(conn, _LINKED, paths, store.linking_note_counts)


def _with_sections(
    conn: store.Connection, facts: dict[str, ranking.NoteFacts]
) -> dict[str, ranking.NoteFacts]:
    """The notes' facts, those of one section marked (ranking.Weights.one_section); only
    those are copied (most notes have more: a copy of each fact costs more than the rest)."""
    for path, n in _section_counts(conn, list(facts)).items():
        if n == 1:  # in place: `facts` is this search's own dict
            facts[path] = replace(facts[path], one_section=True)
    return facts


def _section_counts(conn: store.Connection, paths: list[str]) -> dict[str, int]:
    """How many sections each of `paths` has (cached per index generation)."""
    return _kept_counts(conn, _SECTIONS, paths, store.text.section_counts)


def _kept_counts(
    conn: store.Connection,
    kept: dict[tuple[str, int], dict[str, int]],
    paths: list[str],
    read: Callable[[store.Connection, Sequence[str]], dict[str, int]],
) -> dict[str, int]:
    """A count per note from `read` (0 for a note it leaves out), kept in `kept` per index
    generation: a search reads only the notes no search of this generation has met."""
    key = (store.get_meta(conn, "created_at") or "", store.generation(conn))
    known = kept.get(key)
    if known is None:
        if len(kept) > 8:  # indexes come and go in tests and front-ends: keep a few
            kept.clear()
        known = kept[key] = {}
    if len(known) > _LINKED_KEPT:
        known.clear()
    # read once into a dict of this call's own: another thread's search may clear `known`
    found = {p: n for p in paths if (n := known.get(p)) is not None}
    new = [p for p in paths if p not in found]
    if new:
        counts = read(conn, new)
        fresh = {p: counts.get(p, 0) for p in new}
        known.update(fresh)
        found.update(fresh)
    return found


def _likely_hits(candidates: dict[int, ranking.Candidate], limit: int) -> list[int]:
    """The best section by keywords of each of the `limit` best notes by keywords: most of a
    hybrid search's hits (their snippets are read while the vectors are computed)."""
    best: dict[str, ranking.Candidate] = {}
    for c in sorted(candidates.values(), key=lambda c: (-(c.keyword or 0.0), c.chunk_id)):
        if c.keyword and c.path not in best:
            best[c.path] = c
            if len(best) == limit:
                break
    return [c.chunk_id for c in best.values()]


def _hits(
    conn: store.Connection,
    ranked: list[ranking.Ranked],
    match: str,
    ahead: dict[int, str] | None = None,
) -> tuple[Hit, ...]:
    """The ranked notes as hits, each with its snippet; `ahead`: the snippets of some
    sections for `match`, read before (a section's snippet depends on it and the query only)."""
    ids = [r.best.chunk_id for r in ranked]
    shown = dict(ahead or {})
    if match:
        shown.update(store.snippets(conn, match, [i for i in ids if i not in shown]))
    missing = [i for i in ids if not shown.get(i)]
    bodies = store.chunk_bodies(conn, missing) if missing else {}
    out = []
    for r in ranked:
        c = r.best
        snippet = plain_text(shown.get(c.chunk_id) or "") or _excerpt(bodies.get(c.chunk_id, ""))
        out.append(
            Hit(c.path, c.title, c.start_line, c.end_line, r.score, snippet, c.heading, r.parts)
        )
    return tuple(out)


def _excerpt(text: str, size: int = 160) -> str:
    flat = plain_text(text)
    return flat if len(flat) <= size else flat[:size].rsplit(" ", 1)[0] + "…"


def _keyword_only(
    conn: store.Connection,
    query: str,
    limit: int,
    hidden: frozenset[str] = frozenset(),
    *,
    cached: bool = False,
    counted: frozenset[str] = frozenset(),
) -> tuple[tuple[Hit, ...], int]:
    """The fast path: AND then OR over chunks, best chunk per note (no signals to add); and
    how many of the `counted` notes (hidden ones) would be hits were they not hidden."""
    every = fts_queries(query)
    if not every:
        return (), 0
    pruned = fts_queries(query, common_words(conn, query_words(query)))
    # without its common words the OR query may find nothing ("web zzzz"): then with them
    plan = [pruned] if pruned == every else [pruned, every]
    rows = _KeywordRows(conn, cached)
    top = _keyword_best(rows, plan, limit, hidden)
    left_out = 0
    if counted and rows.paths & counted:
        # the same choice with them let in, from the rows already read (it stops no later)
        let_in = _keyword_best(rows, plan, limit, hidden - counted)
        left_out = sum(1 for m in let_in if m.path in counted)
    return _keyword_hits(conn, top, every[-1]), left_out


class _KeywordRows:
    """The fast path's keyword queries, each asked of the index once per search: a second
    choice over the same queries with fewer notes hidden asks for no more rows of a query
    than the first did (it stops as soon, or sooner), and gets the first rows of those
    already read (best first: the rows a smaller LIMIT returns, but for the order among
    equal scores, which SQLite leaves open either way)."""

    def __init__(self, conn: store.Connection, cached: bool) -> None:
        self.conn = conn
        self.cached = cached
        self.read: dict[str, tuple[int, list[store.ChunkMatch]]] = {}
        self.paths: set[str] = set()  # the notes of every row read

    def __call__(self, match: str, fetch: int) -> list[store.ChunkMatch]:
        known = self.read.get(match)
        if known is not None and known[0] >= fetch:
            return known[1][:fetch]
        rows = store.keyword_chunks(self.conn, match, fetch, cached=self.cached)
        self.read[match] = (fetch, rows)
        self.paths.update(row.path for row in rows)
        return rows


def _keyword_best(
    rows: _KeywordRows, plan: list[list[str]], limit: int, hidden: frozenset[str]
) -> list[store.ChunkMatch]:
    """The fast path's choice: each note's best section, the `limit` best notes outside
    `hidden`, from the AND query then the OR query (fetching more rows while too few notes
    are found), best first."""
    best: dict[str, store.ChunkMatch] = {}
    for queries in plan:
        for match in queries:
            found: dict[str, store.ChunkMatch] = {}
            fetch = limit * 4
            while True:
                got = rows(match, fetch)
                for row in got:
                    if row.path not in hidden:
                        found.setdefault(row.path, row)  # rows come best first: each note's best
                if len(best.keys() | found.keys()) >= limit or len(got) < fetch:
                    break
                found.clear()
                fetch *= 4
            for path, row in found.items():
                best.setdefault(path, row)
            if len(best) >= limit:
                break
        if best:
            break
    # by score (a section's bm25 is the same under both queries): notes holding every word
    # were looked for first, but are not put first when a note with fewer words scores higher
    return sorted(best.values(), key=lambda m: (m.bm25, m.path))[:limit]


def _keyword_hits(
    conn: store.Connection, top: list[store.ChunkMatch], match: str
) -> tuple[Hit, ...]:
    """The fast path's chosen sections as hits, each with its snippet for `match`."""
    # snippets cost a re-tokenisation each: make them only for the hits shown
    shown = store.snippets(conn, match, [row.id for row in top])
    missing = [m.id for m in top if not plain_text(shown.get(m.id, ""))]
    bodies = store.chunk_bodies(conn, missing) if missing else {}
    return tuple(
        Hit(
            m.path,
            m.title,
            m.start_line,
            m.end_line,
            -m.bm25,
            plain_text(shown.get(m.id, "")) or _excerpt(bodies.get(m.id, "")),
            m.heading,
            (("keyword", -m.bm25),),
        )
        for m in top
    )
