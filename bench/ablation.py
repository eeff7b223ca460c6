"""Ablation of the hybrid ranking: what each signal and weight earns on LoCoMo and SciFact.

Reuses bench/retrieval.py's vaults, indexes and scoring (run that once first); every variant
runs the real vaultmem.search code path with a different ranking.Weights.
Usage: python bench/ablation.py [--datasets locomo,scifact,longmemeval] [--limit-queries N]
                                [--only TEXT] [--variants NAME,...]
--variants runs bench/_variants.py's experimental rankings (issue 13) instead of the weights.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval as rt
from _common import write_json

from vaultmem import ranking, search

BASE = ranking.Weights()
OFF = dict(vector=0.0, heading=0.0, path=0.0, date=0.0, graph=0.0, low_overlap=0.0)
VARIANTS: list[tuple[str, ranking.Weights]] = [
    ("bm25 chunks only", replace(BASE, **OFF)),
    ("+ heading", replace(BASE, **{**OFF, "heading": BASE.heading})),
    ("+ path", replace(BASE, **{**OFF, "path": BASE.path})),
    ("+ graph", replace(BASE, **{**OFF, "graph": BASE.graph})),
    ("+ vector 0.1", replace(BASE, **{**OFF, "vector": 0.1})),
    ("+ vector 0.2", replace(BASE, **{**OFF, "vector": 0.2})),
    ("+ vector 0.3", replace(BASE, **{**OFF, "vector": 0.3})),
    ("+ vector 0.5", replace(BASE, **{**OFF, "vector": 0.5})),
    ("+ vector 0.3, low-overlap x2", replace(BASE, **{**OFF, "vector": 0.3, "low_overlap": 1.0})),
    ("defaults (all signals)", BASE),
    ("defaults without vector", replace(BASE, vector=0.0)),
    ("defaults without heading", replace(BASE, heading=0.0)),
    ("defaults without path", replace(BASE, path=0.0)),
    ("defaults without date", replace(BASE, date=0.0)),
    ("defaults without graph", replace(BASE, graph=0.0)),
    ("defaults without low-overlap", replace(BASE, low_overlap=0.0)),
    ("defaults without expired", replace(BASE, expired=0.0)),
    ("defaults + feedback 0.3", replace(BASE, feedback=0.3)),
    ("defaults + feedback 0.6", replace(BASE, feedback=0.6)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="locomo,scifact,longmemeval")
    parser.add_argument("--embedder", default=None,
                        help="use bench/retrieval.py --embedder SPEC's vaults and model")
    parser.add_argument("--tag", default="variants", help="JSON name with --variants")
    parser.add_argument("--variants", default="",
                        help="experimental rankings from bench/_variants.py, comma-separated")
    parser.add_argument("--scifact-split", choices=("test", "train"), default="test",
                        help="SciFact's claims: test (300) or train (809, to tune on); the"
                        " same vault and index (JSON and --per-query files get -train)")
    parser.add_argument("--limit-queries", type=int)
    parser.add_argument("--only", help="run only the variants whose label contains this"
                        " (alternatives separated by |)")
    parser.add_argument("--per-query", type=Path, metavar="DIR",
                        help="also write every question's ranked notes and scores, one JSON"
                        " line each, to DIR/<dataset>-<variant>.jsonl (for per-question diffs)")
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    from vaultmem.vault import Vault

    if args.embedder:
        import os

        import _models

        _models.register()
        os.environ["VAULTMEM_EMBEDDER"] = args.embedder

    out: dict[str, list[dict[str, object]]] = {}
    for name in args.datasets.split(","):
        ds = (rt.load_locomo(False) if name == "locomo" else rt.load_scifact(args.scifact_split)
              if name == "scifact" else rt.load_longmemeval())
        if args.embedder:
            ds.name = f"{ds.name}-{rt.embedder_slug(args.embedder)}"
        base = rt.BENCH_DIR / ds.name
        vault = Vault(base / "vault", base / "index.db")
        vault.reindex()
        queries = rt.subsample(ds.queries, args.limit_queries)
        rows = []
        recall = name != "scifact"  # LoCoMo and LongMemEval: session recall
        print(f"\n## {name}: {len(queries)} queries\n| variant | " + (
            "R@5 | R@10 | MRR |" if recall else "nDCG@10 | R@10 |") + " p50 ms |")
        print("|---|---|---|---|---|" if recall else "|---|---|---|---|")
        runs: list[tuple[str, Any]] = []
        if args.variants:
            import _variants

            vault.warm(background=False)
            for label in args.variants.split(","):
                runs.append((label, _variants.VARIANTS[label](vault)))
        else:
            for label, weights in VARIANTS:
                def run(text: str, weights: ranking.Weights = weights,
                        vault: Vault = vault) -> list[tuple[str, str]]:
                    hits = search.run(vault.conn, search.Query(text, 10, "hybrid",
                                                               weights=weights), vault.embedder)
                    return [(h.path, h.header) for h in hits.hits]
                runs.append((label, run))
        for label, run in runs:
            if args.only and not any(part in label for part in args.only.split("|")):
                continue
            scores, ms, lines = [], [], []
            with threadpool_limits(limits=1):
                for q in queries:
                    t = time.perf_counter()
                    ranked = [p for p, _ in run(q.text)]
                    ms.append((time.perf_counter() - t) * 1000)
                    scores.append(rt.locomo_scores(ranked, q) if recall
                                  else rt.scifact_scores(ranked, q, ranked))
                    lines.append({"id": q.qid, "query": q.text, "top": ranked, **scores[-1]})
            if args.per_query:
                import json
                import re

                args.per_query.mkdir(parents=True, exist_ok=True)
                slug = re.sub(r"[^\w.+-]+", "_", label)
                split = "-train" if name == "scifact" and args.scifact_split == "train" else ""
                with (args.per_query / f"{name}{split}-{slug}.jsonl").open("w") as fh:
                    fh.writelines(json.dumps(line) + "\n" for line in lines)
            agg = rt.aggregate(scores)
            p50 = sorted(ms)[len(ms) // 2]
            rows.append({"variant": label, **agg, "p50_ms": p50})
            if recall:
                print(f"| {label} | {agg['recall@5']:.3f} | {agg['recall@10']:.3f} | "
                      f"{agg['mrr']:.3f} | {p50:.1f} |", flush=True)
            else:
                print(f"| {label} | {agg['ndcg@10']:.3f} | {agg['recall@10']:.3f} | {p50:.1f} |",
                      flush=True)
        out[name] = rows
    if args.only or args.limit_queries:  # a partial run never replaces the full results
        print("(partial run: bench/results/ablation.json left as it was)")
        return
    name = "ablation" + (f"-{args.tag}" if args.variants else "") + (
        "-scifact-train" if args.scifact_split == "train" and "scifact" in out else "") + (
        f"-{rt.embedder_slug(args.embedder)}" if args.embedder else "")
    write_json(f"{name}.json", out)


if __name__ == "__main__":
    main()
