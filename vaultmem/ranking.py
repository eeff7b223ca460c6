"""Hybrid ranking: keyword and vector candidates fused per note, then re-ranked by small signals.

Pure: candidates and note facts in, ranked notes with every signal's contribution out. Each
signal is a number in [0, 1] times its weight, so `--explain` can show what moved a note. The
weights are measured, not guessed: see docs/BENCHMARKS.md (retrieval) for what each earned.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from vaultmem.dates import DateRoute, dates_in

_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Candidate:
    """A chunk found by the keyword search, the vector search, or both."""

    chunk_id: int
    path: str
    title: str
    heading: str
    start_line: int
    end_line: int
    keyword: float | None = None  # bm25, higher is better
    vector: float | None = None  # cosine similarity


@dataclass(frozen=True)
class NoteFacts:
    """What the re-ranking signals need to know about a candidate's note."""

    date: str | None = None  # front matter date, ISO
    links: frozenset[str] = frozenset()  # paths it links to or is linked from
    expired: bool = False  # past its decay tier's lifetime
    modified: dt.datetime | None = None
    names: tuple[str, ...] = ()  # title, aliases and the other names it goes by
    linked_from: int = 0  # how many other notes link to it (store.linking_note_counts)
    one_section: bool = False  # its whole text is one section (see Weights.one_section)


@dataclass(frozen=True)
class Weights:
    keyword: float = 1.0
    vector: float = 0.3
    # when the keyword search finds little (few words of the query in the vault), meaning
    # matters more: the vector weight grows by up to this factor
    low_overlap: float = 0.0  # measured neutral on LoCoMo and SciFact: off (see BENCHMARKS)
    heading: float = 0.05
    path: float = 0.05
    date: float = 0.5
    graph: float = 0.03  # a tie-breaker: links among the top candidates
    freshness: float = 0.0
    expired: float = -0.5
    # pseudo-relevance feedback: sections found only through words the best sections share
    # (when no section holds every word) join the keyword evidence at this fraction; 0 is off
    feedback: float = 0.0
    # Issue 13, measured in bench/devset.py and bench/ablation.py (docs/BENCHMARKS.md):
    # a note whose title, an alias or another name is what the query asks for…
    title: float = 0.5
    # …and a keyword match over the whole note (`note_scores` given to rank: each note's bm25
    # over its whole text and properties, relative to the best note's), for words spread over
    # its sections…
    note: float = 0.6
    # …and the keyword evidence of a note's other sections besides its best one: measured,
    # not kept (0 is off)
    evidence: float = 0.0
    # …and link authority: a note many notes link to (the guide a documentation site's pages
    # point at) is a better answer to a generic question than a page nobody links to;
    # log-scaled, full at AUTHORITY_SCALE linking notes (see authority()). Round 4: MDN
    # success@1 +0.067, MRR +0.040; vaults without links are unchanged by construction.
    authority: float = 0.3
    # A note of one section is scored twice by keywords over the same text: as a section
    # among the sections and as a whole note among the notes (other columns and corpus
    # statistics: its names and properties; its path and tags). Its best section *is* its
    # whole note, so its keyword share is the better of the two (its section's relative to
    # the best section, its whole note's relative to the best note); a note of more sections
    # keeps its best section's (its whole text is the `note` signal's evidence, not a
    # section's). Round 6 (docs/BENCHMARKS.md): SciFact nDCG@10 +0.004, sample-vault and
    # kepano +0.005 to +0.028 MRR, LoCoMo R@5 +0.001; MDN and LongMemEval unchanged.
    one_section: bool = True
    # A long query (more than `long_words` of its words searched: a claim, a question told as
    # a sentence) weighs meaning at `long_vector` and the whole note at `long_note` (0 words
    # is off; a weight that is 0, as keyword mode's meaning, stays 0). Round 7
    # (docs/BENCHMARKS.md): at 7 words, 0.4 and 0.3, LongMemEval R@5 and MRR +0.004 but
    # LoCoMo R@5 and MRR -0.001 on main d12c761, whose routed dates had already brought
    # LongMemEval back above its filing-time figures: measured, not kept (off).
    long_words: int = 0
    long_vector: float = 0.4
    long_note: float = 0.3
    # How the keyword, meaning and whole-note evidence meet: "blend" adds each one's score
    # scaled to the best candidate's; "rrf" adds each one's reciprocal rank among the
    # candidates (weight x (k + 1) / (k + rank), so rank 1 is worth the full weight, as the
    # best score is under "blend"), which ignores how far apart the scores are.
    fusion: Literal["blend", "rrf"] = "blend"
    rrf_k: int = 60


