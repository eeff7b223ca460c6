r"""One-shot CLI commands as processes on the 14k MDN pages: start-up and the whole command.

    .venv/bin/python bench/cli_startup.py [--vault PATH] [--runs 5] [--base REF] [--only NAMES]

Issue 11: `vaultmem recall` and `vaultmem gate` <= 1 s as a CLI process; issue 13: one CLI
`search` <= 1.5 s with the default model. Each command runs as `python -m vaultmem --vault V ...`
(a fresh interpreter with its bytecode cached, as an installed vaultmem starts), R times,
interleaved round-robin with every other command so that a change of load touches all alike.
Measured per run: wall time and the child's CPU time (user + system, from wait4), which a
loaded machine inflates far less than wall time. Baselines in the same run: `python -c pass`
(the interpreter's own start) and `python -c "import sqlite3"`.

The vault: --vault PATH (an MDN tree already indexed), else MDN (ROOT/../shared/data/scale/
mdn-en-us.tar.gz) extracted under $VAULTMEM_BENCH_TMP (/tmp/vaultmem-bench)/mdn/ and indexed once
at nice 19 (a few minutes). The code measured is a snapshot of vaultmem/ (bench/_common.py);
--base REF measures the vaultmem/ of a git ref too (`git archive`), in the same rounds: the
before and after of a change under the same load.

Writes bench/results/cli-startup.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
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
    base_code,
    ensure_mdn,
    machine_info,
    snapshot_code,
    write_json,
)

NOTE = "en-us/web/api/fetch_api/index.md"

# name -> (arguments after `python`, exit codes that mean it worked). `gate-rules` is a message
# the offline rules answer; `gate` one that needs memory (so it searches).
COMMANDS: dict[str, tuple[list[str], set[int]]] = {
    "python -c pass": (["-c", "pass"], {0}),
    "python -c 'import sqlite3'": (["-c", "import sqlite3"], {0}),
    "--version": (["-m", "vaultmem", "--version"], {0}),
    "--help": (["-m", "vaultmem", "--help"], {0}),
    "stats": (["-m", "vaultmem", "--vault", "{vault}", "stats"], {0}),
    "show": (["-m", "vaultmem", "--vault", "{vault}", "show", NOTE], {0}),
    "search": (["-m", "vaultmem", "--vault", "{vault}", "search", "center a div"], {0}),
    "search --mode keyword": (
        ["-m", "vaultmem", "--vault", "{vault}", "search", "--mode", "keyword", "center a div"],
        {0},
    ),
    "recall": (
        ["-m", "vaultmem", "--vault", "{vault}", "recall", "where did we leave off on fetch"],
        {0},
    ),
    "gate": (
        ["-m", "vaultmem", "--vault", "{vault}", "gate", "what did I decide about CORS for fetch"],
        {0, 2, 3},
    ),
    "gate-rules": (["-m", "vaultmem", "--vault", "{vault}", "gate", "thanks, that's all"], {2}),
}
BASELINES = ("python -c pass", "python -c 'import sqlite3'")


def load() -> float:
    return os.getloadavg()[0]


def run_once(args: list[str], ok: set[int], env: dict[str, str]) -> dict[str, float]:
    """One child: wall seconds and its CPU seconds (user + system).

    It runs in WORK, not ROOT: `python -m` puts the current folder first on sys.path, where
    the worktree's vaultmem/ would shadow the snapshot (or the base ref) on PYTHONPATH.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(
        [PYTHON, *args], cwd=WORK, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in ok:
        raise SystemExit(f"{' '.join(args)} exited {code}:\n{err.decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime}


def indexed_mdn() -> Path:
    root = ensure_mdn(WORK / "mdn")
    if not (root / ".vaultmem" / "index.db").exists():
        print("indexing MDN at nice 19 (a few minutes) …", file=sys.stderr, flush=True)
        subprocess.run(
            ["nice", "-n", "19", PYTHON, "-m", "vaultmem", "--vault", str(root), "reindex"],
            cwd=ROOT, check=True,
        )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, help="an indexed MDN tree (default: extract one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base", metavar="REF", help="also measure vaultmem/ as of this git ref")
    parser.add_argument("--only", help="comma-separated command names (baselines always run)")
    parser.add_argument("--out", default="cli-startup.json")
    args = parser.parse_args()

    vault = args.vault.resolve() if args.vault else indexed_mdn()
    state = snapshot_code()
    head_path = os.environ["PYTHONPATH"]
    versions: dict[str, str] = {"head": head_path}
    if args.base:
        versions["base"] = str(base_code(args.base))
    names = list(COMMANDS)
    if args.only:
        wanted = set(args.only.split(","))
        names = [n for n in names if n in wanted or n in BASELINES]
    # Single-threaded maths, as the project's own benches run it; nothing else differs.
    env_common = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env_common.pop("VAULTMEM_VAULT", None)
    # An installed vaultmem has its .pyc files; a shell with PYTHONDONTWRITEBYTECODE=1 (as on
    # this team's machine) would compile every module from source on each start instead.
    env_common.pop("PYTHONDONTWRITEBYTECODE", None)

    def command_args(name: str) -> list[str]:
        return [a.replace("{vault}", str(vault)) for a in COMMANDS[name][0]]

    # A warm-up of each (file cache, .pyc files), not counted, after checking that each version
    # imports its own code (not the editable install's).
    for label, path in versions.items():
        env = {**env_common, "PYTHONPATH": path}
        where = subprocess.run(
            [PYTHON, "-c", "import vaultmem; print(vaultmem.__file__)"],
            cwd=WORK, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        if not where.startswith(path.split(os.pathsep)[0]):
            raise SystemExit(f"{label}: imported vaultmem from {where}, not {path}")
        for name in names:
            run_once(command_args(name), COMMANDS[name][1], env)
    load_before = load()
    samples: dict[str, dict[str, list[dict[str, float]]]] = {v: {n: [] for n in names}
                                                             for v in versions}
    started = time.perf_counter()
    for _ in range(args.runs):
        for name in names:
            for label, path in versions.items():
                if name in BASELINES and label != "head":
                    continue
                env = {**env_common, "PYTHONPATH": path}
                samples[label][name].append(run_once(command_args(name), COMMANDS[name][1], env))
    load_after = load()

    results: dict[str, Any] = {}
    for label in versions:
        results[label] = {}
        for name in names:
            runs = samples[label][name]
            if not runs:
                continue
            results[label][name] = {
                "wall_s": round(statistics.median(r["wall"] for r in runs), 3),
                "cpu_s": round(statistics.median(r["cpu"] for r in runs), 3),
                "wall_all": [round(r["wall"], 3) for r in runs],
                "cpu_all": [round(r["cpu"], 3) for r in runs],
            }
    data = {
        "machine": machine_info(),
        "code": state,
        "base_ref": args.base,
        "vault": str(vault),
        "runs": args.runs,
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    path = write_json(args.out, data)

    print(f"load {load_before:.1f} -> {load_after:.1f}; median of {args.runs} runs; {path}")
    head = "| command | wall s | CPU s |"
    rule = "|---|---:|---:|"
    if args.base:
        head = f"| command | {args.base}: wall s | CPU s | this branch: wall s | CPU s |"
        rule = "|---|---:|---:|---:|---:|"
    print(head)
    print(rule)
    for name in names:
        cells = []
        for label in (["base"] if args.base else []) + ["head"]:
            r = results[label].get(name) or results["head"][name]
            cells += [f"{r['wall_s']:.2f}", f"{r['cpu_s']:.2f}"]
        print(f"| `{name}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
