"""What another process sees while a long-running front-end (the TUI, the MCP server) runs the
MiniLM upgrade in its background thread: the upgrade yields to calls into its own process's
`Vault` only; another process is ordered against it by the index's lock alone.

    .venv/bin/python bench/upgrade_second_process.py [--pages 400] [--runs 8]

A copy of the first --pages MDN pages (sorted by path, from $VAULTMEM_MDN, default
/tmp/wL-bench/mdn/files) under $VAULTMEM_BENCH_TMP/second-process/, `embed_auto_limit = 20`,
indexed (auto: wordllama). Then, alternating, --runs times each:

  search    `vaultmem search QUERY --json` as a new process (reads only: no lock)
  reindex   `vaultmem reindex --json` as a new process (nothing changed; it takes the lock)

before the upgrade starts, while a process like the TUI (`Vault.warm`, `live.start_upgrade`:
the upgrade's thread at nice 19; pinned with `taskset -c 1`) embeds batches, and after it is
stopped. Each figure: wall ms (median, max); a reindex that had to wait says so on stderr
("another reindex is running"), counted. Writes bench/results/upgrade-second-process.json.

With --holds, nothing of that: the upgrade runs to its end in this process, and each hold of
the index's lock (a batch's commit, the swap) is timed: the longest another process can wait.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(os.environ.get("VAULTMEM_BENCH_TMP", "/tmp/vaultmem-bench")) / "second-process"
MDN = Path(os.environ.get("VAULTMEM_MDN", "/tmp/wL-bench/mdn/files"))
RESULTS = ROOT / "bench" / "results"
VAULTMEM = [sys.executable, "-m", "vaultmem"]

UPGRADER = """
import sys, time
from pathlib import Path
from vaultmem.live import start_upgrade
from vaultmem.vault import Vault
vault = Vault(Path(sys.argv[1]))
vault.warm(background=False)
background = start_upgrade(vault)
assert background is not None
print("started", flush=True)
sys.stdin.readline()  # until the bench says stop
background.stop()
print("stopped", flush=True)
"""


def prepared(pages: int) -> tuple[Path, list[str]]:
    root = BENCH_DIR / f"mdn-{pages}"
    files = sorted(MDN.rglob("*.md"))[:pages]
    if not (root / ".vaultmem" / "prepared").exists():
        if root.exists():
            shutil.rmtree(root)
        for f in files:
            dst = root / f.relative_to(MDN)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
        (root / ".vaultmem").mkdir(exist_ok=True)
        (root / ".vaultmem" / "config.toml").write_text("embed_auto_limit = 20\n")
        low = ["nice", "-n", "19", "taskset", "-c", "1"]
        subprocess.run([*low, *VAULTMEM, "--vault", str(root), "reindex"], check=True)
        (root / ".vaultmem" / "prepared").write_text("")
    queries = [
        f.parent.name.replace("_", " ").replace("-", " ") for f in files[:: max(1, pages // 16)]
    ]
    return root, queries


def cli(root: Path, *args: str) -> tuple[float, bool]:
    """Wall ms of one vaultmem process, and whether it said it waited for the lock."""
    started = time.perf_counter()
    done = subprocess.run(
        [*VAULTMEM, "--vault", str(root), *args], capture_output=True, text=True, check=True
    )
    return (time.perf_counter() - started) * 1000, "another reindex is running" in done.stderr


def covered(root: Path) -> int:
    out = subprocess.run(
        [*VAULTMEM, "--vault", str(root), "stats", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(out.stdout)["embed_upgrade"]["covered"])


def phase(root: Path, queries: list[str], runs: int) -> dict[str, object]:
    searches: list[float] = []
    reindexes: list[float] = []
    waited = 0
    for i in range(runs):
        ms, _ = cli(root, "search", queries[i % len(queries)], "--json")
        searches.append(ms)
        ms, told = cli(root, "reindex", "--json")
        reindexes.append(ms)
        waited += told
    return {
        "search_p50_ms": round(statistics.median(searches), 1),
        "search_max_ms": round(max(searches), 1),
        "reindex_p50_ms": round(statistics.median(reindexes), 1),
        "reindex_max_ms": round(max(reindexes), 1),
        "reindexes_that_waited": waited,
        "runs": runs,
        "load": round(os.getloadavg()[0], 2),
    }


def lock_holds(root: Path) -> dict[str, object]:
    """The upgrade run to its end in this process (run the script at `nice -n 19 taskset -c 1`
    with --holds, as the TUI's thread runs), timing how long each hold of the index's lock
    lasts: what another process's write or reindex waits at most."""
    import contextlib
    from collections.abc import Iterator

    from vaultmem import indexer
    from vaultmem.vault import Vault

    real = indexer.lock
    holds: list[float] = []

    @contextlib.contextmanager
    def timed_lock(*args: object, **kwargs: object) -> Iterator[None]:
        with real(*args, **kwargs):  # type: ignore[arg-type]
            started = time.perf_counter()
            try:
                yield
            finally:
                holds.append((time.perf_counter() - started) * 1000)

    indexer.lock = timed_lock  # type: ignore[assignment]
    vault = Vault(root)
    sections = vault.embed_upgrade.status().sections
    cpu = time.process_time()
    outcome = vault.embed_upgrade.run()
    assert outcome.swapped, outcome
    return {
        "sections": sections,
        "embedded": outcome.embedded,
        "seconds": outcome.seconds,
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "batch_commits_ms": [round(h, 1) for h in holds[:-1]],
        "swap_ms": round(holds[-1], 1),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--holds", action="store_true", help="only time the lock's holds")
    args = ap.parse_args()
    os.environ.pop("VAULTMEM_EMBEDDER", None)
    root, queries = prepared(args.pages)
    if args.holds:
        held = lock_holds(root)
        out = RESULTS / f"upgrade-lock-holds-{args.pages}.json"
        out.write_text(json.dumps(held, indent=2) + "\n")
        print(json.dumps(held, indent=2))
        return
    results: dict[str, object] = {"pages": args.pages}
    results["before"] = phase(root, queries, args.runs)
    start = covered(root)
    upgrader = subprocess.Popen(
        ["taskset", "-c", "1", sys.executable, "-c", UPGRADER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert upgrader.stdin is not None and upgrader.stdout is not None
    assert upgrader.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 300
    while covered(root) == start and time.monotonic() < deadline:  # a first batch kept
        time.sleep(0.5)
    results["during"] = phase(root, queries, args.runs)
    results["covered_during"] = [start, covered(root)]
    upgrader.stdin.write("\n")
    upgrader.stdin.flush()
    upgrader.wait(60)
    results["after"] = phase(root, queries, args.runs)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "upgrade-second-process.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
