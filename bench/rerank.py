r"""Re-ranking the top hits with all-MiniLM-L6-v2 (vaultmem/rerank.py): what it earns.

    .venv/bin/python bench/rerank.py [--sets sample,kepano,mdn,locomo,scifact,longmemeval]
                                     [--depth 30] [--tokens 128] [--weights 0.25,0.5,1]
                                     [--limit-queries N] [--mdn-dir DIR]

Every question runs once through the real search path (vaultmem.search.run, hybrid, the vault's
default model, its vectors in memory) with a recording re-ranker at depth D: it keeps the first
stage's top D notes (their scores and shown sections) and, for each, all-MiniLM-L6-v2's cosine
similarity to the question of (a) the shown section's passage (vaultmem.rerank.passage: title,
heading path, plain text, cut to --tokens tokens) and (b) the note's first section's passage
(vaultmem.rerank.Reranker.passages) and (c) the words around the match (the section's FTS5 snippet,
else its start; "snip"); it changes nothing. vaultmem.rerank.fuse is then applied to those lists
for each weight and each passage choice (best section, first section, the higher of the two: what
vaultmem does; snip, and the higher of snip and first), beside the first stage itself (weight 0:
the baseline, the same run). The scores are the dev sets' (bench/devset.py: success@1/@3/@10,
MRR@10) and bench/retrieval.py's (LoCoMo and LongMemEval session recall@5/@10 and MRR; SciFact
nDCG@10), over the same vaults and indexes those scripts build ($VAULTMEM_BENCH_TMP/devset,
$VAULTMEM_BENCH_TMP/retrieval).

The passages' vectors are kept in $VAULTMEM_BENCH_TMP/rerank-cache-<tokens>.npz, so a rerun
embeds only passages it has not seen. Writes bench/results/rerank-<tokens>.json (every
question's lists and similarities, and the tables).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import devset as dv
from _common import DEFAULT_MDN_DIR, WORK, machine_info, snapshot_code, write_json

DEVSETS = ("sample", "kepano", "mdn")
RETRIEVAL = ("locomo", "scifact", "longmemeval")


class DiskCache(dict[str, np.ndarray]):
    """The re-ranker's vector cache, loaded from and saved to an .npz file."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        if path.exists():
            with np.load(path) as data:
                keys = data["keys"]
                vectors = data["vectors"]
            for k, v in zip(keys.tolist(), vectors, strict=True):
                self[str(k)] = v
        self.loaded = len(self)

    def save(self) -> None:
        if len(self) == self.loaded:
            return
        keys = np.array(list(self.keys()))
        vectors = np.stack(list(self.values())).astype(np.float32)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        os.replace(tmp, self.path)
        self.loaded = len(self)


def recorder(settings: Any, cache: DiskCache) -> Any:
    from vaultmem import rerank

    class Recording(rerank.Reranker):
        """Records the first stage's top notes and their similarities; re-orders nothing."""

        def __init__(self) -> None:
            super().__init__(settings, cache=cache)
            self.last: list[dict[str, Any]] = []
            self.seconds = 0.0

        def __call__(self, conn: Any, query: str, ranked: Sequence[Any]) -> list[Any]:
            started = time.process_time()
            top = list(ranked[: self.settings.depth])
            best_texts, first_texts = self.passages(conn, top)
            texts = [f if f is not None else b for b, f in zip(best_texts, first_texts,
                                                               strict=True)]
            vectors = self.embed([query, *best_texts, *texts])
            q = vectors[0]
            best = vectors[1 : 1 + len(top)] @ q
            first = vectors[1 + len(top):] @ q
            # (c) the words around the match: the shown snippet, where the section has one
            from vaultmem import search as vsearch
            from vaultmem import store

            matches = vsearch.fts_queries(query)
            shown = store.snippets(conn, matches[-1], [r.best.chunk_id for r in top]) if (
                matches and top) else {}
            snips = [rerank.passage(r.best.title, r.best.heading,
                                    vsearch.plain(shown[r.best.chunk_id]))
                     if shown.get(r.best.chunk_id) else b for r, b in zip(top, best_texts,
                                                                           strict=True)]
            snip = self.embed(snips) @ q if top else best
            self.seconds = time.process_time() - started
            self.last = [
                {"path": r.path, "score": round(r.score, 5), "best": round(float(b), 5),
                 "first": round(float(f), 5), "snip": round(float(n), 5)}
                for r, b, f, n in zip(top, best, first, snip, strict=True)
            ]
            return list(ranked)

    return Recording()