@dataclass(frozen=True)
class Ranked:
    path: str
    best: Candidate  # the chunk to show
    score: float
    parts: tuple[tuple[str, float], ...] = field(default=())


def for_query(weights: Weights, words: int) -> Weights:
    """The weights for a query of `words` searched words (see Weights.long_words)."""
    if not weights.long_words or words <= weights.long_words:
        return weights
    return _long(weights)


@functools.lru_cache(maxsize=64)
def _long(weights: Weights) -> Weights:
    """`weights` for a long query (kept: a copy of the weights costs ~25 µs, a look-up ~2)."""
    vector = weights.long_vector if weights.vector else 0.0
    note = weights.long_note if weights.note else 0.0
    if (vector, note) == (weights.vector, weights.note):
        return weights
    return replace(weights, vector=vector, note=note)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text)}


STEM = 5  # a word of more than STEM letters matches any word sharing its first STEM letters


@functools.lru_cache(maxsize=16384)
def _vocabulary(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A text's words and the STEM-letter starts of its words that long (a search ranks the
    same titles and headings again and again: cached)."""
    if text.isascii():  # one lower() for the text: the same words when it is ASCII
        words = frozenset(_WORD_RE.findall(text.lower()))
    else:
        words = frozenset(w.lower() for w in _WORD_RE.findall(text))
    return words, _starts(words)


def _held(words: Iterable[str], have: frozenset[str], starts: frozenset[str]) -> int:
    """How many of `words` are in `have`, or, being longer than STEM letters, start as one of
    `starts` does (a simple stemming: "managing" finds "manager")."""
    n = 0
    for w in words:  # a plain loop: half the cost of sum() over a generator, counted alike
        if w in have or (len(w) > STEM and w[:STEM] in starts):
            n += 1
    return n


def _share(query: set[str], text: str) -> float:
    """How much of the query (by words, prefix-matched for simple stemming) `text` holds."""
    if not query:
        return 0.0
    have, starts = _vocabulary(text)
    return _held(query, have, starts) / len(query)


def name_match(query: set[str], names: Sequence[str]) -> float:
    """How well a note's title or best alias names what the query asks for, in [0, 1].

    The share of the query's words in the name times the share of the name's words in the
    query: "daily notes" gives the note titled "Daily notes" 1.0 and "Daily notes plugin" 0.67,
    while a long title that merely contains the words scores low.
    """
    return _name_match(frozenset(query), _starts(query), names)


def _starts(words: Iterable[str]) -> frozenset[str]:
    """The STEM-letter starts of the words that long."""
    return frozenset(w[:STEM] for w in words if len(w) >= STEM)


def _name_match(asked: frozenset[str], asked_starts: frozenset[str], names: Sequence[str]) -> float:
    """name_match with the query's words and their starts made once (rank scores every note)."""
    if not asked:
        return 0.0
    best = 0.0
    for name in names:
        have, starts = _vocabulary(name)
        if not have:
            continue
        hit_q = _held(asked, have, starts)
        hit_n = _held(have, asked, asked_starts)
        best = max(best, (hit_q / len(asked)) * (hit_n / len(have)))
    return best


@dataclass
class Memo:
    """One search's text scores (a heading's or a path's share of the query, a note's name
    match), some computed ahead by `prepare` while the search waits for its vectors; `rank`
    computes the rest and reads all back: the same values either way."""

    query_words: frozenset[str]
    shares: dict[str, float] = field(default_factory=dict)
    names: dict[tuple[str, ...], float] = field(default_factory=dict)
    starts: frozenset[str] = frozenset()  # the query words' starts (made once, below)

    def __post_init__(self) -> None:
        self.starts = _starts(self.query_words)

    def share(self, text: str) -> float:
        found = self.shares.get(text)
        if found is None:
            found = self.shares[text] = _share(set(self.query_words), text)
        return found

    def name(self, names: Sequence[str]) -> float:
        key = tuple(names)
        found = self.names.get(key)
        if found is None:
            found = self.names[key] = _name_match(self.query_words, self.starts, key)
        return found


