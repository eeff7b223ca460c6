r"""Ranking ideas in seconds: every question's ranking inputs captured once, ranked again per idea.

    .venv/bin/python bench/rank_replay.py capture [--sets S,...] [--embedder wordllama]
    .venv/bin/python bench/rank_replay.py replay --variants NAME,... [--sets S,...]

A hybrid search spends nearly all its time finding candidates (FTS5, the vectors, the notes'
facts); `ranking.rank` then fuses them in a few milliseconds. `capture` runs every question of
the sets through the real `Vault.search` once, with `ranking.rank` wrapped to keep what its
last call (the one whose order is shown) was handed: the candidates with their keyword and
meaning scores, the notes' facts, the query words, the whole-note scores, the date route. It
also keeps what a query-adaptive rule may read of the index: each query word's number of
sections and notes holding it, and the index's size. `replay` hands those inputs, changed by
each idea of REPLAY (below), to the real `ranking.rank` again and scores the order, beside
`defaults` (the inputs unchanged, which must give the captured order: checked on every
question). A replayed idea only re-weighs the candidates a search found; an idea that changes
which candidates are found needs the real path (bench/_variants.py, bench/ablation.py,
bench/devset.py), which is where a chosen idea is confirmed.

Sets: scifact-train (809 claims, to tune on), scifact (the 300 test claims), longmemeval,
locomo, mdn, kepano, sample (the dev sets: tuning questions and the held-out third apart).
Indexes: bench/retrieval.py's ($VAULTMEM_BENCH_TMP/retrieval/<set>-<embedder>) and
bench/devset.py's ($VAULTMEM_BENCH_TMP/devset/<set>-default.db); nothing is reindexed from
scratch (a reindex that finds changes says so). Captures go to $VAULTMEM_BENCH_TMP/replay.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import devset as dv
import retrieval as rt
from _common import DEFAULT_MDN_DIR, WORK

from vaultmem import ranking, search

CAPTURES = WORK / "replay"
SETS = ("scifact-train", "scifact", "longmemeval", "locomo", "mdn", "kepano", "sample")
DEVSETS = ("mdn", "kepano", "sample")


@dataclass
class Record:
    """One question: what ranking.rank was handed, and what the index says of its words."""

    qid: str
    text: str
    relevant: dict[str, int]
    held_out: bool
    args: dict[str, Any]  # ranking.rank's arguments (memo left out)
    shown: list[str]  # the captured search's hits, in order
    sections_holding: dict[str, int] = field(default_factory=dict)
    notes_holding: dict[str, int] = field(default_factory=dict)
    sections: int = 0  # the index's size
    notes: int = 0


# --------------------------------------------------------------------------- capture


def _questions(name: str) -> list[tuple[str, str, dict[str, int], bool]]:
    if name in DEVSETS:
        return [(q.qid, q.text, dict.fromkeys(q.relevant, 1), dv.held_out(q.qid))
                for q in dv.load_set(name)]
    ds = (rt.load_scifact("train") if name == "scifact-train" else rt.load_scifact()
          if name == "scifact" else rt.load_locomo(False) if name == "locomo"
          else rt.load_longmemeval())
    return [(q.qid, q.text, dict(q.relevant), False) for q in ds.queries]


def _vault(name: str, embedder: str, mdn_dir: Path) -> Any:
    from vaultmem.vault import Vault

    if name in DEVSETS:
        return Vault(dv.vault_root(name, mdn_dir), WORK / "devset" / f"{name}-default.db")
    base = rt.BENCH_DIR / f"{name.removesuffix('-train')}-{rt.embedder_slug(embedder)}"
    return Vault(base / "vault", base / "index.db")


def capture(name: str, embedder: str, mdn_dir: Path) -> Path:
    from vaultmem import store

    vault = _vault(name, embedder, mdn_dir)
    report = vault.reindex()
    print(f"[{name}] reindex: {report.changed} notes changed", file=sys.stderr, flush=True)
    vault.warm(background=False)
    conn = vault.conn
    sections, notes = store.section_count(conn), store.note_text_count(conn)
    held: dict[str, int] = {}
    noted: dict[str, int] = {}
    plain_rank = ranking.rank
    last: dict[str, Any] = {}

    def rank(candidates: Sequence[ranking.Candidate], facts: Any, query_words: set[str],
             weights: ranking.Weights = BASE, **kwargs: Any) -> Any:
        kwargs.pop("memo", None)
        last.clear()
        last.update(candidates=list(candidates), facts=dict(facts),
                    query_words=set(query_words), weights=weights, **kwargs)
        return plain_rank(candidates, facts, query_words, weights, **kwargs)

    out: list[Record] = []
    started = time.perf_counter()
    cpu = time.process_time()
    ranking.rank = rank  # type: ignore[assignment]
    try:
        for qid, text, relevant, held_out in _questions(name):
            last.clear()
            hits = vault.search(text, limit=10).hits
            words = search.query_words(text)
            for w in words:
                if w not in held:
                    held[w] = store.sections_holding(conn, w)
                    noted[w] = store.notes_holding(conn, w)
            out.append(Record(qid, text, relevant, held_out, dict(last), [h.path for h in hits],
                              {w: held[w] for w in words}, {w: noted[w] for w in words},
                              sections, notes))
    finally:
        ranking.rank = plain_rank  # type: ignore[assignment]
    CAPTURES.mkdir(parents=True, exist_ok=True)
    path = CAPTURES / f"{_stem(name, embedder)}.pkl"
    with path.open("wb") as fh:
        pickle.dump(out, fh)
    print(f"[{name}] {len(out)} questions in {time.perf_counter() - started:.0f}s wall, "
          f"{time.process_time() - cpu:.0f}s CPU -> {path}", file=sys.stderr, flush=True)
    return path


# --------------------------------------------------------------------------- replay

Variant = Callable[[Record], list[str]]


def ranked(rec: Record, **changes: Any) -> list[str]:
    """The real ranking.rank over a record's inputs, some of them changed."""
    if not rec.args:  # the search ranked nothing (no candidates)
        return list(rec.shown)
    args = {**rec.args, **changes}
    return [r.path for r in ranking.rank(**args)]


