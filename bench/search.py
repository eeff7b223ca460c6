r"""Keyword search latency, in-process, over the MDN index, against a plain FTS5 baseline.

    .venv/bin/python bench/search.py [--passes 5] [--limit 10] [--mdn-dir DIR] [--rebuild]
                                     [--mode hybrid] [--warm] [--base REF]

Builds (or incrementally refreshes) a vaultmem index of MDN and a plain FTS5 table
docs(path, title, body) with the same tokenizer, under $VAULTMEM_BENCH_TMP (/tmp/vaultmem-bench).
200 fixed queries (seed 42): 150 MDN page titles, 35 random word pairs from the corpus, 15
FTS-syntax-hostile strings. One warm-up pass, then --passes timed passes; each query runs through
Vault.search(q, limit) and, right after, through two plain baselines on the plain table: the query's
words (\w+, lower-cased, each double-quoted) joined by AND, and joined by OR, each as
`WHERE docs MATCH ? ORDER BY rank LIMIT limit` with a snippet() of the body.
--base REF times vaultmem/ as of a git ref beside this worktree's, in the same run: each side
runs in a child process of its own (the same index, warmed alike), the parent hands both every
query in turn (which goes first alternates), and each child times its own search: wall, and
the CPU of all its threads (time.process_time) and of the searching thread alone
(time.thread_time: on an idle machine the wall of a search is about the longer of that
thread's CPU and the worker's, so this is the wall to expect when the load hides it).
The warm-up pass is reported too, as each query's first sight in the process: a warm
process caches per-word keyword scores (vaultmem/store/terms.py), so the timed passes show a
process that has met the queries' words before (a TUI or MCP server after a while), the
warm-up one that meets them as they come (only the words of earlier queries cached).
Writes bench/results/search-mdn.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    PYTHON,
    ROOT,
    WORK,
    base_code,
    ensure_mdn,
    machine_info,
    md_files,
    percentile,
    snapshot_code,
    write_json,
)

SEED = 42
N_TITLES = 150
N_PAIRS = 35
HOSTILE = [
    "C++", "foo-bar", '"unbalanced', "AND", "*", "OR", "NOT", "NEAR(fetch request)",
    "title:array", "(", "a AND (b OR", "don't", "-webkit-box-shadow", '{{jsxref("Array")}}',
    "^ $ %",
]
TARGET_P50_MS = 10.0  # keyword (issue 2)
TARGET_HYBRID_P50_MS = 25.0  # hybrid, warm process (issue 13)
QUERY_WORD_RE = re.compile(r"\w+", re.UNICODE)
TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)
WORD_RE = re.compile(r"\b[A-Za-z][a-z]{3,}\b")


def title_of(text: str) -> str | None:
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    m = TITLE_RE.search(text[: end if end > 0 else 2000])
    return m.group(1).strip("'\"") if m else None


def make_queries(root: Path, paths: list[str]) -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    titles = []
    for p in rng.sample(paths, N_TITLES * 2):
        t = title_of(Path(p).read_text(encoding="utf-8", errors="replace"))
        if t and t not in titles:
            titles.append(t)
        if len(titles) == N_TITLES:
            break
    words: list[str] = []
    for p in rng.sample(paths, 400):
        text = Path(p).read_text(encoding="utf-8", errors="replace")
        words.extend(WORD_RE.findall(text.split("\n---", 1)[-1]))
    pairs = [f"{rng.choice(words)} {rng.choice(words)}" for _ in range(N_PAIRS)]
    return ([("title", t) for t in titles] + [("pair", q) for q in pairs]
            + [("hostile", q) for q in HOSTILE])


def plain_match(text: str, op: str) -> str | None:
    """The simplest safe FTS5 query: every word quoted, joined by `op` (AND / OR)."""
    words = list(dict.fromkeys(w.lower() for w in QUERY_WORD_RE.findall(text)))
    return f" {op} ".join(f'"{w}"' for w in words) if words else None


def build_baseline(db: Path, root: Path, paths: list[str]) -> float:
    import sqlean as sqlite3

    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    started = time.perf_counter()
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(path, title, body,"
                 " tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("BEGIN")
    for p in paths:
        text = Path(p).read_text(encoding="utf-8", errors="replace")
        conn.execute("INSERT INTO docs VALUES (?, ?, ?)",
                     (os.path.relpath(p, root), title_of(text) or "", text))
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - started


def stats(ms: list[float]) -> dict:
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "max": max(ms), "n": len(ms)}


def serve(args: argparse.Namespace) -> None:
    """A child of --base: answers queries from stdin (one JSON string a line), each with a line
    of JSON: wall ms, CPU ms (every thread of this process), hits, error."""
    from vaultmem.vault import Vault

    vault = Vault(ensure_mdn(args.mdn_dir), WORK / "search-mdn" / "index.db")
    if args.warm:
        vault.warm(background=False)
    print("ready", flush=True)
    for line in sys.stdin:
        q = json.loads(line)
        t, c, m = time.perf_counter(), time.process_time(), time.thread_time()
        try:
            n, err = len(vault.search(q, args.limit, mode=args.mode).hits), None
        except Exception as exc:
            n, err = 0, f"{type(exc).__name__}: {exc}"
        cpu = (time.process_time() - c) * 1000
        main = (time.thread_time() - m) * 1000
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"ms": ms, "cpu": cpu, "main": main, "n": n, "err": err}), flush=True)


class Child:
    """A --serve child process searching with one version of vaultmem (code on PYTHONPATH)."""

    def __init__(self, code: str, args: argparse.Namespace) -> None:
        cmd = [PYTHON, __file__, "--serve", "--mode", args.mode, "--limit", str(args.limit),
               "--mdn-dir", str(args.mdn_dir.resolve())] + (["--warm"] if args.warm else [])
        # run from WORK: the worktree's vaultmem/ must not shadow the code on PYTHONPATH
        self.proc = subprocess.Popen(cmd, cwd=WORK, env={**os.environ, "PYTHONPATH": code},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        if self.stdout.readline().strip() != "ready":
            raise SystemExit(f"search child ({code}) failed to start")

    def __call__(self, q: str) -> dict:
        self.stdin.write(json.dumps(q) + "\n")
        self.stdin.flush()
        return json.loads(self.stdout.readline())

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--mode", default="keyword", choices=["keyword", "hybrid", "semantic"],
                    help="vaultmem's search mode (the issue's 10 ms target is for keyword)")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--rebuild", action="store_true", help="rebuild both indexes from scratch")
    ap.add_argument("--warm", action="store_true",
                    help="hold the vectors in memory first (Vault.warm), as the TUI and MCP do")
    ap.add_argument("--before", action="store_true",
                    help="hybrid: also time the ranking before issue 13's title and whole-note "
                         "signals (same process, interleaved), as a baseline")
    ap.add_argument("--base", metavar="REF",
                    help="also time vaultmem/ as of this git ref (each side in a child process)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # a --base child
    args = ap.parse_args()
    if args.serve:
        serve(args)
        return

    import sqlean as sqlite3

    code = snapshot_code()
    machine = machine_info()
    from vaultmem.vault import Vault

    root = ensure_mdn(args.mdn_dir)
    paths = md_files(root)
    work = WORK / "search-mdn"
    work.mkdir(parents=True, exist_ok=True)
    index, base_db = work / "index.db", work / "baseline.db"

    vault = Vault(root, index)
    started = time.perf_counter()
    try:
        report = vault.reindex(full=args.rebuild)
    except Exception as exc:  # e.g. an index from an older schema: start over
        print(f"reindex failed ({exc}); rebuilding", file=sys.stderr)
        report = vault.reindex(full=True)
    print(f"vaultmem index: {report.notes} notes, {report.changed} (re)indexed in "
          f"{time.perf_counter() - started:.1f}s", file=sys.stderr)
    if args.rebuild or not base_db.exists():
        print(f"baseline FTS5 table built in {build_baseline(base_db, root, paths):.1f}s",
              file=sys.stderr)
    if args.warm and not args.base:
        t = time.perf_counter()
        vault.warm(background=False)
        print(f"vectors in memory in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    base = sqlite3.connect(str(base_db), isolation_level=None)
    base_sql = ("SELECT path, snippet(docs, 2, char(2), char(3), '…', 24) FROM docs"
                " WHERE docs MATCH ? ORDER BY rank LIMIT ?")

    queries = make_queries(root, paths)
    assert len(queries) == N_TITLES + N_PAIRS + len(HOSTILE), len(queries)

    cpu: dict[str, list[float]] = {"vaultmem": [], "vaultmem_before": [], "vaultmem_base": []}
    main_cpu: dict[str, list[float]] = {"vaultmem": [], "vaultmem_base": []}  # the search's thread

    def run_vm(q: str) -> tuple[float, int, str | None]:
        t, c = time.perf_counter(), time.process_time()  # every thread's CPU (the vector worker's)
        m = time.thread_time()
        try:
            n, err = len(vault.search(q, args.limit, mode=args.mode).hits), None
        except Exception as exc:
            n, err = 0, f"{type(exc).__name__}: {exc}"
        cpu["vaultmem"].append((time.process_time() - c) * 1000)
        main_cpu["vaultmem"].append((time.thread_time() - m) * 1000)
        return (time.perf_counter() - t) * 1000, n, err

    def run_base(q: str, op: str) -> tuple[float, int, str | None]:
        t = time.perf_counter()
        try:
            match = plain_match(q, op)
            rows = base.execute(base_sql, (match, args.limit)).fetchall() if match else []
            n, err = len(rows), None
        except Exception as exc:
            n, err = 0, f"{type(exc).__name__}: {exc}"
        return (time.perf_counter() - t) * 1000, n, err

    from dataclasses import replace as _replace

    from vaultmem import ranking
    from vaultmem import search as vsearch

    before = _replace(ranking.Weights(), title=0.0, note=0.0)

    def run_before(q: str) -> tuple[float, int, str | None]:
        t, c = time.perf_counter(), time.process_time()
        try:
            query = vsearch.Query(q, args.limit, "hybrid", weights=before)
            found = vsearch.run(vault.conn, query, vault.embedder, None,
                                vault.index.current_matrix())
            n, err = len(found.hits), None
        except Exception as exc:
            n, err = 0, f"{type(exc).__name__}: {exc}"
        cpu["vaultmem_before"].append((time.process_time() - c) * 1000)
        return (time.perf_counter() - t) * 1000, n, err

    runners = {"vaultmem": run_vm, "fts_and": lambda q: run_base(q, "AND"),
               "fts_or": lambda q: run_base(q, "OR")}
    if args.before:
        runners["vaultmem_before"] = run_before
    children: dict[str, Child] = {}
    if args.base:
        t = time.perf_counter()
        children = {"vaultmem": Child(os.environ["PYTHONPATH"], args),
                    "vaultmem_base": Child(str(base_code(args.base)), args)}
        print(f"two search processes ready in {time.perf_counter() - t:.1f}s", file=sys.stderr)

        def in_child(who: str) -> Callable[[str], tuple[float, int, str | None]]:
            def run(q: str) -> tuple[float, int, str | None]:
                got = children[who](q)
                cpu[who].append(got["cpu"])
                main_cpu[who].append(got["main"])
                return got["ms"], got["n"], got["err"]
            return run

        runners = {"vaultmem": in_child("vaultmem"), "vaultmem_base": in_child("vaultmem_base"),
                   **{k: v for k, v in runners.items() if k != "vaultmem"}}
    # warm-up: also each query's first sight (what a process caches fills as they come)
    first: dict[str, list[float]] = {who: [] for who in runners}
    for _, q in queries:
        for who, run in runners.items():
            first[who].append(run(q)[0])
    first_pass = {who: {"wall_ms": stats(ms)} for who, ms in first.items()}
    for who, spent in main_cpu.items():
        if spent:
            first_pass[who]["thread_cpu_ms"] = stats(list(spent))
    for spent in [*cpu.values(), *main_cpu.values()]:
        spent.clear()
    loads = [os.getloadavg()[0]]
    per_query: list[dict] = [{"kind": k, "query": q} for k, q in queries]
    for entry in per_query:
        for who in runners:
            entry[f"{who}_ms"] = []
    for _ in range(args.passes):
        for n, entry in enumerate(per_query):
            # the two vaultmem sides take turns going first (the page cache, the other's load)
            order = list(runners.items())
            if n % 2 and args.base:
                order[0], order[1] = order[1], order[0]
            for who, run in order:
                ms, n, err = run(entry["query"])
                entry[f"{who}_ms"].append(ms)
                entry.update({f"{who}_hits": n, f"{who}_error": err})
        loads.append(os.getloadavg()[0])
    for child in children.values():
        child.close()

    summary: dict = {}
    for who in runners:
        summary[who] = {"all": stats([m for e in per_query for m in e[f"{who}_ms"]])}
        for kind in ("title", "pair", "hostile"):
            summary[who][kind] = stats(
                [m for e in per_query if e["kind"] == kind for m in e[f"{who}_ms"]])
        summary[who]["zero_hit_queries"] = sum(1 for e in per_query if e[f"{who}_hits"] == 0)
        summary[who]["errors"] = [(e["query"], e[f"{who}_error"])
                                  for e in per_query if e[f"{who}_error"]]
    for who, spent in cpu.items():
        if spent:
            summary[who]["cpu_ms"] = stats(spent)
    for who, spent in main_cpu.items():
        if spent:
            summary[who]["thread_cpu_ms"] = stats(spent)
    summary["loadavg_1min"] = {"min": min(loads), "max": max(loads)}
    summary["first_pass"] = first_pass
    p50 = summary["vaultmem"]["all"]["p50"]
    target = TARGET_P50_MS if args.mode == "keyword" else TARGET_HYBRID_P50_MS
    summary["target"] = {"p50_ms": f"<= {target:g}", "value": p50, "met": p50 <= target}

    name = "search-mdn.json" if args.mode == "keyword" else f"search-mdn-{args.mode}.json"
    if args.warm:
        name = name.replace(".json", "-warm.json")
    out = write_json(name, {
        "dataset": "mdn", "notes": report.notes, "queries": len(queries), "passes": args.passes,
        "limit": args.limit, "seed": SEED, "base": args.base, "machine": machine, "code": code,
        "summary": summary,
        "per_query": per_query, "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    })

    print(f"### {args.mode} search over MDN ({report.notes:,} notes): {len(queries)} queries × "
          f"{args.passes} passes after warm-up, limit {args.limit}\n")
    labels = {"vaultmem": "vaultmem", "vaultmem_base": f"vaultmem at {args.base}",
              "fts_and": "baseline FTS5 AND", "fts_or": "baseline FTS5 OR",
              "vaultmem_before": "vaultmem before issue 13's title and whole-note signals"}
    print("| queries | " + " | ".join(f"{labels[w]} p50 / p95 / max ms" for w in runners) + " |")
    print("|---|" + "---:|" * len(runners))
    for kind in ("all", "title", "pair", "hostile"):
        cells = [f"{s[kind]['p50']:.2f} / {s[kind]['p95']:.2f} / {s[kind]['max']:.2f}"
                 for s in (summary[w] for w in runners)]
        print(f"| {kind} ({summary['vaultmem'][kind]['n'] // args.passes}) | " + " | ".join(cells)
              + " |")
    for who in cpu:
        if "cpu_ms" in summary.get(who, {}):
            c = summary[who]["cpu_ms"]
            print(f"{who}: CPU per query (all its threads) p50 {c['p50']:.2f} / p95 "
                  f"{c['p95']:.2f} ms", end="")
            if "thread_cpu_ms" in summary[who]:
                m = summary[who]["thread_cpu_ms"]
                print(f"; the searching thread's p50 {m['p50']:.2f} / p95 {m['p95']:.2f} ms",
                      end="")
            print()
    print("the warm-up pass (each query's first sight): " + "; ".join(
        f"{w} wall p50 {f['wall_ms']['p50']:.2f} ms"
        + (f", searching thread p50 {f['thread_cpu_ms']['p50']:.2f} ms"
           if "thread_cpu_ms" in f else "")
        for w, f in first_pass.items()))
    print(f"load average (1 min) during the timed passes: {min(loads):.1f} to {max(loads):.1f}")
    verdict = "met" if p50 <= target else "NOT met"
    print(f"\ntarget p50 <= {target:g} ms: **{verdict}** ({p50:.2f} ms)")
    print("zero-hit queries: " + ", ".join(
        f"{w} {summary[w]['zero_hit_queries']}" for w in runners) + "; errors: " + ", ".join(
        f"{w} {len(summary[w]['errors'])}" for w in runners))

    def med(e: dict, who: str) -> float:
        return sorted(e[f"{who}_ms"])[args.passes // 2]

    slow = sorted(per_query, key=lambda e: -med(e, "vaultmem"))
    print("slowest (vaultmem / AND / OR median ms): " + "; ".join(
        f"{e['query']!r} {med(e, 'vaultmem'):.1f}/{med(e, 'fts_and'):.1f}/{med(e, 'fts_or'):.1f}"
        for e in slow[:5]))
    print(f"(JSON: {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
