"""A warm process's search with all-MiniLM-L6-v2 (after the upgrade): where the time goes, and
what the one-text cache (vaultmem/embed.py `_ONE_TEXT`) saves.

    .venv/bin/python bench/query_latency.py [--vault PATH] [--limit 20] [--rounds 3]

The vault (default: the shared kepano vault) is copied under $VAULTMEM_BENCH_TMP
(/tmp/vaultmem-bench)/query-latency/ with `embed_auto_limit = N` in its config, indexed (auto:
wordllama) and moved to MiniLM by `vaultmem upgrade-model` (run with `nice -n 19 taskset -c 1`),
once; later runs reuse it. Then, in this process, vectors in memory (`Vault.warm`, as the TUI
and the MCP server hold them), the notes' titles as queries:

  first      the first search of the process: MiniLM's weights and tokenizer loaded
  embed      the query embedding alone (MiniLM, one text, one BLAS thread; and two threads)
  distinct   hybrid search (limit 10), each title once: the cache off, and on (emptied first)
  again      each title searched again with the cache on (a repeated query)
  typing     what the TUI asks as a person types 20 titles: every prefix of 3+ characters, then
             4 characters deleted and typed again (each prefix a search): the cache off, on

Cache off and on alternate in each of --rounds rounds, each first in turn (load drift falls on
both); a figure is the median of the rounds' medians. Wall ms per search and this process's
CPU ms per search (`time.process_time`), the 1-minute load beside each phase. Writes
bench/results/query-latency-<vault>.json.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BENCH_DIR = Path(os.environ.get("VAULTMEM_BENCH_TMP", "/tmp/vaultmem-bench")) / "query-latency"
RESULTS = ROOT / "bench" / "results"
VAULTMEM = [sys.executable, "-m", "vaultmem"]


def prepared(source: Path, limit: int) -> Path:
    """A copy of `source` whose index auto moved to MiniLM through the upgrade."""
    root = BENCH_DIR / source.name
    done = root / ".vaultmem" / "upgraded"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".vaultmem"))
    (root / ".vaultmem").mkdir()
    (root / ".vaultmem" / "config.toml").write_text(f"embed_auto_limit = {limit}\n")
    env = {**os.environ}
    env.pop("VAULTMEM_EMBEDDER", None)
    low = ["nice", "-n", "19", "taskset", "-c", "1"]
    at = ["--vault", str(root)]
    subprocess.run([*low, *VAULTMEM, *at, "reindex"], check=True, env=env)
    subprocess.run([*low, *VAULTMEM, *at, "upgrade-model"], check=True, env=env)
    done.write_text("")
    return root


def timed(work: Callable[[], object], runs: list[str] | None = None) -> tuple[float, float]:
    """(wall ms, CPU ms) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def series(calls: list[Callable[[], object]]) -> dict[str, float]:
    """p50 and p90 wall ms, mean CPU ms per call, over `calls` run in turn."""
    walls, cpus = zip(*(timed(c) for c in calls), strict=True)
    ordered = sorted(walls)
    return {
        "p50_ms": round(statistics.median(walls), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "cpu_ms": round(statistics.fmean(cpus), 2),
        "n": len(walls),
        "load": round(os.getloadavg()[0], 2),
    }


def typing_queries(titles: list[str]) -> list[str]:
    """The searches a TUI runs as a person types each title: every prefix of 3+ characters,
    then 4 characters deleted one by one and typed again."""
    out: list[str] = []
    for title in titles:
        prefixes = [title[:n] for n in range(3, len(title) + 1)]
        out += prefixes
        back = prefixes[-5:-1][::-1]  # deleting: each shorter prefix again
        out += back + back[::-1][1:] + [title]  # and typing them again
    return out


def median_of(rounds: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in rounds), 2) for k in rounds[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", default=str(SHARED / "vaults" / "kepano-obsidian"))
    ap.add_argument("--limit", type=int, default=20, help="embed_auto_limit for the copy")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    source = Path(args.vault)
    if not source.is_dir():
        sys.exit(f"no vault at {source}")
    root = prepared(source, args.limit)
    os.environ.pop("VAULTMEM_EMBEDDER", None)

    from vaultmem import embed, encoder
    from vaultmem.vault import Vault

    vault = Vault(root)
    assert vault.stats().embed_model == embed.MiniLMEmbedder.name, "the upgrade did not land"
    vault.warm(background=False)
    titles = sorted({n.title for n in vault.note_names()})
    results: dict[str, object] = {"vault": source.name, "queries": len(titles)}
    results["first_search"] = dict(
        zip(("wall_ms", "cpu_ms"), timed(lambda: vault.search(titles[0])), strict=True)
    )
    results["load_at_start"] = round(os.getloadavg()[0], 2)
    model = encoder.minilm()
    off, on = embed._Recent(0), embed._Recent(embed.QUERY_CACHE)

    def with_cache(cache: embed._Recent) -> None:
        cache.clear()
        embed._ONE_TEXT = cache

    phases: dict[str, list[dict[str, float]]] = {}
    typed = typing_queries(titles[:20])
    for n in range(args.rounds):
        # two BLAS threads first: OpenBLAS's second thread spins a while after its last
        # product, which slowed whatever came next (the first phase, every round)
        for threads in (2, 1):
            phases.setdefault(f"embed_{threads}_thread", []).append(
                series([lambda t=t, n=threads: model.embed([t], threads=n) for t in titles])
            )
        order = (("off", off), ("on", on))
        for name, cache in order if n % 2 == 0 else order[::-1]:  # each first in turn
            with_cache(cache)
            phases.setdefault(f"distinct_cache_{name}", []).append(
                series([lambda t=t: vault.search(t) for t in titles])
            )
            if name == "on":
                phases.setdefault("again_cache_on", []).append(
                    series([lambda t=t: vault.search(t) for t in titles])
                )
            with_cache(cache)
            phases.setdefault(f"typing_cache_{name}", []).append(
                series([lambda q=q: vault.search(q) for q in typed])
            )
    results["typing_searches"] = len(typed)
    results["typing_distinct"] = len(set(typed))
    for name, rounds in phases.items():
        results[name] = median_of(rounds)
        results[name + "_rounds"] = rounds
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"query-latency-{source.name}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{source.name}: {len(titles)} queries; first search {results['first_search']}")
    print(f"{'phase':24} {'p50 ms':>8} {'p90 ms':>8} {'CPU ms':>8} {'n':>5} {'load':>5}")
    for name in phases:
        r = results[name]
        assert isinstance(r, dict)
        print(f"{name:24} {r['p50_ms']:8.2f} {r['p90_ms']:8.2f} {r['cpu_ms']:8.2f} "
              f"{r['n']:5.0f} {r['load']:5.2f}")  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
