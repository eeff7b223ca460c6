"""The MiniLM upgrade (vaultmem/embed_upgrade.py) in a warm process: what it costs, and what a
search costs while its background thread runs.

    .venv/bin/python bench/upgrade.py [--vault PATH] [--limit N] [--runs 3]

The vault (default: the shared kepano vault, vaults/kepano-obsidian) is copied under
$VAULTMEM_BENCH_TMP (/tmp/vaultmem-bench)/upgrade/, with `embed_auto_limit = N` (default 20)
in its config, so `auto` gives it wordllama; that index is kept as the start of every run. Each
run, in one process with the vectors in memory (`Vault.warm`, as the MCP server and the TUI
hold them):

  before   every query once with wordllama, no upgrade running (the baseline);
  during   the upgrade's `Background` thread started (idle priority, one BLAS thread), the
           queries searched in turn until it swaps (each search's wall time);
  after    every query once more, now with all-MiniLM-L6-v2.

Searches start --every seconds (0.25: a person typing, an agent's calls), in all three
phases: searches back to back would keep the process busy all the time, and the upgrade, which
waits for the calls under way, would barely move.

The queries are the notes' titles (hybrid search, limit 10). The upgrade's CPU time is its own
thread's (/proc/self/task/TID/stat), its wall time from start to swap. Prints a table and writes
bench/results/upgrade-<vault>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BENCH_DIR = Path(os.environ.get("VAULTMEM_BENCH_TMP", "/tmp/vaultmem-bench")) / "upgrade"
RESULTS = ROOT / "bench" / "results"


def thread_cpu(native_id: int) -> float:
    """A thread's user + system CPU seconds so far (Linux)."""
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(vault: object, query: str, every: float) -> float:
    """One search's wall milliseconds, then a wait until `every` seconds from its start."""
    started = time.perf_counter()
    vault.search(query)  # type: ignore[attr-defined]
    took = time.perf_counter() - started
    time.sleep(max(0.0, every - took))
    return took * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", default=str(SHARED / "vaults" / "kepano-obsidian"),
                    help="the vault to copy")
    ap.add_argument("--limit", type=int, default=20, help="embed_auto_limit for the copy")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--every", type=float, default=0.25, help="seconds between searches")
    args = ap.parse_args()
    os.environ.pop("VAULTMEM_EMBEDDER", None)

    from vaultmem import store
    from vaultmem.embed_upgrade import Background
    from vaultmem.vault import Vault

    source = Path(args.vault)
    name = source.name
    root = BENCH_DIR / name / "vault"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".vaultmem", ".git"))
    (root / ".vaultmem").mkdir(exist_ok=True)
    (root / ".vaultmem" / "config.toml").write_text(f"embed_auto_limit = {args.limit}\n")
    index = BENCH_DIR / name / "index.db"
    base = BENCH_DIR / name / "base.db"
    for path in (index, base):
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    first = Vault(root, index)
    report = first.reindex()
    first.close()
    shutil.copy(index, base)
    print(f"[{name}] {report.notes} notes; first index: {report.embeddings.model}",
          file=sys.stderr, flush=True)

    runs = []
    for run in range(args.runs):
        for suffix in ("-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
        shutil.copy(base, index)
        vault = Vault(root, index)
        vault.warm(background=False)
        queries = [n.title for n in vault.note_names()]
        status = vault.embed_upgrade.status()
        assert status.state == "pending", status
        for q in queries[:5]:
            vault.search(q)  # the model loaded, caches warm
        before = [timed(vault, q, args.every) for q in queries]
        load_before = os.getloadavg()
        background = Background(vault)
        started = time.perf_counter()
        background.start()
        thread = background._thread
        assert thread is not None and thread.native_id is not None
        during: list[float] = []
        i = 0
        while not background.swapped.is_set():
            if time.perf_counter() - started > 3600:
                sys.exit(f"the upgrade did not finish within an hour: {background.last}")
            during.append(timed(vault, queries[i % len(queries)], args.every))
            i += 1
        wall = time.perf_counter() - started
        cpu = thread_cpu(thread.native_id)
        background.stop()
        after = [timed(vault, q, args.every) for q in queries]
        model = store.get_meta(vault.conn, "embed_model")
        row = {
            "run": run + 1,
            "sections": status.sections,
            "upgrade_wall_s": round(wall, 2),
            "upgrade_cpu_s": round(cpu, 2),
            "sections_per_cpu_s": round(status.sections / cpu, 1) if cpu else None,
            "search_ms_before_p50": round(statistics.median(before), 2),
            "search_ms_during_p50": round(statistics.median(during), 2) if during else None,
            "search_ms_during_p90": round(statistics.quantiles(during, n=10)[-1], 2)
            if len(during) > 1
            else None,
            "search_ms_after_p50": round(statistics.median(after), 2),
            "searches_during": len(during),
            "model_after": model,
            "load_before": load_before,
            "load_after": os.getloadavg(),
        }
        print(json.dumps(row), file=sys.stderr, flush=True)
        runs.append(row)
        vault.close()

    keys = [k for k in runs[0] if k.startswith(("upgrade_", "search_", "sections_per"))]
    summary = {k: statistics.median(r[k] for r in runs if r[k] is not None) for k in keys}
    print(f"\n| {name} ({runs[0]['sections']} sections), median of {len(runs)} runs | value |")
    print("|---|---:|")
    for k, v in summary.items():
        print(f"| {k} | {v} |")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"upgrade-{name}.json"
    out.write_text(
        json.dumps(
            {"vault": str(source), "limit": args.limit, "every": args.every, "runs": runs,
             "median": summary, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count()},
            indent=1,
        )
        + "\n"
    )
    print(f"\nJSON: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
