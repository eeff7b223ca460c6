"""Which questions two runs score differently: a per-question diff of two per-query files.

    .venv/bin/python bench/per_query_diff.py OLD.jsonl NEW.jsonl [--metrics recall@5,mrr]
                                             [--json OUT.json]

The files are one JSON object a question, with `id`, `query`, `top` and the metrics: what
`bench/ablation.py --per-query DIR` writes (DIR/<dataset>-<variant>.jsonl), or
bench/retrieval.py's per-query.jsonl (its `vaultmem` retriever's scores are read). Prints every
question whose metrics differ (old -> new), then per metric how many questions went up and down
and the mean change (differences under 0.0005 are rounding: bench/retrieval.py rounds its
figures); --json writes the same as a file (bench/results/ for a record).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "vaultmem" in row:  # bench/retrieval.py's file: one block per retriever
            row = {"id": row["id"], "query": row["query"], **row["vaultmem"]}
        if "id" not in row:
            sys.exit(f"{path}:{n}: no question id")
        out[str(row["id"])] = row
    return out


def diff(
    old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], metrics: list[str]
) -> dict[str, Any]:
    shared = [q for q in old if q in new]
    changed = []
    for q in shared:
        a, b = old[q], new[q]
        if any(abs(b[m] - a[m]) > 5e-4 for m in metrics):
            changed.append(
                {
                    "id": q,
                    "query": a.get("query", ""),
                    **{m: [round(a[m], 4), round(b[m], 4)] for m in metrics},
                }
            )
    summary = {}
    for m in metrics:
        summary[m] = {
            "old": round(sum(old[q][m] for q in shared) / len(shared), 4),
            "new": round(sum(new[q][m] for q in shared) / len(shared), 4),
            "up": sum(1 for q in shared if new[q][m] > old[q][m] + 5e-4),
            "down": sum(1 for q in shared if new[q][m] < old[q][m] - 5e-4),
        }
    top_changed = sum(1 for q in shared if old[q].get("top") != new[q].get("top"))
    return {
        "questions": len(shared),
        "top_changed": top_changed,
        "summary": summary,
        "changed": changed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument(
        "--metrics",
        default="recall@5,recall@10,mrr",
        help="comma-separated metric names in both files (SciFact: ndcg@10,...)",
    )
    ap.add_argument("--json", type=Path, help="also write the diff to this file")
    args = ap.parse_args()
    metrics = args.metrics.split(",")
    result = diff(load(args.old), load(args.new), metrics)
    for row in result["changed"]:
        parts = " ".join(f"{m} {row[m][0]:.3f}->{row[m][1]:.3f}" for m in metrics)
        print(f"{row['id']}  {parts}  {row['query'][:80]}")
    print(f"\n{result['questions']} questions, top 10 changed for {result['top_changed']}")
    for m, s in result["summary"].items():
        print(f"{m}: {s['old']:.4f} -> {s['new']:.4f} (up {s['up']}, down {s['down']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