def prepare(
    memo: Memo,
    candidates: Iterable[Candidate],
    facts: Mapping[str, NoteFacts],
    weights: Weights = Weights(),
) -> None:
    """What `rank` would compute of these candidates' text scores, into `memo`."""
    for c in candidates:
        if weights.heading and c.heading:
            memo.share(c.heading)
        if weights.path:
            memo.share(f"{c.path} {c.title}")
        if weights.title and c.path in facts:
            memo.name(facts[c.path].names)


_NO_FACTS = NoteFacts()

AUTHORITY_SCALE = 1000  # linking notes at which link authority is full


def authority(linked_from: int, scale: int | None = None) -> float:
    """A note's link authority in [0, 1]: the number of notes linking to it, log-scaled
    (log(1 + n) / log(1 + scale)), so the first few links count most; full from `scale`
    (default AUTHORITY_SCALE) on."""
    if linked_from <= 0:
        return 0.0
    top = AUTHORITY_SCALE if scale is None else scale
    return min(1.0, math.log1p(linked_from) / math.log1p(max(1, top)))


def other_sections(scores: Sequence[float]) -> float:
    """Evidence beyond a note's best section, in [0, 1]: its next two sections' scores (each
    already relative to the best section of the search), the second counted in full, the third
    half."""
    rest = sorted(scores, reverse=True)[1:3]
    return min(1.0, sum(w * s for w, s in zip((1.0, 0.5), rest, strict=False)))


def _in_route(route: DateRoute, path: str, title: str, facts: NoteFacts) -> bool:
    days = dates_in(f"{path} {title}")
    if facts.date:
        days += dates_in(facts.date[:10])
    return any(route.covers(d) for d in days)