def scores(name: str, rec: Record, order: Sequence[str]) -> dict[str, float]:
    if name.startswith("scifact"):
        return {"ndcg@10": rt.ndcg_at_k(order, rec.relevant, 10),
                "recall@10": rt.recall_at_k(order, rec.relevant, 10)}
    if name in DEVSETS:
        rank = dv.first_rank(order, frozenset(rec.relevant))
        return {"s@1": float(rank == 1), "s@3": float(rank is not None and rank <= 3),
                "s@10": float(rank is not None), "mrr": 1.0 / rank if rank else 0.0}
    return {"R@5": rt.recall_at_k(order, rec.relevant, 5),
            "R@10": rt.recall_at_k(order, rec.relevant, 10),
            "MRR": rt.reciprocal_rank(order, rec.relevant, 10)}


def summary(name: str, rows: Sequence[tuple[Record, dict[str, float]]]) -> str:
    def mean(keys: Sequence[str], which: Sequence[dict[str, float]]) -> str:
        n = max(1, len(which))
        return " / ".join(f"{sum(r[k] for r in which) / n:.3f}" for k in keys)

    every = [s for _, s in rows]
    if name.startswith("scifact"):
        return mean(("ndcg@10", "recall@10"), every)
    if name in DEVSETS:
        keys = ("s@1", "s@3", "s@10", "mrr")
        tuning = [s for r, s in rows if not r.held_out]
        held = [s for r, s in rows if r.held_out]
        return f"{mean(keys, every)} (tune {mean(keys, tuning)}; held {mean(keys, held)})"
    return mean(("R@5", "R@10", "MRR"), every)


def _stem(name: str, embedder: str) -> str:
    """A capture's file name: the set, and the embedder unless it is wordllama."""
    return name if embedder == "wordllama" else f"{name}-{rt.embedder_slug(embedder)}"


def load(name: str, embedder: str = "wordllama") -> list[Record]:
    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if name == "Record":  # captured as __main__.Record or rank_replay.Record
                return Record
            return super().find_class(module, name)

    with (CAPTURES / f"{_stem(name, embedder)}.pkl").open("rb") as fh:
        records: list[Record] = Unpickler(fh).load()
    return records