def fused(rows: Sequence[dict[str, Any]], weight: float, which: str) -> list[str]:
    if weight == 0 or len(rows) < 2:
        return [r["path"] for r in rows]
    pick = {"max": ("best", "first"), "snipmax": ("snip", "first")}.get(which, (which,))
    sims = np.array([max(r[k] for k in pick) for r in rows], np.float32)
    low, high = float(sims.min()), float(sims.max())
    span = high - low
    scored = [(r["score"] + (weight * (s - low) / span if span > 1e-9 else 0.0), i)
              for i, (r, s) in enumerate(zip(rows, sims, strict=True))]
    return [rows[i]["path"] for _, i in sorted(scored, key=lambda t: (-t[0], t[1]))]


def open_set(name: str, args: argparse.Namespace) -> tuple[Any, list[Any], str]:
    """(vault, questions, kind of scoring) for a set, indexed as its own bench script does."""
    from vaultmem.vault import Vault

    if name in DEVSETS:
        questions = dv.load_set(name)
        root = dv.vault_root(name, args.mdn_dir)
        index = WORK / "devset" / f"{name}-default.db"
        index.parent.mkdir(parents=True, exist_ok=True)
        vault = Vault(root, index)
        vault.reindex()
        return vault, questions, "devset"
    import retrieval as rt

    ds = (rt.load_locomo(False) if name == "locomo" else rt.load_scifact()
          if name == "scifact" else rt.load_longmemeval())
    base = rt.BENCH_DIR / ds.name
    rt.write_vault(base / "vault", ds.notes)
    vault, _ = rt.prepare_vaultmem(ds, base / "vault", base / "index.db", False)
    queries = rt.subsample(ds.queries, args.limit_queries)
    return vault, queries, "scifact" if name == "scifact" else "recall"


def score(kind: str, ranked: list[str], q: Any) -> dict[str, float]:
    import retrieval as rt

    if kind == "devset":
        rank = dv.first_rank(ranked, q.relevant)
        return {"success@1": float(rank == 1), "success@3": float(rank is not None and rank <= 3),
                "success@10": float(rank is not None), "mrr@10": 1.0 / rank if rank else 0.0}
    if kind == "scifact":
        return rt.scifact_scores(ranked[:10], q, ranked)
    return rt.locomo_scores(ranked[:10], q)


