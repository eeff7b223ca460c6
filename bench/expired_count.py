r"""What counting the hidden expired notes costs a search (`expired_hidden`; issue 13, round 6).

    .venv/bin/python bench/expired_count.py [--passes 5] [--limit 10] [--every 7]
                                            [--expire-every 10] [--mdn-dir DIR] [--modes …]
                                            [--prepare]

The vault: every `--every`-th MDN page (sorted paths), copied under $VAULTMEM_BENCH_TMP
(/tmp/vaultmem-bench)/expired-count/vault, every `--expire-every`-th of them given
`decay: session` and `date: 2026-01-01` in its front matter, so that it has expired by the
time of the searches (a session note lives a day). Indexed once with wordllama (the model
`auto` picks past its limit), the vectors then held in memory (Vault.warm: a TUI or MCP
server).

Queries: the titles of 60 expired pages and 60 others (seed 42). Each query, in turn (the
order of the three alternating per pass), through:
  - `plain`: Vault.search(q) without a count (what the TUI asks at every key),
  - `counted`: Vault.search(q, count_expired=True) (what `search` and MCP `search` ask),
  - `two searches`: the former count, measured in the same run as its baseline:
    Vault.search(q) and then Vault.search(q, include_expired=True) (the second full search
    the former `Vault._expired_hidden` ran in a vault holding expired notes).
One warm-up pass, then --passes timed passes; per query the median over the passes of its
wall (perf_counter) and CPU (process_time: every thread of the process). Writes
bench/results/expired-count.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_MDN_DIR, WORK, code_state, ensure_mdn, machine_info, write_json

SEED = 42
QUERIES_EACH = 60
EXPIRED_FRONT = "decay: session\ndate: 2026-01-01\n"
TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)


def make_vault(mdn: Path, dst: Path, every: int, expire_every: int) -> tuple[list[str], list[str]]:
    """The bench vault (rebuilt when missing), and the titles of its expired and other pages."""
    pages = sorted(p for p in mdn.rglob("*.md") if not any(s.startswith(".") for s in p.parts))
    chosen = pages[::every]
    expired: list[str] = []
    others: list[str] = []
    fresh = not dst.exists()
    if fresh:
        dst.mkdir(parents=True)
    for n, page in enumerate(chosen):
        rel = page.relative_to(mdn)
        text = page.read_text(encoding="utf-8")
        gone = n % expire_every == 0
        if gone:
            text = (
                "---\n" + EXPIRED_FRONT + text[4:]
                if text.startswith("---\n")
                else ("---\n" + EXPIRED_FRONT + "---\n" + text)
            )
        m = TITLE_RE.search(text[:2000])
        if m:
            (expired if gone else others).append(m.group(1).strip("'\""))
        if fresh:
            out = dst / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
    return expired, others


def timed(call: Callable[[], int]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    hidden = call()
    return time.perf_counter() - wall, time.process_time() - cpu, hidden


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--every", type=int, default=7, help="take every N-th MDN page")
    ap.add_argument("--expire-every", type=int, default=10, help="expire every N-th page taken")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--modes", default="hybrid,keyword")
    ap.add_argument("--prepare", action="store_true", help="build the vault and index, then stop")
    args = ap.parse_args()

    from vaultmem.search import expired_paths
    from vaultmem.vault import Vault

    base = WORK / "expired-count"
    expired, others = make_vault(
        ensure_mdn(args.mdn_dir), base / "vault", args.every, args.expire_every
    )
    rng = random.Random(SEED)
    queries = rng.sample(expired, QUERIES_EACH) + rng.sample(others, QUERIES_EACH)
    vault = Vault(base / "vault", base / "index.db")
    vault.embedder_spec = "wordllama"
    started = time.perf_counter()
    report = vault.reindex()
    print(f"index ready in {time.perf_counter() - started:.1f}s: {report}", file=sys.stderr)
    if args.prepare:
        return
    vault.warm(background=False)
    now = dt.datetime.now(dt.UTC)
    gone = expired_paths(vault.conn, now)
    print(f"{len(gone)} expired notes", file=sys.stderr)
    load_before = os.getloadavg()

    results: dict[str, object] = {}
    for mode in args.modes.split(","):

        def plain(q: str, mode: str = mode) -> int:
            vault.search(q, limit=args.limit, mode=mode, now=now)
            return 0

        def counted(q: str, mode: str = mode) -> int:
            return vault.search(
                q, limit=args.limit, mode=mode, now=now, count_expired=True
            ).expired_hidden

        def two(q: str, mode: str = mode) -> int:
            vault.search(q, limit=args.limit, mode=mode, now=now)
            every = vault.search(q, limit=args.limit, mode=mode, now=now, include_expired=True)
            return sum(1 for h in every.hits if h.path in gone)

        ways = {"plain": plain, "counted": counted, "two searches": two}
        per: dict[str, dict[str, list[tuple[float, float]]]] = {w: {} for w in ways}
        counts: dict[str, int] = {}
        for p in range(args.passes + 1):
            names = list(ways)
            names = names[p % 3 :] + names[: p % 3]
            for q in queries:
                for name in names:
                    wall, cpu, hidden = timed(functools.partial(ways[name], q))
                    counts[f"{name}:{q}"] = hidden
                    if p:  # pass 0 warms up
                        per[name].setdefault(q, []).append((wall, cpu))
        summary = {}
        for name, by_query in per.items():
            walls = [statistics.median(w for w, _ in runs) * 1000 for runs in by_query.values()]
            cpus = [statistics.median(c for _, c in runs) * 1000 for runs in by_query.values()]
            summary[name] = {
                "wall_ms_median": round(statistics.median(walls), 2),
                "wall_ms_total": round(sum(walls), 1),
                "cpu_ms_median": round(statistics.median(cpus), 2),
                "cpu_ms_total": round(sum(cpus), 1),
            }
        found = [counts[f"counted:{q}"] for q in queries]
        summary["queries_with_hidden"] = sum(1 for n in found if n)
        summary["hidden_total"] = sum(found)
        # the count against what the second search shows (the last pass of each)
        summary["counts_differ"] = sum(
            1 for q in queries if counts[f"counted:{q}"] != counts[f"two searches:{q}"]
        )
        results[mode] = summary
        print(mode, summary, file=sys.stderr)
    out = {
        "machine": machine_info(),
        "code": code_state(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "vault": {"titled_pages": len(expired) + len(others), "expired_notes": len(gone)},
        "passes": args.passes,
        "limit": args.limit,
        "queries": len(queries),
        "results": results,
    }
    print(write_json("expired-count.json", out), file=sys.stderr)


if __name__ == "__main__":
    main()