def replay(names: Sequence[str], labels: Sequence[str], per_query: Path | None,
           embedder: str = "wordllama") -> None:
    for name in names:
        records = load(name, embedder)
        # the inputs unchanged must give the captured order: else the capture is not faithful
        wrong = [r.qid for r in records if ranked(r) != r.shown]
        print(f"\n## {name}: {len(records)} questions"
              + (f" ({len(wrong)} replayed differently from the capture: {wrong[:5]})"
                 if wrong else ""), flush=True)
        for label in labels:
            t = time.process_time()
            make = REPLAY[label]
            rows = [(r, scores(name, r, make(r))) for r in records]
            ms = (time.process_time() - t) * 1000 / max(1, len(records))
            print(f"| {label} | {summary(name, rows)} | {ms:.1f} ms |", flush=True)
            if per_query is not None:
                import json

                per_query.mkdir(parents=True, exist_ok=True)
                with (per_query / f"{name}-{label}.jsonl").open("w") as fh:
                    for r, s in rows:
                        fh.write(json.dumps({"id": r.qid, "query": r.text, **s}) + "\n")


# --------------------------------------------------------------------------- the ideas
# (engineer S, round 7). Each is a function of the record: the query's shape, read from the
# inputs a search has at ranking time (the query words, their section counts, the candidates'
# keyword scores), sets the weights.

BASE = ranking.Weights()


def content_words(rec: Record) -> int:
    return len(rec.args.get("query_words", ()))


def held_share(rec: Record) -> float:
    """The share of the query's words some section holds."""
    words = rec.sections_holding
    return sum(1 for n in words.values() if n) / max(1, len(words))


def keyword_notes(rec: Record) -> list[float]:
    """Each note's best keyword score, best first."""
    best: dict[str, float] = {}
    for c in rec.args.get("candidates", ()):
        if c.keyword:
            best[c.path] = max(best.get(c.path, 0.0), c.keyword)
    return sorted(best.values(), reverse=True)


def peak(rec: Record, k: int = 2) -> float:
    """How far the best note's keyword score stands above the k-th's: 1 - s_k / s_1."""
    best = keyword_notes(rec)
    if len(best) < k or best[0] <= 0:
        return 1.0
    return 1.0 - best[k - 1] / best[0]


def idf_sum(rec: Record) -> float:
    """The query's words' summed idf over sections (what the best bm25 can reach)."""
    n = max(1, rec.sections)
    return sum(max(0.0, math.log((n - h + 0.5) / (h + 0.5))) for h in rec.sections_holding.values())


def _weights(rec: Record) -> ranking.Weights:
    w = rec.args.get("weights", BASE)
    return w if isinstance(w, ranking.Weights) else BASE


def by_length(vector_short: float, vector_long: float, at: int = 6, note_long: float | None = None,
              ) -> Variant:
    """The meaning weight (and the whole-note weight) by the query's length in content words:
    `vector_short` up to `at` words, `vector_long` past it."""
    def run(rec: Record) -> list[str]:
        w = _weights(rec)
        long = content_words(rec) > at
        changes = {"vector": vector_long if long else vector_short}
        if note_long is not None and long:
            changes["note"] = note_long
        return ranked(rec, weights=replace(w, **changes))
    return run


def by_peak(low: float, high: float, pivot: float = 0.2, k: int = 2) -> Variant:
    """The meaning weight by how peaked the keyword scores are: `high` when the best note's
    lead over the k-th is under `pivot` (keywords undecided), `low` otherwise."""
    def run(rec: Record) -> list[str]:
        w = _weights(rec)
        return ranked(rec, weights=replace(w, vector=high if peak(rec, k) < pivot else low))
    return run


def vector_ramp(base: float, slope: float, per: str = "words", lo: float = 0.0,
                hi: float = 1.0) -> Variant:
    """A meaning weight linear in one of the query's features, clamped to [lo, hi]."""
    def run(rec: Record) -> list[str]:
        w = _weights(rec)
        x = {"words": content_words(rec), "peak": peak(rec), "held": held_share(rec),
             "peak5": peak(rec, 5)}[per]
        return ranked(rec, weights=replace(w, vector=min(hi, max(lo, base + slope * x))))
    return run


def weighted(**changes: Any) -> Variant:
    return lambda rec: ranked(rec, weights=replace(_weights(rec), **changes))


