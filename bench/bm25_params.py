r"""SciFact: the whole-note signal with bm25's k1 and b (and a BM25+ floor) other than FTS5's.

    .venv/bin/python bench/bm25_params.py [--set scifact-train] [--k1 0.6,0.9,1.2,1.5,2.0]
                                          [--b 0.4,0.6,0.75,0.9] [--delta 0,0.5,1]

FTS5's bm25() fixes k1 = 1.2 and b = 0.75. This recomputes the whole-note bm25 of every note
from the index's own token counts (fts5vocab `instance` over notes_fts: each term's weighted
count per note, names x4 and text x1 as search weighs them; each note's size from
notes_fts_docsize; query words stemmed by a temporary table with the index's tokenizer), first
checked against FTS5's own scores at k1 1.2, b 0.75 (the same scores to 6 decimals, or it
stops). Each (k1, b, delta) then replaces the whole-note scores handed to ranking.rank in
bench/rank_replay.py's captures (run `rank_replay.py capture` first), in two forms: with the
defaults' weights, and with the whole note alone as keyword evidence (keyword 0, note 1.0).
The sections' keyword scores and the candidates found are FTS5's (a measurement of the
parameters, not a path search can take: FTS5 has no k1 or b to set).
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rank_replay as rr
import retrieval as rt

from vaultmem import search

NAME_WEIGHT, TEXT_WEIGHT = 4.0, 1.0  # store.text.NOTE_FTS_WEIGHTS


def varints(blob: bytes) -> list[int]:
    """SQLite varints (big-endian groups of 7 bits), as FTS5's docsize rows hold them."""
    out, i = [], 0
    while i < len(blob):
        v = 0
        while True:
            byte = blob[i]
            i += 1
            v = (v << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(v)
    return out


class NoteBm25:
    """Whole-note bm25 with any k1, b and delta, from an index's notes_fts token counts."""

    def __init__(self, index: Path) -> None:
        import numpy as np
        import sqlean as sqlite3

        self.np = np
        self.conn = sqlite3.connect(index)
        c = self.conn
        c.execute("CREATE VIRTUAL TABLE temp.nv USING fts5vocab(main, 'notes_fts', 'instance')")
        counts: dict[str, dict[int, float]] = collections.defaultdict(dict)
        for term, doc, col in c.execute("SELECT term, doc, col FROM temp.nv"):
            held = counts[term]
            held[doc] = held.get(doc, 0.0) + (NAME_WEIGHT if col == "names" else TEXT_WEIGHT)
        sizes = {r: sum(varints(sz)) for r, sz in c.execute("SELECT id, sz FROM notes_fts_docsize")}
        paths = dict(c.execute("SELECT id, path FROM notes"))
        self.ids = sorted(sizes)
        at = {d: i for i, d in enumerate(self.ids)}
        self.paths = [paths[d] for d in self.ids]
        self.size = np.array([sizes[d] for d in self.ids], dtype=np.float64)
        self.avgdl = float(self.size.mean())
        self.terms = {
            t: (np.array([at[d] for d in docs], np.int64), np.array(list(docs.values())))
            for t, docs in counts.items()
        }
        c.execute("CREATE VIRTUAL TABLE temp.stem USING fts5(w, tokenize ="
                  " 'porter unicode61 remove_diacritics 2')")
        c.execute("CREATE VIRTUAL TABLE temp.sv USING fts5vocab(temp, 'stem', 'instance')")
        self.stem: dict[str, list[str]] = {}

    def stems(self, words: list[str]) -> list[str]:
        new = [w for w in dict.fromkeys(words) if w not in self.stem]
        if new:
            self.conn.execute("DELETE FROM temp.stem")
            self.conn.executemany("INSERT INTO temp.stem(rowid, w) VALUES (?, ?)",
                                  list(enumerate(new, 1)))
            got: dict[int, list[str]] = collections.defaultdict(list)
            for term, doc in self.conn.execute("SELECT term, doc FROM temp.sv"):
                got[doc].append(term)
            for i, w in enumerate(new, 1):
                self.stem[w] = got.get(i, [])
        return [s for w in words for s in self.stem[w]]

    def scores(self, words: list[str], k1: float = 1.2, b: float = 0.75,
               delta: float = 0.0) -> dict[str, float]:
        """Each note holding a word: its bm25 (higher is better), as FTS5 sums it."""
        np = self.np
        n_notes = len(self.ids)
        acc = np.zeros(n_notes)
        held = np.zeros(n_notes, dtype=bool)
        for term in self.stems(words):
            docs, f = self.terms.get(term, (np.zeros(0, np.int64), np.zeros(0)))
            if not len(docs):
                continue
            idf = math.log((n_notes - len(docs) + 0.5) / (len(docs) + 0.5))
            idf = idf if idf > 0 else 1e-6
            norm = k1 * (1 - b + b * self.size[docs] / self.avgdl)
            acc[docs] += idf * (f * (k1 + 1) / (f + norm) + delta)
            held[docs] = True
        return {self.paths[i]: float(acc[i]) for i in np.flatnonzero(held)}


def check(bm: NoteBm25, records: list[rr.Record]) -> None:
    """The recomputed scores at FTS5's k1 and b are FTS5's own, or this measures nothing."""
    from vaultmem.store import text

    for rec in records[:20]:
        words = search.query_words(rec.text)
        mine = sorted(bm.scores(words).items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        fts = text.keyword_notes(bm.conn, " OR ".join(f'"{w}"' for w in words), 5)
        if [round(s, 6) for _, s in mine] != [round(s, 6) for _, s in fts]:
            rt.die(f"recomputed bm25 differs from FTS5's for {rec.text!r}: {mine} vs {fts}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="scifact-train", choices=("scifact-train", "scifact"))
    ap.add_argument("--k1", default="0.6,0.9,1.2,1.5,2.0")
    ap.add_argument("--b", default="0.4,0.6,0.75,0.9")
    ap.add_argument("--delta", default="0,0.5,1", help="BM25+ floors, tried at k1 1.2, b 0.75")
    args = ap.parse_args()
    records = rr.load(args.set)
    bm = NoteBm25(rt.BENCH_DIR / "scifact-wordllama" / "index.db")
    check(bm, records)

    def run(k1: float, b: float, delta: float, alone: bool) -> str:
        rows: list[dict[str, float]] = []
        for rec in records:
            if not rec.args:
                order = list(rec.shown)
            else:
                found = bm.scores(search.query_words(rec.text), k1, b, delta)
                top = max(found.values(), default=0.0)
                notes = {p: s / top for p, s in found.items()} if top > 0 else {}
                w: Any = rr._weights(rec)
                if alone:
                    w = replace(w, keyword=0.0, note=1.0)
                order = rr.ranked(rec, note_scores=notes, weights=w)
            rows.append(rr.scores(args.set, rec, order))
        n = len(rows)
        return (f"{sum(r['ndcg@10'] for r in rows) / n:.4f} / "
                f"{sum(r['recall@10'] for r in rows) / n:.4f}")

    floats = [float(x) for x in args.k1.split(",")], [float(x) for x in args.b.split(",")]
    grid = [(k1, b, 0.0) for k1 in floats[0] for b in floats[1]]
    grid += [(1.2, 0.75, float(d)) for d in args.delta.split(",") if float(d)]
    print(f"## {args.set}: {len(records)} claims; nDCG@10 / R@10\n"
          "| k1 | b | delta | defaults' weights | whole note alone (keyword 0, note 1) |\n"
          "|---:|---:|---:|---:|---:|", flush=True)
    for k1, b, delta in grid:
        print(f"| {k1} | {b} | {delta} | {run(k1, b, delta, False)} | "
              f"{run(k1, b, delta, True)} |", flush=True)


if __name__ == "__main__":
    main()
