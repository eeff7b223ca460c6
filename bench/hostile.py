"""Hostile notes and the cost of reading safely: this code against a base (default `main`).

    .venv/bin/python bench/hostile.py [--runs 5] [--base main] [--datasets kepano,mdn]
                                      [--timeout 200] [--skip-notes] [--skip-reindex]
                                      [--read-runs 15] [--noop-runs 12]
                                      [--results hostile.json]

1. Hostile notes: a vault holding one note (20,000 front matter properties; a 500-byte
   "billion laughs"; 4,000 properties), reindexed cold in a child process with the base code
   and with this code; a child still running after --timeout seconds is killed and reported
   as "> timeout".
2. Reading every note of kepano and MDN (read_note alone), base and this code alternating,
   --read-runs rounds each.
3. No-op reindexes of kepano and MDN over one shared index, alternating, --noop-runs each.
4. Cold reindex of kepano and MDN (text index, no vectors), then a no-op one, base and this
   code alternating back to back in fresh child processes, so both see the same machine load;
   the load average is recorded before every run. Reading every note through lstat +
   open(O_NOFOLLOW) + fstat + the opened file's location must not slow this noticeably.

Both codes are frozen copies (the base from `git archive`), first on PYTHONPATH. Writes
bench/results/hostile.json and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    KEPANO_VAULT,
    PYTHON,
    ROOT,
    WORK,
    code_state,
    ensure_mdn,
    machine_info,
    md_files,
    median,
    require,
    write_json,
)

WORKER = str(ROOT / "bench" / "_worker.py")


def billion_laughs() -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]")
    return "\n".join(lines)


NOTES = {
    "20,000 properties": "\n".join(f"p{n}: {n}" for n in range(20_000)),
    "4,000 properties": "\n".join(f"p{n}: {n}" for n in range(4_000)),
    "billion laughs (500 bytes)": billion_laughs(),
}


def freeze(ref: str | None, into: Path) -> Path:
    """A copy of vaultmem/ (this worktree's when ref is None, else git's at ref) under into."""
    into.mkdir(parents=True)
    if ref is None:
        shutil.copytree(ROOT / "vaultmem", into / "vaultmem",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        return into
    archive = subprocess.run(["git", "archive", ref, "vaultmem"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    return into


def reindex(code: Path, root: Path, index: Path, timeout: float) -> dict | None:
    """A cold reindex in a child process with `code` first on the path; None after timeout."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    try:
        done = subprocess.run([PYTHON, WORKER, "vaultmem", str(root), str(index)], env=env,
                              capture_output=True, text=True, timeout=timeout, cwd=code)
    except subprocess.TimeoutExpired:
        return None
    result: dict = {"wall_s": time.perf_counter() - started, "exit": done.returncode}
    if done.returncode == 0:
        result.update(json.loads(done.stdout.strip().splitlines()[-1]))
        assert result["module"].startswith(str(code)), result["module"]
    else:
        result["error"] = done.stderr.strip().splitlines()[-1][:200] if done.stderr else "?"
    return result


def shown(result: dict | None, timeout: float) -> str:
    if result is None:
        return f"> {timeout:g} s (killed)"
    if result["exit"] != 0:
        return f"failed: {result['error']}"
    return f"{result['seconds']:.2f} s"


def hostile_notes(codes: dict[str, Path], timeout: float, work: Path) -> dict:
    out: dict = {}
    for name, yaml_text in NOTES.items():
        out[name] = {}
        for label, code in codes.items():
            vault = work / f"note-{label}" / "vault"
            shutil.rmtree(vault.parent, ignore_errors=True)
            vault.mkdir(parents=True)
            (vault / "hostile.md").write_text(f"---\n{yaml_text}\n---\nbody\n", encoding="utf-8")
            (vault / "plain.md").write_text("an ordinary note\n", encoding="utf-8")
            result = reindex(code, vault, vault.parent / "index.db", timeout)
            out[name][label] = result
            print(f"[{name}] {label}: {shown(result, timeout)}", file=sys.stderr, flush=True)
    return out


