r"""Memory speed on the 14k MDN pages, and how `was::` history weighs in search.

    .venv/bin/python bench/memory_speed.py [--runs R] [--writes N] [--skip-cli]

Speed (issue 11's targets: `fact set` plus index <= 50 ms; `recall` and `gate` <= 100 ms p50 in a
warm process, <= 1 s as a CLI process). Each in-process call is timed in wall time and in this
process's CPU time (`cpu_ms`: what the call costs whatever else loads the machine). The vault:
MDN (ROOT/../shared/data/scale/mdn-en-us.tar.gz) extracted under $VAULTMEM_BENCH_TMP
(/tmp/vaultmem-bench)/mdn-memory/, indexed once without vectors (meaning search then falls back
to keywords, said in `notices`), reused.

  fact set     vault.memory.set_fact on N notes spread over the vault (a new key, then a new
               value for it: the line rewritten and the old one kept as `was::`), each timed
               from the call to the index holding the new value (read, plan, atomic write under
               the index lock, reindex of the note). Baseline in the same run: a no-op
               incremental `vault.reindex(embed=False)` (what a hand edit costs to pick up).
  recall       vault.memory.recall of 20 messages (continuations naming MDN pages, and plain
               questions), warm (the names index built by one call before timing).
  gate         vault.memory.gate of the 337 labelled messages of bench/gate/messages.jsonl,
               warm. Baseline: the offline rules alone (memory.gate.classify, no index).
  cli          `vaultmem gate` and `vaultmem recall` as processes (python -m vaultmem), wall
               time, median of R.

History weighting: a synthetic vault of 200 entity pairs. One note of pair i holds
`employer:: Zorb<i>` with `was:: Quux<i>` below it, the other the reverse (which one alternates),
each beside a paragraph of ordinary text. Searching `Zorb<i>` should give the note holding it now
first and still find the one that used to (history). Measured as shipped (`was::` lines in their
own text-index column, weighted 0.25 of the body) and, as the baseline, indexed as before this
change (`was::` lines part of the body).

Writes bench/results/memory-speed.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    PYTHON,
    ROOT,
    WORK,
    ensure_mdn,
    machine_info,
    percentile,
    snapshot_code,
    write_json,
)

GATE_SET = ROOT / "bench" / "gate" / "messages.jsonl"
TODAY = dt.date(2026, 11, 30)
NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 2),
        "p95": round(percentile(values, 95), 2),
        "n": len(values),
    }


CPU: dict[str, list[float]] = {}  # CPU time (ms) of each timed call, by what it timed


def timed(fn: Any, *args: Any, what: str = "", **kwargs: Any) -> tuple[Any, float]:
    """fn's result and its wall time (ms); its CPU time (this process: the machine's other
    load does not count) goes to CPU[what]."""
    c = time.process_time()
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    took = (time.perf_counter() - t) * 1000
    CPU.setdefault(what, []).append((time.process_time() - c) * 1000)
    return out, took


def bench_mdn(args: argparse.Namespace) -> dict[str, Any]:
    from vaultmem.memory.gate import classify
    from vaultmem.vault import Vault

    root = ensure_mdn(WORK / "mdn-memory")
    vault = Vault(root, WORK / "mdn-memory.db")
    t = time.perf_counter()
    report = vault.reindex(embed=False)
    print(f"mdn: {report.notes} notes, reindex {time.perf_counter() - t:.1f}s", file=sys.stderr)
    paths = sorted(n.path for n in vault.note_names())
    step = max(1, len(paths) // args.writes)
    chosen = paths[::step][: args.writes]
    out: dict[str, Any] = {"notes": report.notes}

    noop = [timed(vault.reindex, embed=False, what="noop")[1] for _ in range(max(3, args.runs))]
    fact_new, fact_change = [], []
    stamp = time.strftime("%H%M%S")
    for run in range(args.runs):
        for i, path in enumerate(chosen):
            key = f"bench_{stamp}_{run}"
            done, took = timed(
                vault.memory.set_fact, path, key, f"first {i}", today=TODAY, what="fact_set_new_key"
            )
            assert done.plan.status == "added", done.plan
            fact_new.append(took)
            done, took = timed(
                vault.memory.set_fact, path, key, f"second {i}", today=TODAY, what="fact_set_change"
            )
            assert done.plan.status == "changed", done.plan
            fact_change.append(took)
            got = vault.memory.facts(path, key).facts[0]
            assert got.value == f"second {i}" and got.history[0].value == f"first {i}"
    out["fact_set_new_key_ms"] = ms(fact_new)
    out["fact_set_change_ms"] = ms(fact_change)
    out["baseline_noop_reindex_ms"] = ms(noop)

    titles = [p.rsplit("/", 2)[-2] for p in chosen[:10]]
    messages = [f"where did we leave off on {t}?" for t in titles] + [
        "how do I center a div with flexbox",
        "what does the fetch api return when the request fails",
        "continue the work on the canvas tutorial",
        "what was next for the web components docs",
        "array reduce with an initial value",
        "status of the service worker cache page",
        "what did we decide about css grid subgrid",
        "where are we with the webassembly guide",
        "promise all settled versus any",
        "any update on the accessibility tree notes",
    ]
    vault.memory.recall(messages[0], NOW)  # warm: the names index, the connection
    recall_ms = []
    for _ in range(args.runs):
        recall_ms += [timed(vault.memory.recall, m, NOW, what="recall")[1] for m in messages]
    out["recall_ms"] = ms(recall_ms)

    gate_msgs = [json.loads(line)["text"] for line in GATE_SET.read_text().splitlines()]
    vault.memory.gate(gate_msgs[0], NOW)
    gate_ms, offline_ms, searched = [], [], 0
    for _ in range(args.runs):
        for m in gate_msgs:
            result, took = timed(vault.memory.gate, m, NOW, what="gate")
            gate_ms.append(took)
            offline_ms.append(timed(classify, m)[1])
            searched += result.decision.search
    out["gate_ms"] = ms(gate_ms)
    out["baseline_offline_rules_ms"] = ms(offline_ms)
    out["gate_searched_share"] = round(searched / len(gate_ms), 3)
    out["cpu_ms"] = {what: ms(values) for what, values in CPU.items() if what}

    if not args.skip_cli:
        env = {**os.environ, "VAULTMEM_EMBEDDER": os.environ.get("VAULTMEM_EMBEDDER", "")}
        base = [PYTHON, "-m", "vaultmem", "--vault", str(root), "--index", str(vault.index_path)]
        cli: dict[str, list[float]] = {"gate": [], "recall": [], "version (baseline)": []}
        for _ in range(max(3, args.runs)):
            for name, extra in (
                ("gate", ["gate", "what did we decide about css grid subgrid?"]),
                ("recall", ["recall", "where did we leave off on the fetch api?"]),
                ("version (baseline)", ["--version"]),
            ):
                t = time.perf_counter()
                subprocess.run([*base, *extra], capture_output=True, env=env, check=False)
                cli[name].append((time.perf_counter() - t) * 1000)
        out["cli_ms"] = {k: ms(v) for k, v in cli.items()}
    vault.close()
    return out


def bench_history(tmp: Path) -> dict[str, Any]:
    import shutil

    from vaultmem.store import text as store_text
    from vaultmem.vault import Vault

    filler = (
        "Notes from the weekly sync about onboarding, the roadmap and the budget review. "
        "Nothing here names a company; it is the ordinary text around a fact."
    )
    pairs = 200
    out: dict[str, Any] = {"pairs": pairs}
    shipped = store_text.split_history
    variants = (
        ("shipped (was:: lines in their own column, 0.25)", shipped),
        ("baseline (was:: lines in the body, as before)", lambda text: (text, "")),
    )
    for label, split in variants:
        root = tmp / "history-vault"
        shutil.rmtree(root, ignore_errors=True)
        (root / ".obsidian").mkdir(parents=True)
        current: dict[int, str] = {}
        for i in range(pairs):
            # which of the two notes holds Zorb<i> as its current value alternates, so that a
            # tie broken by path is right only half the time
            holders = ("A", "B") if i % 2 == 0 else ("B", "A")
            current[i] = f"{holders[0]}{i:03d}.md"
            for name, now, was in ((holders[0], "Zorb", "Quux"), (holders[1], "Quux", "Zorb")):
                (root / f"{name}{i:03d}.md").write_text(
                    f"# {name}{i:03d}\n\n{filler}\n\n## Facts\n- employer:: {now}{i:03d}"
                    f" ^f-0001\n    - was:: {was}{i:03d} (until 2025-01-01)\n",
                    encoding="utf-8",
                )
        index = tmp / "history.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
        store_text.split_history = split  # type: ignore[assignment]
        try:
            vault = Vault(root, index)
            vault.reindex(embed=False)
        finally:
            store_text.split_history = shipped
        first = found = 0
        for i in range(pairs):
            hits = [h.path for h in vault.search(f"Zorb{i:03d}", mode="keyword", limit=5).hits]
            other = ({f"A{i:03d}.md", f"B{i:03d}.md"} - {current[i]}).pop()
            first += bool(hits) and hits[0] == current[i]
            found += other in hits
        vault.close()
        out[label] = {
            "current_ranked_first": round(first / pairs, 3),
            "history_in_top5": round(found / pairs, 3),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", type=int, default=20, help="notes that get a fact per run")
    ap.add_argument("--skip-cli", action="store_true")
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    code = snapshot_code()
    load_before = os.getloadavg()
    started = time.perf_counter()
    history = bench_history(WORK)
    mdn = bench_mdn(args)
    load_after = os.getloadavg()
    out = {
        "benchmark": "memory speed (MDN 14k) and history weighting (synthetic pairs)",
        "runs": args.runs,
        "mdn": mdn,
        "history_weighting": history,
        "machine": machine_info(),
        "load": {"before": load_before, "after": load_after},
        "code": code,
        "seconds": round(time.perf_counter() - started, 1),
    }
    target = write_json("memory-speed.json", out)
    print(json.dumps(out, indent=1))
    print(f"\nwrote {target} (load {load_before[0]:.2f} -> {load_after[0]:.2f})")


if __name__ == "__main__":
    main()
