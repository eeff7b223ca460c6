"""Reindex benchmark: floor, baseline and vaultmem cold / no-op / one-edit reindex, per dataset.

    .venv/bin/python bench/reindex.py [--runs 3] [--datasets mdn,kepano] [--mdn-dir DIR]

Each run measures, in fresh child processes (so peak RSS is per step):
  floor     read every .md file (os.walk + read bytes)
  walkstat  os.scandir walk + stat of every .md file (what a full-scan no-op cannot avoid)
  baseline  read + regex link scan + insert every file into a plain FTS5 table, one transaction
  cold      vaultmem reindex into a fresh index file
  noop      vaultmem reindex again, nothing changed
  edit      vaultmem reindex after appending a line to one note (in a private copy of the data)
Times are the in-process seconds of the step (imports excluded); `wall` adds interpreter start and
imports. Writes bench/results/reindex-<dataset>.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
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
    ensure_mdn,
    machine_info,
    md_files,
    median,
    require,
    run_child,
    snapshot_code,
    writable_copy,
    write_json,
)

WORKER = str(ROOT / "bench" / "_worker.py")
MDN_EDIT = "en-us/web/javascript/reference/global_objects/array/index.md"

TARGETS = {  # from the issue; they are stated for the 14k-page MDN set
    "cold_notes_per_s": (">=", 300.0),
    "cold_peak_rss_mb": ("<", 500.0),
    "noop_s": ("<=", 1.0),
    "edit_s": ("<=", 0.3),
}


def verdict(metric: str, value: float) -> str:
    op, limit = TARGETS[metric]
    ok = {">=": value >= limit, "<": value < limit, "<=": value <= limit}[op]
    return "met" if ok else "NOT met"


def prepare(name: str, mdn_dir: Path) -> tuple[Path, Path]:
    """(vault root, note to edit) — both inside a copy this benchmark owns."""
    if name == "mdn":
        root = ensure_mdn(mdn_dir)
        edit = root / MDN_EDIT
    elif name == "kepano":
        require(KEPANO_VAULT, "kepano-obsidian vault")
        root = writable_copy(KEPANO_VAULT, WORK / "kepano")
        notes = md_files(root)
        edit = Path(notes[len(notes) // 2])
    else:
        raise SystemExit(f"unknown dataset {name!r} (use mdn or kepano)")
    if not edit.exists():
        edit = Path(md_files(root)[len(md_files(root)) // 2])
    return root, edit


def one_run(run: int, root: Path, edit: Path, tmp: Path) -> dict:
    floor = run_child([PYTHON, WORKER, "floor", str(root)])
    walkstat = run_child([PYTHON, WORKER, "walkstat", str(root)])
    base = run_child([PYTHON, WORKER, "baseline", str(root), str(tmp / "baseline.db")])
    index = tmp / "index.db"
    cold = run_child([PYTHON, WORKER, "vaultmem", str(root), str(index)])
    index_mb = sum(p.stat().st_size for p in tmp.glob("index.db*")) / 1e6
    noop = run_child([PYTHON, WORKER, "vaultmem", str(root), str(index)])
    with open(edit, "a", encoding="utf-8") as fh:
        fh.write(f"\nBenchmark edit {run} at {time.time_ns()}: appended one line.\n")
    edited = run_child([PYTHON, WORKER, "vaultmem", str(root), str(index)])
    if noop["changed"] != 0 or edited["changed"] != 1:
        print(f"warning: run {run}: no-op changed {noop['changed']}, edit changed "
              f"{edited['changed']} (expected 0 and 1)", file=sys.stderr)
    cold["notes_per_s"] = cold["notes"] / cold["seconds"]
    cold["index_mb"] = index_mb
    for step in (floor, base):
        step["files_per_s"] = step["files"] / step["seconds"]
    return {"floor": floor, "walkstat": walkstat, "baseline": base, "cold": cold, "noop": noop,
            "edit": edited}


def summarise(runs: list[dict]) -> dict:
    def med(step: str, key: str) -> float:
        return median([r[step][key] for r in runs])

    return {
        "files": runs[0]["floor"]["files"],
        "bytes": runs[0]["floor"]["bytes"],
        "notes": runs[0]["cold"]["notes"],
        "floor_s": med("floor", "seconds"),
        "floor_files_per_s": med("floor", "files_per_s"),
        "walkstat_s": med("walkstat", "seconds"),
        "baseline_s": med("baseline", "seconds"),
        "baseline_files_per_s": med("baseline", "files_per_s"),
        "baseline_peak_rss_mb": med("baseline", "peak_rss_mb"),
        "cold_s": med("cold", "seconds"),
        "cold_wall_s": med("cold", "wall_s"),
        "cold_notes_per_s": med("cold", "notes_per_s"),
        "cold_peak_rss_mb": med("cold", "peak_rss_mb"),
        "cold_peak_rss_mb_max": max(r["cold"]["peak_rss_mb"] for r in runs),
        "index_mb": med("cold", "index_mb"),
        "noop_s": med("noop", "seconds"),
        "noop_wall_s": med("noop", "wall_s"),
        "edit_s": med("edit", "seconds"),
        "edit_wall_s": med("edit", "wall_s"),
        "import_s": med("cold", "import_s"),
    }


def table(name: str, s: dict, targets: bool) -> str:
    def tgt(metric: str) -> str:
        if not targets:
            return "n/a"
        op, limit = TARGETS[metric]
        unit = {"cold_notes_per_s": " notes/s", "cold_peak_rss_mb": " MB"}.get(metric, " s")
        return f"{op} {limit:g}{unit}: **{verdict(metric, s[metric])}**"

    rows = [
        "| step | median s | files/s | peak RSS MB | process wall s | target |",
        "|---|---:|---:|---:|---:|---|",
        f"| floor: read every .md | {s['floor_s']:.3f} | {s['floor_files_per_s']:,.0f} | | | |",
        f"| floor: scandir walk + stat every .md (no-op floor) | {s['walkstat_s']:.3f} | | | | |",
        f"| baseline: regex links + FTS5 insert | {s['baseline_s']:.3f} | "
        f"{s['baseline_files_per_s']:,.0f} | {s['baseline_peak_rss_mb']:.0f} | | |",
        f"| vaultmem cold reindex | {s['cold_s']:.3f} | {s['cold_notes_per_s']:,.0f} | "
        f"{s['cold_peak_rss_mb']:.0f} (max {s['cold_peak_rss_mb_max']:.0f}) | "
        f"{s['cold_wall_s']:.3f} | "
        f"{tgt('cold_notes_per_s')}; {tgt('cold_peak_rss_mb')} |",
        f"| vaultmem no-op reindex | {s['noop_s']:.3f} | | | {s['noop_wall_s']:.3f} | "
        f"{tgt('noop_s')} |",
        f"| vaultmem reindex after 1 edit | {s['edit_s']:.3f} | | | {s['edit_wall_s']:.3f} | "
        f"{tgt('edit_s')} |",
    ]
    head = (f"### {name}: {s['files']:,} .md files, {s['bytes'] / 1e6:.2f} MB, "
            f"{s['notes']:,} notes indexed; index {s['index_mb']:.1f} MB; "
            f"vaultmem import {s['import_s']:.2f}s\n")
    return head + "\n" + "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--datasets", default="mdn,kepano")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR,
                    help="where MDN is (or gets) extracted; the vault is DIR/files "
                    f"(default {DEFAULT_MDN_DIR})")
    args = ap.parse_args()
    code = snapshot_code()
    machine = machine_info()
    WORK.mkdir(parents=True, exist_ok=True)
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        root, edit = prepare(name, args.mdn_dir)
        original = edit.read_bytes()
        runs = []
        try:
            for run in range(1, args.runs + 1):
                with tempfile.TemporaryDirectory(prefix=f"reindex-{name}-", dir=WORK) as tmp:
                    r = one_run(run, root, edit, Path(tmp))
                runs.append(r)
                print(f"[{name} run {run}/{args.runs}] cold {r['cold']['seconds']:.2f}s "
                      f"({r['cold']['notes_per_s']:.0f} notes/s, "
                      f"{r['cold']['peak_rss_mb']:.0f} MB) "
                      f"noop {r['noop']['seconds']:.3f}s edit {r['edit']['seconds']:.3f}s "
                      f"baseline {r['baseline']['seconds']:.2f}s "
                      f"floor {r['floor']['seconds']:.2f}s "
                      f"walk+stat {r['walkstat']['seconds']:.2f}s",
                      file=sys.stderr, flush=True)
        finally:
            edit.write_bytes(original)  # leave the private copy as extracted
        summary = summarise(runs)
        targets = name == "mdn"
        if targets:
            summary["targets"] = {m: {"target": f"{op} {lim:g}", "value": summary[m],
                                      "met": verdict(m, summary[m]) == "met"}
                                  for m, (op, lim) in TARGETS.items()}
        out = write_json(f"reindex-{name}.json", {
            "dataset": name, "vault": str(root), "edited_note": str(edit.relative_to(root)),
            "runs": args.runs, "machine": machine, "code": code,
            "summary": summary, "raw": runs,
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        })
        print(table(name, summary, targets))
        print(f"\n(median of {args.runs} runs; JSON: {out.relative_to(ROOT)})\n")


if __name__ == "__main__":
    main()
