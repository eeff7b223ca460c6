r"""What link authority costs a search: the time of its one index query, per MDN dev-set question.

    .venv/bin/python bench/authority_cost.py [--passes 3] [--mdn-dir DIR]

Opens the MDN dev set's index (bench/devset.py builds it: $VAULTMEM_BENCH_TMP/devset/
mdn-default.db), holds its vectors in memory, and runs each of the 162 questions through
Vault.search (hybrid, the defaults) --passes times after a warm-up pass; every call of
search._linked_from (store.linking_note_counts over the candidate notes not met before in
this index generation) is timed, wall and thread CPU, beside the whole search's wall and
process CPU. The first pass meets every question's notes for the first time ("first"); the
later passes find them kept ("again"). Prints medians and 95th percentiles and the load;
writes bench/results/authority-cost.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_MDN_DIR, WORK, ensure_mdn, machine_info, percentile, write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import devset

    from vaultmem import search
    from vaultmem.vault import Vault

    questions = devset.load_set("mdn")
    vault = Vault(ensure_mdn(args.mdn_dir), WORK / "devset" / "mdn-default.db")
    vault.reindex()
    vault.warm(background=False)
    plain = search._linked_from
    spent: dict[str, list[float]] = {"wall": [], "cpu": [], "notes": []}

    def timed(conn: Any, facts: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        out = plain(conn, facts)
        spent["cpu"].append((time.thread_time() - c) * 1000)
        spent["wall"].append((time.perf_counter() - t) * 1000)
        spent["notes"].append(len(facts))
        return out

    search._linked_from = timed
    whole: dict[str, list[float]] = {"wall": [], "cpu": []}
    first: dict[str, list[float]] = {}
    loads = [os.getloadavg()[0]]
    for n in range(args.passes + 1):
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            vault.search(q.text)
            if n:
                whole["wall"].append((time.perf_counter() - t) * 1000)
                whole["cpu"].append((time.process_time() - c) * 1000)
        if not n:  # the first pass: every question's notes met for the first time
            first = {k: list(v) for k, v in spent.items()}
            for v in spent.values():
                v.clear()
        loads.append(os.getloadavg()[0])

    def stats(values: dict[str, list[float]]) -> dict[str, dict[str, float]]:
        return {k: {"p50": percentile(v, 50), "p95": percentile(v, 95)}
                for k, v in values.items() if k != "notes"}

    summary = {
        "authority_ms_first": stats(first),
        "authority_ms_again": stats(spent),
        "candidate_notes": {"p50": percentile(first["notes"], 50),
                            "p95": percentile(first["notes"], 95)},
        "search_ms": {k: {"p50": percentile(v, 50), "p95": percentile(v, 95)}
                      for k, v in whole.items()},
        "loadavg_1min": {"min": min(loads), "max": max(loads)},
    }
    print(f"{len(questions)} questions x {args.passes} passes; load {min(loads):.1f}-"
          f"{max(loads):.1f}")
    for key, value in summary.items():
        print(f"  {key}: {value}")
    write_json("authority-cost.json", {"machine": machine_info(), "passes": args.passes,
                                       "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                                       "summary": summary})


if __name__ == "__main__":
    main()
