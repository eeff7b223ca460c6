r"""What long-running front-ends (TUI, MCP server) get from the core, over the MDN index.

Measures, in one process, on the index bench/search.py builds (`--mode hybrid` there embeds it):
- hybrid search p50/p95 with vectors from sqlite-vec (the baseline: what the CLI does) and
  from the in-memory matrix (`Vault.warm()`), over the same queries;
- the matrix's load time and memory, and its catch-up after one edited note (reindex + refresh);
- the watcher: time until it watches every folder, CPU used while idle, and the time from an
  edit on disk to the edit being searchable through `Freshness.ensure_fresh()`.

    .venv/bin/python bench/live.py [--passes 3] [--idle 30]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    DEFAULT_MDN_DIR,
    WORK,
    die,
    ensure_mdn,
    machine_info,
    median,
    percentile,
    snapshot_code,
    write_json,
)

QUERIES = [
    "fetch api abort request", "css grid alignment", "promise rejection handling",
    "web audio oscillator", "flexbox wrap", "canvas draw image", "indexeddb transaction",
    "service worker cache", "how do I center a div", "keyboard accessibility for menus",
    "difference between let and var", "http caching headers", "svg path commands",
    "webgl textures", "intl date formatting", "regular expression lookbehind",
]


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measurement")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    args = ap.parse_args()
    code = snapshot_code()
    from vaultmem import store
    from vaultmem.live import Freshness
    from vaultmem.vault import Vault

    root = ensure_mdn(args.mdn_dir)
    index = WORK / "search-mdn" / "index.db"
    if not index.exists():
        die(f"no MDN index at {index}: run `bench/search.py --mode hybrid` first")
    cold = Vault(root, index)
    if not store.has_vectors(cold.conn):
        die("the MDN index has no vectors: run `vaultmem --vault ... reindex` with embeddings")
    warm = Vault(root, index)
    for v in (cold, warm):
        v.search("warm up the embedder")

    rss_before = rss_mb()
    load_s = []
    for _ in range(args.passes):
        warm.index.drop_matrix()
        started = time.perf_counter()
        warm.warm(background=False)
        load_s.append(time.perf_counter() - started)
    matrix_mb = rss_mb() - rss_before
    assert warm.index.matrix is not None
    vectors = len(warm.index.matrix)

    timings: dict[str, list[float]] = {"sqlite_vec": [], "matrix": []}
    same_top = 0
    for _ in range(args.passes):
        for q in QUERIES:
            for name, v in (("sqlite_vec", cold), ("matrix", warm)):
                t = time.perf_counter()
                hits = v.search(q).hits
                timings[name].append((time.perf_counter() - t) * 1000)
                if name == "sqlite_vec":
                    want = [h.path for h in hits]
                else:
                    same_top += [h.path for h in hits] == want

    # one note edited: the incremental reindex, then the matrix catching up
    note = next(iter(sorted(root.rglob("index.md"))))
    original = note.read_bytes()
    fresh = Freshness(warm, debounce=0.2)
    started = time.perf_counter()
    fresh.start(check_now=False)
    fresh.ready.wait()
    watch_ready_s = time.perf_counter() - started
    edit_s, refresh_ms = [], []
    try:
        for n in range(args.passes):
            marker = f"zqxjlivebench{n}"
            t0 = time.perf_counter()
            note.write_bytes(original + f"\n\n{marker}\n".encode())
            while not fresh.pending:
                time.sleep(0.005)
            fresh.ensure_fresh()
            hits = warm.search(marker, mode="keyword").hits
            edit_s.append(time.perf_counter() - t0)
            assert hits and hits[0].path == note.relative_to(root).as_posix(), hits
            t = time.perf_counter()
            matrix = warm.index.matrix
            warm.index._refresh_matrix()  # already current: the cost of checking
            refresh_ms.append((time.perf_counter() - t) * 1000)
            assert warm.index.matrix is matrix
        c0 = cpu_seconds()
        time.sleep(args.idle)
        idle_cpu = cpu_seconds() - c0
    finally:
        note.write_bytes(original)
        fresh.ensure_fresh() if fresh.pending else None
        time.sleep(0.5)
        fresh.ensure_fresh()
        fresh.stop()

    def summary(values: list[float]) -> dict[str, float]:
        return {"p50": round(median(values), 2), "p95": round(percentile(values, 95), 2)}

    result = {
        "dataset": "mdn", "vectors": vectors, "queries": len(QUERIES), "passes": args.passes,
        "machine": machine_info(), "code": code, "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "hybrid_ms": {k: summary(v) for k, v in timings.items()},
        "same_results": f"{same_top}/{len(QUERIES) * args.passes}",
        "matrix_load_s": round(median(load_s), 2), "matrix_mb": round(matrix_mb),
        "watch_ready_s": round(watch_ready_s, 2),
        "edit_to_searchable_s": round(median(edit_s), 3),
        "idle_cpu_s": round(idle_cpu, 3), "idle_s": args.idle,
    }
    write_json("live-mdn.json", result)
    h = result["hybrid_ms"]
    print(f"### long-running front-ends over MDN ({vectors:,} vectors), median of {args.passes}\n")
    print("| measure | value |\n|---|---:|")
    print(f"| hybrid search p50 / p95, sqlite-vec (baseline) | {h['sqlite_vec']['p50']} / "
          f"{h['sqlite_vec']['p95']} ms |")
    print(f"| hybrid search p50 / p95, in-memory matrix | {h['matrix']['p50']} / "
          f"{h['matrix']['p95']} ms |")
    print(f"| same results both ways | {result['same_results']} |")
    print(f"| matrix load (background) | {result['matrix_load_s']} s, {result['matrix_mb']} MB |")
    print(f"| watcher ready (inotify on every folder) | {result['watch_ready_s']} s |")
    print(f"| edit on disk → searchable (watch + reindex + matrix catch-up) | "
          f"{result['edit_to_searchable_s']} s |")
    print(f"| CPU while idle, watching | {result['idle_cpu_s']} s over {args.idle:g} s |")


if __name__ == "__main__":
    main()