def rank(
    candidates: Sequence[Candidate],
    facts: Mapping[str, NoteFacts],
    query_words: set[str],
    weights: Weights = Weights(),
    route: DateRoute | None = None,
    now: dt.datetime | None = None,
    limit: int = 10,
    names: Mapping[str, Sequence[str]] | None = None,
    note_scores: Mapping[str, float] | None = None,
    signals: Sequence[tuple[str, float, Mapping[str, float]]] = (),
    memo: Memo | None = None,
) -> list[Ranked]:
    """Fuse per note (best chunk per retriever), add the signals, best first.

    `names`: each note's names, for the title signal, in place of its facts' names;
    `note_scores`: whole-note keyword scores in [0, 1], for the note signal; `signals`: more
    per-note evidence, each (label, weight, value in [0, 1] by path; a missing note has 0),
    added before the graph tie-breaker looks at the head of the order; `memo`: text scores
    computed ahead for these query words (see prepare)."""
    weights = for_query(weights, len(query_words))
    by_note: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_note.setdefault(c.path, []).append(c)
    if not by_note:
        return []
    keyword = {p: max((c.keyword or 0.0) for c in cs) for p, cs in by_note.items()}
    vector = {
        p: max((c.vector for c in cs if c.vector is not None), default=None)
        for p, cs in by_note.items()
    }
    top_keyword = max(keyword.values())
    sims = [v for v in vector.values() if v is not None]
    low, high = (min(sims), max(sims)) if sims else (0.0, 1.0)
    keyword_notes = sum(1 for v in keyword.values() if v > 0)
    vector_weight = weights.vector
    if keyword_notes < 3:  # little keyword evidence: lean on meaning
        vector_weight *= 1 + weights.low_overlap

    asked = frozenset(query_words)
    if memo is None or memo.query_words != asked:
        memo = Memo(asked)
    rrf = weights.fusion == "rrf"
    keyword_rank = _places(keyword) if rrf else {}
    vector_rank = _places(vector) if rrf else {}
    note_rank = _places(note_scores or {}) if rrf else {}

    def reciprocal(place: int) -> float:
        return (weights.rrf_k + 1) / (weights.rrf_k + place)

    whole = note_scores if weights.one_section and note_scores and not rrf else None
    base: dict[str, list[tuple[str, float]]] = {}
    shown: dict[str, Candidate] = {}  # each note's best chunk
    for path, chunks in by_note.items():
        parts: list[tuple[str, float]] = []
        if top_keyword > 0 and keyword[path] > 0:
            share = reciprocal(keyword_rank[path]) if rrf else keyword[path] / top_keyword
            if whole is not None and facts.get(path, _NO_FACTS).one_section:
                share = max(share, whole.get(path, 0.0))  # see Weights.one_section
            parts.append(("keyword", weights.keyword * share))
        sim = vector[path]
        if sim is not None and vector_weight:
            spread = high - low
            share = (
                reciprocal(vector_rank[path])
                if rrf
                else ((sim - low) / spread if spread > 0 else 1.0)
            )
            parts.append(("vector", vector_weight * share))
        best = _best_chunk(chunks, top_keyword, low, high, vector_weight, weights.keyword)
        note_facts = facts.get(path, NoteFacts())
        if weights.heading and best.heading:
            parts.append(("heading", weights.heading * memo.share(best.heading)))
        if weights.path:
            parts.append(("path", weights.path * memo.share(f"{path} {best.title}")))
        if weights.title:
            known = names.get(path, ()) if names is not None else note_facts.names
            parts.append(("title", weights.title * memo.name(known)))
        if weights.note and note_scores is not None:
            if rrf:
                share = reciprocal(note_rank[path]) if path in note_rank else 0.0
            else:
                share = note_scores.get(path, 0.0)
            parts.append(("note", weights.note * share))
        if weights.evidence and top_keyword > 0:
            relative = [(c.keyword or 0.0) / top_keyword for c in chunks]
            parts.append(("evidence", weights.evidence * other_sections(relative)))
        if weights.authority and note_facts.linked_from:
            parts.append(("authority", weights.authority * authority(note_facts.linked_from)))
        if route is not None and weights.date and _in_route(route, path, best.title, note_facts):
            parts.append(("date", weights.date))
        if note_facts.expired and weights.expired:
            parts.append(("expired", weights.expired))
        if weights.freshness and note_facts.modified and now:
            age_days = max(0.0, (now - note_facts.modified).total_seconds() / 86400)
            parts.append(("freshness", weights.freshness * math.exp(-age_days / 30)))
        for label, weight, values in signals:
            if weight and path in values:
                parts.append((label, weight * values[path]))
        base[path] = [p for p in parts if p[1]]
        shown[path] = best

    # each note's total once (the same sum, in the same order, as every time it is asked)
    totals = {path: sum(v for _, v in parts) for path, parts in base.items()}
    order = sorted(base, key=lambda p: (-totals[p], p))
    if weights.graph:
        head = set(order[: max(limit * 2, 10)])
        for path in head:
            linked = len(facts.get(path, NoteFacts()).links & (head - {path}))
            if linked:
                base[path].append(("graph", weights.graph * min(1.0, linked / 3)))
                totals[path] = sum(v for _, v in base[path])
        order = sorted(base, key=lambda p: (-totals[p], p))
    return [Ranked(p, shown[p], totals[p], tuple(base[p])) for p in order[:limit]]


def _places(scores: Mapping[str, float | None]) -> dict[str, int]:
    """Each note's place (1 = best) by a score, for the notes that have one; ties share the
    better place."""
    ordered = sorted(((s, p) for p, s in scores.items() if s is not None), reverse=True)
    places: dict[str, int] = {}
    last: float | None = None
    place = 0
    for n, (score, path) in enumerate(ordered, start=1):
        if score != last:
            place, last = n, score
        places[path] = place
    return places


def _best_chunk(
    chunks: list[Candidate],
    top_keyword: float,
    low: float,
    high: float,
    vector_weight: float,
    keyword_weight: float,
) -> Candidate:
    """The chunk that carries most of the note's score: the one to show."""

    def score(c: Candidate) -> float:
        s = keyword_weight * (c.keyword or 0.0) / top_keyword if top_keyword > 0 else 0.0
        if c.vector is not None:
            s += vector_weight * ((c.vector - low) / (high - low) if high > low else 1.0)
        return s

    return max(chunks, key=lambda c: (score(c), -c.chunk_id))