def latency(args: argparse.Namespace) -> dict[str, Any]:
    """Per-search wall and CPU ms on MDN in one warm process (vectors in memory): without
    re-ranking, re-ranking passages never seen (a fresh cache each search), and re-ranking
    passages seen before (the same search again), interleaved question by question; then one
    CLI search as a person runs it (a fresh process each), --no-rerank and --rerank."""
    import statistics
    import subprocess

    from vaultmem import rerank, search

    vault, questions, _ = open_set("mdn", args)
    vault.warm(background=False)
    settings = rerank.Settings(depth=args.depth, tokens=args.tokens)
    warm = rerank.Reranker(settings)
    rerank.Reranker(settings).embed(["load the model"])  # loaded once, as a front-end would
    for q in questions[:3]:
        search.run(vault.conn, search.Query(q.text), vault.embedder,
                   matrix=vault.index.current_matrix())
    times: dict[str, list[tuple[float, float]]] = {"off": [], "cold": [], "warm": []}
    for q in questions[: args.latency]:
        for label in ("off", "cold", "warm"):
            reranker = None if label == "off" else warm if label == "warm" else rerank.Reranker(
                settings)
            if label == "warm":
                search.run(vault.conn, search.Query(q.text), vault.embedder,
                           matrix=vault.index.current_matrix(), reranker=warm)
            w, c = time.perf_counter(), time.process_time()
            search.run(vault.conn, search.Query(q.text), vault.embedder,
                       matrix=vault.index.current_matrix(), reranker=reranker)
            times[label].append(
                ((time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000))
    out: dict[str, Any] = {"loadavg": dv.loadavg(), "questions": args.latency}
    for label, rows in times.items():
        out[label] = {"wall_p50_ms": statistics.median(r[0] for r in rows),
                      "cpu_p50_ms": statistics.median(r[1] for r in rows)}
    cli: dict[str, list[float]] = {"--no-rerank": [], "--rerank": []}
    exe = str(Path(sys.executable).with_name("vaultmem"))
    for q in questions[:5]:
        for flag in cli:
            w = time.perf_counter()
            subprocess.run([exe, "--vault", str(vault.root), "--index", str(vault.index_path),
                            "search", q.text, flag], check=True, capture_output=True)
            cli[flag].append(time.perf_counter() - w)
    out["cli_wall_p50_s"] = {k: statistics.median(v) for k, v in cli.items()}
    out["loadavg_after"] = dv.loadavg()
    print(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sets", default=",".join(DEVSETS + RETRIEVAL))
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--weights", default="0.25,0.5,0.75,1,1.5,2")
    ap.add_argument("--limit-queries", type=int)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--latency", type=int, metavar="N",
                    help="time N MDN questions instead (run at normal priority)")
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if args.latency:
        res = latency(args)
        write_json(f"rerank-latency-{args.tokens}.json", {
            "machine": machine_info(), "code": snapshot_code(), "depth": args.depth,
            "tokens": args.tokens, **res})
        return
    code = snapshot_code()
    from vaultmem import rerank, search

    weights = [float(w) for w in args.weights.split(",")]
    cache = DiskCache(WORK / f"rerank-cache-{args.tokens}.npz")
    settings = rerank.Settings(depth=args.depth, weight=0.0, tokens=args.tokens)
    out: dict[str, Any] = {"machine": machine_info(), "code": code, "depth": args.depth,
                           "tokens": args.tokens, "sets": {}}
    for name in args.sets.split(","):
        vault, questions, kind = open_set(name, args)
        vault.warm(background=False)
        rec = recorder(settings, cache)
        per: list[dict[str, Any]] = []
        cpu: list[float] = []
        load_before = dv.loadavg()
        print(f"[{name}] {len(questions)} questions, cache {len(cache)} passages",
              file=sys.stderr, flush=True)
        for n, q in enumerate(questions):
            res = search.run(vault.conn, search.Query(q.text, args.depth, "hybrid"),
                             vault.embedder, vault.llm, vault.index.current_matrix(), rec)
            if [h.path for h in res.hits] != [r["path"] for r in rec.last]:
                raise SystemExit(f"{name}: the recorded list differs from the hits")
            per.append({"query": q.text, "top": rec.last})
            cpu.append(rec.seconds)
            if n % 50 == 49:
                cache.save()
                print(f"  {n + 1} …", file=sys.stderr, flush=True)
        cache.save()
        table: dict[str, dict[str, float]] = {}
        if kind == "devset":  # plain FTS5 bm25 over whole notes, the dev sets' baseline
            bm25 = dv.Bm25Baseline(Path(vault.root))
            rows = [score(kind, bm25(q.text), q) for q in questions]
            table["BM25 (whole notes)"] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        variants = [("first stage", 0.0, "best")] + [
            (f"{which} w={w}", w, which)
            for which in ("best", "first", "max", "snip", "snipmax") for w in weights]
        for label, w, which in variants:
            rows = [score(kind, fused(p["top"], w, which), q)
                    for p, q in zip(per, questions, strict=True)]
            table[label] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        out["sets"][name] = {"questions": len(questions), "table": table, "per_question": per,
                             "rerank_cpu_s_p50": float(np.median(cpu)),
                             "loadavg": [load_before, dv.loadavg()]}
        keys = list(next(iter(table.values())))
        print(f"\n## {name} ({len(questions)} questions, depth {args.depth}, "
              f"{args.tokens} tokens)\n| variant | " + " | ".join(keys) + " |")
        print("|---|" + "---:|" * len(keys))
        for label, row in table.items():
            print(f"| {label} | " + " | ".join(f"{row[k]:.3f}" for k in keys) + " |", flush=True)
    partial = "" if args.sets == ",".join(DEVSETS + RETRIEVAL) and not args.limit_queries else (
        "-" + args.sets.replace(",", "_"))
    write_json(f"rerank-{args.tokens}{partial}.json", out)


if __name__ == "__main__":
    main()