def cold_reindexes(codes: dict[str, Path], datasets: list[str], runs: int, work: Path) -> dict:
    out: dict = {}
    for name in datasets:
        if name == "mdn":
            root = ensure_mdn(DEFAULT_MDN_DIR)
        else:
            root = require(KEPANO_VAULT, "kepano-obsidian vault")
        samples: dict[str, list[dict]] = {label: [] for label in codes}
        for run in range(1, runs + 1):
            # alternate which goes first, so neither always meets the warmer page cache
            order = list(codes.items()) if run % 2 else list(reversed(codes.items()))
            for label, code in order:
                index = work / f"cold-{name}-{label}.db"
                for suffix in ("", "-wal", "-shm", ".lock"):
                    Path(str(index) + suffix).unlink(missing_ok=True)
                load = os.getloadavg()[0]
                result = reindex(code, root, index, timeout=3600)
                assert result is not None and result["exit"] == 0, result
                noop = reindex(code, root, index, timeout=3600)  # nothing changed: the scan
                assert noop is not None and noop["exit"] == 0 and noop["changed"] == 0, noop
                result["load_1min"] = load
                result["noop_s"] = noop["seconds"]
                samples[label].append(result)
                print(f"[{name} run {run}/{runs}] {label}: {result['seconds']:.3f} s, no-op "
                      f"{noop['seconds']:.3f} s ({result['notes']} notes, load {load:.1f})",
                      file=sys.stderr, flush=True)
        out[name] = {
            label: {
                "median_s": median([r["seconds"] for r in rs]),
                "runs_s": [round(r["seconds"], 3) for r in rs],
                "noop_median_s": median([r["noop_s"] for r in rs]),
                "noop_runs_s": [round(r["noop_s"], 3) for r in rs],
                "notes": rs[0]["notes"],
                "skipped": rs[0]["skipped"],
                "load_1min": [round(r["load_1min"], 1) for r in rs],
            }
            for label, rs in samples.items()
        }
    return out


READER = """
import inspect, json, os, sys, time
from pathlib import Path
from vaultmem.scan import read_note
root = sys.argv[1]
rels = json.loads(Path(sys.argv[2]).read_text())
real = os.path.realpath(root)
safe = "real_root" in inspect.signature(read_note).parameters  # this code; the base lacks it
started = time.perf_counter()
if safe:  # each called the way its own indexer calls it
    for rel in rels:
        read_note(os.path.join(root, rel), real, 10 << 20)
else:
    for rel in rels:
        read_note(Path(root) / rel)
print(json.dumps({"seconds": time.perf_counter() - started, "safe": safe}))
"""


