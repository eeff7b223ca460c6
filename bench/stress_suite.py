"""The whole test suite under stress-like load: a busy loop on every core, the suite run N times.

    .venv/bin/python bench/stress_suite.py [--runs 2] [--loops 2] [--nice 10] [-- PYTEST ARGS]

Starts `--loops` busy processes (`while 1: pass`, default: one per core) at the same `nice` as
the suite, so they take a core's worth of CPU each from it; runs `python -m pytest -q` `--runs`
times in a row; stops the loops (by their own process ids) whatever happens. Records each run's
exit code, pass/fail/skip counts, failures by name, duration and the load average before and
after, in bench/results/stress-suite.json, and prints a markdown table for docs/TESTING.md.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, code_state, machine_info, write_json

_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|error|errors|xfailed|xpassed)")


def busy_loops(count: int, niceness: int) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(["nice", "-n", str(niceness), sys.executable, "-c", "while 1: pass"])
        for _ in range(count)
    ]


def one_run(niceness: int, extra: list[str]) -> dict:
    load_before = os.getloadavg()
    started = time.perf_counter()
    with subprocess.Popen(
        ["nice", "-n", str(niceness), PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as proc:
        try:
            stdout, _ = proc.communicate()
        finally:
            if proc.poll() is None:
                proc.kill()
    seconds = time.perf_counter() - started
    tail = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    counts = {kind: int(n) for n, kind in _COUNTS.findall(tail)}
    failures = re.findall(r"^(?:FAILED|ERROR) (\S+)", stdout, re.MULTILINE)
    return {
        "exit_code": proc.returncode, "seconds": round(seconds, 1), "summary": tail,
        "counts": counts, "failures": failures,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        # what failed and why (pytest's FAILURES section), then the summary at the end
        "failures_section": stdout[stdout.find("= FAILURES ="):][:30000]
        if "= FAILURES =" in stdout else "",
        "output_tail": stdout[-6000:],
    }


def _stop(_signum: int, _frame: object) -> None:
    raise SystemExit("stopped")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--loops", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, _stop)  # a stopped benchmark stops its loops too (finally)
    loops = busy_loops(args.loops, args.nice)
    runs = []
    try:
        for n in range(1, args.runs + 1):
            r = one_run(args.nice, args.pytest_args)
            runs.append(r)
            print(f"[run {n}/{args.runs}] exit {r['exit_code']} in {r['seconds']:.0f} s: "
                  f"{r['summary']} (load {r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f})",
                  file=sys.stderr, flush=True)
    finally:
        for loop in loops:
            loop.send_signal(signal.SIGTERM)
        for loop in loops:
            loop.wait(timeout=30)
    out = write_json("stress-suite.json", {
        "machine": machine_info(), "code": code_state(), "busy_loops": args.loops,
        "nice": args.nice, "pytest_args": args.pytest_args, "runs": runs,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    })
    print("| run | result | duration | load before → after (1, 5, 15 min) | failures |")
    print("|---|---|---:|---|---|")
    for n, r in enumerate(runs, start=1):
        print(f"| {n} | {r['summary']} | {r['seconds'] / 60:.1f} min | "
              f"{r['load_before']} → {r['load_after']} | {', '.join(r['failures']) or 'none'} |")
    print(f"\nJSON: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
