r"""Temporal recall on LongMemEval: every session an episode note, all questions in one vault.

    .venv/bin/python bench/memory_temporal.py [--limit-queries N] [--rebuild] [--runs R]
                                              [--mode hybrid|keyword|semantic]

The vault: every session of the LongMemEval oracle split (ROOT/../shared/data/memory/
longmemeval/longmemeval_oracle.json; 940 distinct sessions for 500 questions) written once as
an episode note (vaultmem.memory.episodes.episode_note) under $VAULTMEM_BENCH_TMP
(/tmp/vaultmem-bench)/longmemeval/vault/episodes/: `date` the session's date, `outcome:
resolved` (a chat session has no outcome; the episode form requires one), no entities, the title
the first eight words of the session's first user turn, the body every turn as
`**User:** …` / `**Assistant:** …` paragraphs. Each question therefore competes with all ~940
sessions, not only its own haystack.

Each question is asked with the clock set to its `question_date` (Vault.search(q, limit=5,
now=question_date)); recall_any@5 = 1 when any of its `answer_session_ids` is among the five
notes returned, recall_all@5 = 1 when all are. Reported overall, per question type, and for
the two the issue names: temporal-reasoning and knowledge-update. The index (Vault.reindex,
bundled wordllama vectors) is built once into .../longmemeval/index.db and reused.

Retrievers:
  search       plain `vaultmem search` (Vault.search, limit 5), which exists today: the baseline.
  recall-hits  what `recall` will answer for these questions, which are not continuations: its
               hit ordering (vaultmem.memory.recall.timely: episodes dated after the question
               dropped, then search order blended with recency and with the days a time phrase
               names) over search's top 30. Each hit's day is the date in its episode's file
               name (the same as its front matter `date`). Its three weights were chosen on the
               `dev` half of the questions (sha1 of the question id even) and are reported on
               both halves.
  recall       `vaultmem recall` as wired (vault.memory.recall, budget 100,000 so no hit is cut
               by it): the distinct notes of its context lines, in order. The issue's target:
               recall beats search on both temporal-reasoning and knowledge-update.

Writes bench/results/memory-temporal[-<mode>][-q<N>].json and prints a markdown table.
BLAS is pinned to one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1 before numpy loads).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DATA,
    WORK,
    die,
    machine_info,
    percentile,
    require,
    snapshot_code,
    write_json,
)

ORACLE = DATA / "memory" / "longmemeval" / "longmemeval_oracle.json"
BENCH_DIR = WORK / "longmemeval"
K = 5
DEEP = 30  # search hits recall-hits reorders
FOCUS = ("temporal-reasoning", "knowledge-update")
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


def parse_date(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, DATE_FORMAT).replace(tzinfo=dt.UTC)


def title_of(session: list[dict[str, Any]], sid: str) -> str:
    first = next((t["content"] for t in session if t["role"] == "user"), "") or sid
    return " ".join(first.split()[:8]) or sid


def build_vault(records: list[dict[str, Any]], root: Path) -> dict[str, str]:
    """Write every distinct session once as an episode note; return session id -> note path.

    A session id seen twice must hold the same turns (checked); the vault is rewritten only
    when the sessions changed (a manifest beside it says which it holds)."""
    from vaultmem.memory.episodes import episode_note

    sessions: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for r in records:
        for sid, when, turns in zip(r["haystack_session_ids"], r["haystack_dates"],
                                    r["haystack_sessions"], strict=True):
            if sid in sessions and sessions[sid][1] != turns:
                die(f"session {sid} appears twice with different turns")
            sessions[sid] = (when, turns)
    manifest = root.parent / "manifest.json"
    wanted = sorted(sessions)
    if manifest.exists() and (root / "episodes").is_dir():
        saved = json.loads(manifest.read_text(encoding="utf-8"))
        if saved.get("sessions") == wanted:
            return {k: v for k, v in saved["paths"].items()}
    if root.exists():
        import shutil

        shutil.rmtree(root)
    (root / ".obsidian").mkdir(parents=True)
    taken: list[str] = []
    paths: dict[str, str] = {}
    latest = max(parse_date(r["question_date"]) for r in records)
    for sid in wanted:
        when, turns = sessions[sid]
        body = "\n\n".join(
            f"**{t['role'].capitalize()}:** {t['content'].strip()}" for t in turns
        )
        note = episode_note(title_of(turns, sid), "resolved", parse_date(when), latest,
                            body=body, taken=taken)
        taken.append(note.path)
        paths[sid] = note.path
        file = root / note.path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(note.text, encoding="utf-8")
    manifest.write_text(json.dumps({"sessions": wanted, "paths": paths}), encoding="utf-8")
    return paths


def split_of(question_id: str) -> str:
    return "dev" if int(hashlib.sha1(question_id.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


def score(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    top = set(ranked[:K])
    return {"recall_any@5": float(bool(top & relevant)),
            "recall_all@5": float(relevant <= top)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit-queries", type=int, default=None, metavar="N",
                    help="ask only N questions, spread evenly over the set")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the index from scratch")
    ap.add_argument("--runs", type=int, default=1, help="query passes (latency: median of runs)")
    ap.add_argument("--mode", default=None, help="Vault.search(..., mode=MODE) for `search`")
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    require(ORACLE, "LongMemEval oracle split")
    code = snapshot_code()
    machine = machine_info()
    load_before = os.getloadavg()
    from threadpoolctl import threadpool_limits

    from vaultmem.vault import Vault

    records = json.loads(ORACLE.read_text(encoding="utf-8"))
    root, index = BENCH_DIR / "vault", BENCH_DIR / "index.db"
    started = time.perf_counter()
    paths = build_vault(records, root)
    print(f"vault: {len(paths)} episode notes under {root}", file=sys.stderr, flush=True)
    if args.rebuild:
        for suffix in ("", "-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
    vault = Vault(root, index)
    t = time.perf_counter()
    report = vault.reindex()
    reindex_s = time.perf_counter() - t
    print(f"reindex: {report.changed} notes (re)indexed in {reindex_s:.1f}s", file=sys.stderr,
          flush=True)

    questions = records
    if args.limit_queries:
        step = max(1, len(records) // args.limit_queries)
        questions = records[::step][: args.limit_queries]
    kwargs: dict[str, Any] = {"mode": args.mode} if args.mode else {}

    def search(q: dict[str, Any]) -> list[str]:
        now = parse_date(q["question_date"])
        return [h.path for h in vault.search(q["question"], limit=K, now=now, **kwargs).hits]

    from vaultmem.memory.recall import RecallHit, timely

    def recall_hits(q: dict[str, Any]) -> list[str]:
        now = parse_date(q["question_date"])
        found = vault.search(q["question"], limit=DEEP, now=now, **kwargs).hits
        hits = [RecallHit(h.path, h.title, h.snippet, h.start_line, h.score,
                          day=dt.date.fromisoformat(h.path.split("/")[-1][:10]), episode=True)
                for h in found]
        return [h.path for h in timely(hits, q["question"], now)]

    def recall(q: dict[str, Any]) -> list[str]:
        """`vaultmem recall` as wired (vault.memory.recall): the distinct notes of its context
        lines, in order (a continuation's loops, episodes and facts, then its hits)."""
        now = parse_date(q["question_date"])
        found = vault.memory.recall(q["question"], now, budget=100_000)
        return list(dict.fromkeys(line.path for line in found.lines))

    retrievers: dict[str, Callable[[dict[str, Any]], list[str]]] = {
        "search": search, "recall-hits": recall_hits, "recall": recall,
    }
    # --------------------------------------------------------------------------------------

    results: dict[str, Any] = {}
    per_query: list[dict[str, Any]] = []
    with threadpool_limits(limits=1):
        for q in questions[:10]:  # warm-up: caches and page faults, not scored
            search(q)
        for name, retrieve in retrievers.items():
            latencies: list[list[float]] = []
            rows: list[dict[str, Any]] = []
            for run in range(max(1, args.runs)):
                times = []
                for q in questions:
                    t = time.perf_counter()
                    ranked = retrieve(q)
                    times.append((time.perf_counter() - t) * 1000)
                    if run == 0:
                        relevant = {paths[s] for s in q["answer_session_ids"]}
                        rows.append({"id": q["question_id"], "type": q["question_type"],
                                     "split": split_of(q["question_id"]),
                                     **score(ranked, relevant), "top": ranked[:K]})
                latencies.append(times)
            by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for row in rows:
                by_type[row["type"]].append(row)
                for focus in ("all", *FOCUS):
                    if focus in ("all", row["type"]):
                        by_type[f"{row['split']}/{focus}"].append(row)
            summary = {
                key: {"n": len(group),
                      "recall_any@5": round(statistics.mean(r["recall_any@5"] for r in group), 4),
                      "recall_all@5": round(statistics.mean(r["recall_all@5"] for r in group), 4)}
                for key, group in [("all", rows), *sorted(by_type.items())]
            }
            p50 = statistics.median(statistics.median(run) for run in latencies)
            p95 = statistics.median(percentile(run, 95) for run in latencies)
            results[name] = {"scores": summary, "latency_ms": {"p50": round(p50, 2),
                                                               "p95": round(p95, 2)}}
            per_query += [{"retriever": name, **row} for row in rows]
    load_after = os.getloadavg()

    out = {
        "benchmark": "memory-temporal (LongMemEval oracle, pooled sessions as episode notes)",
        "questions": len(questions),
        "sessions": len(paths),
        "k": K,
        "mode": args.mode or "default",
        "index": {"notes": report.notes, "reindex_s": round(reindex_s, 1),
                  "changed": report.changed},
        "results": results,
        "machine": machine,
        "load": {"before": load_before, "after": load_after},
        "code": code,
        "seconds": round(time.perf_counter() - started, 1),
    }
    suffix = (f"-{args.mode}" if args.mode else "") + (f"-q{args.limit_queries}"
                                                        if args.limit_queries else "")
    target = write_json(f"memory-temporal{suffix}.json", out)
    (BENCH_DIR / f"per-query{suffix}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in per_query), encoding="utf-8")
    print("| retriever | type | n | recall_any@5 | recall_all@5 |")
    print("|---|---|---|---|---|")
    for name, res in results.items():
        for key, s in res["scores"].items():
            mark = "**" if key.rsplit("/", 1)[-1] in ("all", *FOCUS) else ""
            print(f"| {name} | {mark}{key}{mark} | {s['n']} | {s['recall_any@5']:.3f} |"
                  f" {s['recall_all@5']:.3f} |")
        print(f"| {name} | latency p50/p95 ms | | {res['latency_ms']['p50']} |"
              f" {res['latency_ms']['p95']} |")
    print(f"\nwrote {target} (load {load_before[0]:.2f} -> {load_after[0]:.2f})")


if __name__ == "__main__":
    main()