def reads(codes: dict[str, Path], datasets: list[str], runs: int, work: Path) -> dict:
    """Only the reading of every note (read_note), base and this code alternating: the cost
    of lstat + open(O_NOFOLLOW | O_NONBLOCK) + fstat + the opened file's location, apart
    from parsing and SQLite, so that machine load blurs it less than a whole reindex."""
    out: dict = {}
    for name in datasets:
        root = ensure_mdn(DEFAULT_MDN_DIR) if name == "mdn" else KEPANO_VAULT
        listing = work / f"paths-{name}.json"
        listing.write_text(json.dumps([os.path.relpath(p, root) for p in md_files(root)]))
        samples: dict[str, list[float]] = {label: [] for label in codes}
        for run in range(runs):
            order = list(codes.items()) if run % 2 else list(reversed(codes.items()))
            for label, code in order:
                env = {**os.environ, "PYTHONPATH": str(code)}
                done = subprocess.run([PYTHON, "-c", READER, str(root), str(listing)], env=env,
                                      capture_output=True, text=True, check=True, cwd=code)
                samples[label].append(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
        out[name] = {label: {"median_s": median(v), "runs_s": [round(x, 4) for x in v]}
                     for label, v in samples.items()}
        print(f"[reads {name}] " + ", ".join(f"{k} {v['median_s']:.3f} s"
                                             for k, v in out[name].items()),
              file=sys.stderr, flush=True)
    return out


def noops(codes: dict[str, Path], datasets: list[str], runs: int, work: Path) -> dict:
    """No-op reindexes over one shared index (built once by this code; the schema is the
    same), base and this code alternating: the cost of the scan's name checks on a vault
    where nothing changed, with less noise than one no-op per cold run."""
    out: dict = {}
    for name in datasets:
        root = ensure_mdn(DEFAULT_MDN_DIR) if name == "mdn" else KEPANO_VAULT
        index = work / f"noop-{name}.db"
        built = reindex(codes["this"], root, index, timeout=3600)
        assert built is not None and built["exit"] == 0, built
        samples: dict[str, list[float]] = {label: [] for label in codes}
        for run in range(runs):
            order = list(codes.items()) if run % 2 else list(reversed(codes.items()))
            for label, code in order:
                result = reindex(code, root, index, timeout=600)
                assert result is not None and result["exit"] == 0, result
                assert result["changed"] == 0, result
                samples[label].append(result["seconds"])
        out[name] = {label: {"median_s": median(v), "min_s": min(v),
                             "runs_s": [round(x, 4) for x in v]}
                     for label, v in samples.items()}
        print(f"[no-op {name}] " + ", ".join(f"{k} {v['median_s']:.3f} s"
                                             for k, v in out[name].items()),
              file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", default="main", help="git ref of the code to compare against")
    ap.add_argument("--datasets", default="kepano,mdn")
    ap.add_argument("--timeout", type=float, default=200.0)
    ap.add_argument("--skip-notes", action="store_true")
    ap.add_argument("--skip-reindex", action="store_true")
    ap.add_argument("--results", default="hostile.json", help="file name under bench/results")
    ap.add_argument("--noop-runs", type=int, default=12,
                    help="no-op reindexes over one shared index, per code (0 skips the step)")
    ap.add_argument("--read-runs", type=int, default=15,
                    help="rounds of reading every note, per code (0 skips the step)")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hostile-", dir=WORK) as tmp:
        work = Path(tmp)
        codes = {"base": freeze(args.base, work / "base"), "this": freeze(None, work / "this")}
        result: dict = {
            "base": args.base,
            "code": code_state(),
            "machine": machine_info(),
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
            "load_at_start": os.getloadavg(),
        }
        if not args.skip_notes:
            result["notes"] = hostile_notes(codes, args.timeout, work)
        datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
        if args.read_runs:
            result["reads"] = reads(codes, datasets, args.read_runs, work)
        if args.noop_runs:
            result["noop"] = noops(codes, datasets, args.noop_runs, work)
        if not args.skip_reindex:
            result["cold"] = cold_reindexes(codes, datasets, args.runs, work)
        result["load_at_end"] = os.getloadavg()
    out = write_json(args.results, result)
    if "notes" in result:
        print(f"\n| one hostile note, cold reindex | {args.base} | this code |\n|---|---:|---:|")
        for name, by in result["notes"].items():
            print(f"| {name} | {shown(by['base'], args.timeout)} | "
                  f"{shown(by['this'], args.timeout)} |")
    if "reads" in result:
        print(f"\n| read every note (median of {args.read_runs}) | {args.base} | this code |"
              " change |\n|---|---:|---:|---:|")
        for name, by in result["reads"].items():
            base, this = by["base"]["median_s"], by["this"]["median_s"]
            print(f"| {name} | {base:.3f} s | {this:.3f} s | {(this - base) / base:+.1%} |")
    if "noop" in result:
        print(f"\n| no-op reindex, one shared index (median of {args.noop_runs}) | {args.base} |"
              " this code | change |\n|---|---:|---:|---:|")
        for name, by in result["noop"].items():
            base, this = by["base"]["median_s"], by["this"]["median_s"]
            print(f"| {name} | {base:.3f} s | {this:.3f} s | {(this - base) / base:+.1%} |")
    if "cold" in result:
        print(f"\n| reindex (median of {args.runs}) | {args.base} | this code | change |"
              "\n|---|---:|---:|---:|")
        for name, by in result["cold"].items():
            for step, key in (("cold", "median_s"), ("no-op", "noop_median_s")):
                base, this = by["base"][key], by["this"][key]
                print(f"| {name} ({by['this']['notes']:,} notes), {step} | {base:.3f} s | "
                      f"{this:.3f} s | {(this - base) / base:+.1%} |")
    print(f"\nload average at start {result['load_at_start'][0]:.1f}, "
          f"at end {result['load_at_end'][0]:.1f}; JSON: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