def curved(kw: float = 1.0, vec: float = 1.0, notepow: float = 1.0, **changes: Any) -> Variant:
    """Each half's share raised to a power before it is weighed (> 1 favours the few best,
    < 1 lifts the middle): keyword shares (kw/top)^kw, meaning shares rescaled so that the
    min-max share becomes share^vec, whole-note shares^note."""
    def run(rec: Record) -> list[str]:
        cands = rec.args["candidates"]
        top = max((c.keyword or 0.0 for c in cands), default=0.0)
        sims = [c.vector for c in cands if c.vector is not None]
        low, high = (min(sims), max(sims)) if sims else (0.0, 1.0)
        out = []
        for c in cands:
            k, v = c.keyword, c.vector
            if kw != 1.0 and k and top > 0:
                k = top * (k / top) ** kw
            if vec != 1.0 and v is not None and high > low:
                v = low + (high - low) * ((v - low) / (high - low)) ** vec
            out.append(replace(c, keyword=k, vector=v))
        notes = rec.args.get("note_scores")
        if notes and notepow != 1.0:
            notes = {p: s ** notepow for p, s in notes.items()}
        return ranked(rec, candidates=out, note_scores=notes,
                      weights=replace(_weights(rec), **changes))
    return run


def concentrated(gamma: float, floor: float = 0.0) -> Variant:
    """The whole-note share scaled by how concentrated the note's keyword matches are: its
    best section's share of the keyword scores of its sections among the candidates, to the
    power gamma (a note matched in one section keeps its share; one whose matches repeat
    over many sections is damped), never below `floor` of it."""
    def run(rec: Record) -> list[str]:
        notes = rec.args.get("note_scores")
        if not notes:
            return ranked(rec)
        best: dict[str, float] = {}
        total: dict[str, float] = {}
        for c in rec.args["candidates"]:
            if c.keyword:
                best[c.path] = max(best.get(c.path, 0.0), c.keyword)
                total[c.path] = total.get(c.path, 0.0) + c.keyword
        scaled = {p: s * max(floor, (best[p] / total[p]) ** gamma) if p in best else s
                  for p, s in notes.items()}
        return ranked(rec, note_scores=scaled)
    return run


def spread(scale: float, per: int = 1) -> Variant:
    """The whole-note share scaled by the number n of the note's sections among the keyword
    candidates: x min(1, per / n)^scale (V damped by all of a note's sections; this counts only
    those holding query words)."""
    def run(rec: Record) -> list[str]:
        notes = rec.args.get("note_scores")
        if not notes:
            return ranked(rec)
        hits: dict[str, int] = {}
        for c in rec.args["candidates"]:
            if c.keyword:
                hits[c.path] = hits.get(c.path, 0) + 1
        scaled = {p: s * min(1.0, per / hits[p]) ** scale if hits.get(p) else s
                  for p, s in notes.items()}
        return ranked(rec, note_scores=scaled)
    return run


def long_query(at: int, vecpow: float = 1.0, kwpow: float = 1.0, notepow: float = 1.0,
               ramp: float = 0.0, top: float = 1.0, **changes: Any) -> Variant:
    """Queries of more than `at` content words get other weights (`changes`, e.g. vector=0.4)
    and share curves (as curved); with `ramp`, the meaning weight grows by `ramp` a word past
    `at` instead (up to `top`)."""
    def short(rec: Record) -> list[str]:
        if "long_words" in changes:  # the round-7 rule off for short queries as well
            return ranked(rec, weights=replace(_weights(rec), long_words=changes["long_words"]))
        return ranked(rec)

    def run(rec: Record) -> list[str]:
        n = content_words(rec)
        if n <= at:
            return short(rec)
        more = dict(changes)
        if ramp:
            more["vector"] = min(top, _weights(rec).vector + ramp * (n - at))
        return curved(kwpow, vecpow, notepow, **more)(rec)
    return run


def by_held(vector: float, below: float = 1.0) -> Variant:
    """The meaning weight `vector` when less than `below` of the query's words are in any
    section (the vault does not hold some of what is asked: meaning reads past the words)."""
    def run(rec: Record) -> list[str]:
        if held_share(rec) >= below:
            return ranked(rec)
        w = ranking.for_query(_weights(rec), content_words(rec))
        return ranked(rec, weights=replace(w, vector=vector, long_words=0))
    return run


