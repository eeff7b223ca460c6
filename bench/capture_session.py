r"""Capture of one LoCoMo session, whole: as the `capture` command runs, and in a running process.

    .venv/bin/python bench/capture_session.py [--sessions 9]

Issue 12's target: capture of one LoCoMo session <= 1 s offline. A copy of the sample vault
(indexed) takes `--sessions` sessions of conv-26 (`../shared/data/memory/locomo/`), each:

- `vaultmem capture FILE --session session_N --source locomo` as a fresh process (interpreter
  start-up, reading the file, extraction, gates, flags against the vault's facts, the capture
  note written through the one write path and reindexed): wall time, and the child's CPU time;
- `vault.captures.capture(...)` in a process already running (the MCP server's case), timed
  around the call alone, with CPU time.

Baseline in the same run: `vaultmem review --json` as a process (start-up and a read of the
queue, nothing written). Medians over the sessions. Writes bench/results/capture-session.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultmem.vault import Vault  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "memory" / "locomo" / "locomo10.json"
RESULTS = ROOT / "bench" / "results" / "capture-session.json"
ENV = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}


def child_run(args: list[str]) -> tuple[float, float]:
    """(wall s, the child's CPU s) of one vaultmem process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "vaultmem", *args], capture_output=True, text=True, env=ENV
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"vaultmem {' '.join(args)} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=9)
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"LoCoMo is not at {DATA}")
    sample = json.loads(DATA.read_text(encoding="utf-8"))[0]  # conv-26
    load = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="capture-session-"))
    try:
        conv = tmp / "conv-26.json"
        conv.write_text(json.dumps(sample), encoding="utf-8")
        vault_dir = tmp / "vault"
        shutil.copytree(
            ROOT / "sample-vault", vault_dir, ignore=shutil.ignore_patterns(".vaultmem")
        )
        subprocess.run([sys.executable, "-m", "vaultmem", "--vault", str(vault_dir), "reindex"],
                       capture_output=True, env=ENV, check=True)  # fmt: skip
        cli, cli_cpu, review, review_cpu = [], [], [], []
        sessions = [f"session_{n}" for n in range(1, 2 * args.sessions + 1)]
        for name in sessions[: args.sessions]:
            wall, cpu = child_run(["--vault", str(vault_dir), "capture", str(conv),
                                   "--session", name, "--source", f"locomo {name}"])  # fmt: skip
            cli.append(wall)
            cli_cpu.append(cpu)
            wall, cpu = child_run(["--vault", str(vault_dir), "review", "--json"])
            review.append(wall)
            review_cpu.append(cpu)
        vault = Vault(vault_dir)
        vault.embedder_spec = "fake"
        calls, calls_cpu = [], []
        for name in sessions[args.sessions : 2 * args.sessions]:
            transcript = vault.captures.read_transcript_file(conv).session(name)
            cpu0, started = time.process_time(), time.perf_counter()
            result = vault.captures.capture(transcript, source=f"locomo {name}")
            calls.append(time.perf_counter() - started)
            calls_cpu.append(time.process_time() - cpu0)
            assert result.status == "written", result.status
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    result = {
        "sessions": args.sessions,
        "cli_capture_median_ms": ms(cli),
        "cli_capture_max_ms": round(max(cli) * 1000, 1),
        "cli_capture_cpu_median_ms": ms(cli_cpu),
        "in_process_capture_median_ms": ms(calls),
        "in_process_capture_max_ms": round(max(calls) * 1000, 1),
        "in_process_capture_cpu_median_ms": ms(calls_cpu),
        "baseline_cli_review_median_ms": ms(review),
        "baseline_cli_review_cpu_median_ms": ms(review_cpu),
        "load": load,
        "load_after": os.getloadavg(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