REPLAY: dict[str, Variant] = {
    "defaults": lambda rec: ranked(rec),
    **{f"vec{v}": weighted(vector=v) for v in (0.15, 0.2, 0.25, 0.35, 0.4, 0.5)},
    **{f"note{v}": weighted(note=v) for v in (0.3, 0.45, 0.8)},
    **{f"kwpow{p}": curved(kw=p) for p in (0.5, 0.75, 1.5, 2.0)},
    **{f"vecpow{p}": curved(vec=p) for p in (0.5, 0.75, 1.5, 2.0)},
    **{f"notepow{p}": curved(notepow=p) for p in (0.5, 0.75, 1.5, 2.0)},
    **{f"conc{g}": concentrated(g) for g in (0.25, 0.5, 1.0)},
    **{f"spread{g}": spread(g) for g in (0.25, 0.5, 1.0)},
    **{f"spread{g}-3": spread(g, 3) for g in (0.5, 1.0)},
    **{f"len{a}-{b}@{n}": by_length(a, b, n) for a, b, n in (
        (0.3, 0.4, 6), (0.3, 0.4, 8), (0.3, 0.2, 6), (0.3, 0.2, 8), (0.3, 0.5, 6))},
    **{f"peak{a}-{b}@{p}": by_peak(a, b, p) for a, b, p in (
        (0.3, 0.5, 0.1), (0.3, 0.5, 0.2), (0.2, 0.4, 0.1), (0.2, 0.4, 0.2), (0.3, 0.4, 0.1))},
    **{f"long{n}-v{v}": long_query(n, vector=v) for n in (4, 5, 6, 7)
       for v in (0.35, 0.4, 0.45, 0.5)},
    **{f"long{n}-v{v}-n{m}": long_query(n, vector=v, note=m) for n in (5, 6)
       for v in (0.4, 0.5) for m in (0.45, 0.8)},
    **{f"long{n}-ramp{r}": long_query(n, ramp=r) for n in (4, 5, 6) for r in (0.02, 0.03, 0.05)},
    **{f"long{n}-v{v}-vp{p}": long_query(n, vecpow=p, vector=v) for n in (5, 6)
       for v in (0.3, 0.4) for p in (0.5, 0.75)},
    **{f"long{n}-v{v}-n{m}": long_query(n, vector=v, note=m) for n in (5, 6, 7)
       for v in (0.3, 0.35, 0.4) for m in (0.3, 0.45) if (n, v, m) != (5, 0.4, 0.45)
       and (n, v, m) != (6, 0.4, 0.45)},
    **{f"long{n}-v{v}-n{m}": long_query(n, vector=v, note=m) for n in (7, 8)
       for v in (0.4, 0.45, 0.5) for m in (0.2, 0.3) if (n, v, m) != (7, 0.4, 0.3)},
    **{f"held{v}": by_held(v) for v in (0.2, 0.4, 0.5)},
    # after main d12c761 (routed dates' words kept): the rule off, and the designs that gained
    # SciFact's train claims most, each from main's weights (the rule off)
    "nolong": weighted(long_words=0),
    "m-long5-v0.4-vp0.5": long_query(5, vecpow=0.5, vector=0.4, long_words=0),
    "m-long4-v0.45": long_query(4, vector=0.45, long_words=0),
    "m-vec0.5": weighted(vector=0.5, long_words=0),
    "m-vecpow0.5": curved(vec=0.5, long_words=0),
    # on top of the long-query weights (the defaults since round 7): share curves for long queries
    **{f"r7long-vp{p}": long_query(7, vecpow=p) for p in (0.5, 0.75)},
    **{f"r7long-kp{p}": long_query(7, kwpow=p) for p in (0.75, 1.5)},
    **{f"r7long-np{p}": long_query(7, notepow=p) for p in (0.5, 1.5)},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("capture", "replay"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--embedder", default="wordllama")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--variants", default="defaults")
    ap.add_argument("--per-query", type=Path, metavar="DIR")
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # before numpy is loaded (vaultmem loads it lazily)
    names = [s for s in args.sets.split(",") if s]
    for n in names:
        if n not in SETS:
            dv.die(f"unknown set {n!r} (use {', '.join(SETS)})")
    if args.what == "capture":
        import _models

        _models.register()
        os.environ["VAULTMEM_EMBEDDER"] = args.embedder
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            for n in names:
                capture(n, args.embedder, args.mdn_dir)
        return
    labels = [v for v in args.variants.split(",") if v]
    for v in labels:
        if v not in REPLAY:
            dv.die(f"unknown variant {v!r}")
    replay(names, labels, args.per_query, args.embedder)


if __name__ == "__main__":
    main()
