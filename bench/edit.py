"""Write benchmark: a fact-sized edit (one line of one note changed) through `vault.apply`, the
write and its reindex included, on the 14k MDN pages; baseline in the same run: the same edit
written, then a plain incremental reindex (what every front-end ran after a write before).

    .venv/bin/python bench/edit.py [--runs 15] [--mdn-dir DIR] [--note PATH]

The vault is a private copy of MDN (extracted once into --mdn-dir, default
$VAULTMEM_BENCH_TMP/mdn); the index is built once (text only, as `reindex --no-embed`) and
reused. Each run alternates the two ways over the same note so load drifts hit both alike:
  apply        read_for_edit + plan_edit + vault.apply (lock, atomic write, path-limited reindex)
  baseline     read_for_edit + plan_edit + edit.write, then vault.reindex(embed=False)
  cli_reindex  (fewer runs) the `vaultmem reindex --no-embed` process after the same edit (wall)
Every apply is checked: the index must find the new line. Writes bench/results/edit-mdn.json and
prints a markdown table. Run it with `nice`; the machine's load is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    PYTHON,
    ROOT,
    ensure_mdn,
    machine_info,
    median,
    percentile,
    snapshot_code,
    write_json,
)

from vaultmem import edit
from vaultmem.vault import Vault

MDN_NOTE = "en-us/web/javascript/reference/global_objects/array/index.md"
TARGET_S = 0.050


def fact_line(lines: edit.Lines) -> int:
    """A line of plain prose in the middle of the note (no link, heading or list): the line a
    fact edit changes."""
    middle = len(lines) // 2
    order = sorted(range(len(lines)), key=lambda i: abs(i - middle))
    for i in order:
        text = lines[i].text
        if (
            len(text) > 40
            and not text.startswith(("#", "-", "*", "|", ">", "`", " "))
            and ("[" not in text and "{{" not in text)
        ):
            return i + 1
    raise SystemExit("no plain line to edit in the note")


def one_edit(vault: Vault, note: str, number: int, tag: str) -> edit.Change:
    source = vault.read_for_edit(note)
    text = source.lines[number - 1].text
    stem = text.split(" [bench ", 1)[0]
    return edit.plan_edit(source, edit.replace_line(source.lines, number, f"{stem} [bench {tag}]"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--note", default=MDN_NOTE)
    args = ap.parse_args()
    root = ensure_mdn(args.mdn_dir)
    index = args.mdn_dir / "edit-index.db"
    note_file = root / args.note
    original = note_file.read_bytes()
    code = snapshot_code()
    machine = machine_info()
    load_before = os.getloadavg()
    vault = Vault(root, index)
    started = time.perf_counter()
    report = vault.reindex(embed=False, wait=600)  # cold the first time, else a catch-up
    print(
        f"index ready: {report.summary()} ({time.perf_counter() - started:.1f}s)",
        file=sys.stderr,
        flush=True,
    )
    number = fact_line(vault.read_for_edit(args.note).lines)
    apply_s: list[float] = []
    apply_reindex_s: list[float] = []
    baseline_s: list[float] = []
    baseline_reindex_s: list[float] = []
    cli_s: list[float] = []
    try:
        for run in range(args.runs):
            tag = f"{run}-{time.time_ns()}"
            # apply: everything a front-end calls for one fact
            t0 = time.perf_counter()
            applied = vault.apply(one_edit(vault, args.note, number, f"a{tag}"), embed=False)
            apply_s.append(time.perf_counter() - t0)
            assert applied.report is not None and applied.report.changed == 1, applied
            apply_reindex_s.append(applied.report.seconds)
            hits = vault.search(f"a{tag}", mode="keyword").hits
            assert [h.path for h in hits] == [args.note], "the index does not have the edit"
            # baseline: the same edit written, then the whole incremental reindex
            t0 = time.perf_counter()
            edit.write(root, one_edit(vault, args.note, number, f"b{tag}"))
            t1 = time.perf_counter()
            full = vault.reindex(embed=False)
            baseline_s.append(time.perf_counter() - t0)
            baseline_reindex_s.append(time.perf_counter() - t1)
            assert full.changed == 1, full
            print(
                f"[run {run + 1}/{args.runs}] apply {apply_s[-1] * 1000:.1f} ms "
                f"(reindex {apply_reindex_s[-1] * 1000:.1f}) | baseline "
                f"{baseline_s[-1] * 1000:.1f} ms (reindex {baseline_reindex_s[-1] * 1000:.1f})",
                file=sys.stderr,
                flush=True,
            )
        for run in range(args.cli_runs):
            edit.write(root, one_edit(vault, args.note, number, f"c{run}-{time.time_ns()}"))
            t0 = time.perf_counter()
            subprocess.run(
                [
                    PYTHON,
                    "-m",
                    "vaultmem",
                    "--vault",
                    str(root),
                    "--index",
                    str(index),
                    "reindex",
                    "--no-embed",
                ],
                check=True,
                capture_output=True,
                cwd=ROOT,
            )
            cli_s.append(time.perf_counter() - t0)
    finally:
        vault.close()
        note_file.write_bytes(original)
        Vault(root, index).reindex(embed=False)  # leave the index matching the copy
    load_after = os.getloadavg()
    summary = {
        "apply_ms": median(apply_s) * 1000,
        "apply_p90_ms": percentile(apply_s, 90) * 1000,
        "apply_reindex_ms": median(apply_reindex_s) * 1000,
        "baseline_ms": median(baseline_s) * 1000,
        "baseline_reindex_ms": median(baseline_reindex_s) * 1000,
        "cli_reindex_wall_ms": median(cli_s) * 1000 if cli_s else None,
        "speedup": median(baseline_s) / median(apply_s),
        "target_ms": TARGET_S * 1000,
        "met": median(apply_s) <= TARGET_S,
        "notes": report.notes,
        "load_before": load_before,
        "load_after": load_after,
    }
    out = write_json(
        "edit-mdn.json",
        {
            "dataset": "mdn",
            "vault": str(root),
            "note": args.note,
            "line": number,
            "runs": args.runs,
            "machine": machine,
            "code": code,
            "summary": summary,
            "raw": {
                "apply_s": apply_s,
                "apply_reindex_s": apply_reindex_s,
                "baseline_s": baseline_s,
                "baseline_reindex_s": baseline_reindex_s,
                "cli_s": cli_s,
            },
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
    )
    s = summary
    print(f"### MDN: {s['notes']:,} notes; one line of `{args.note}` changed, {args.runs} runs\n")
    print("| way | median ms | p90 ms | of which reindex ms |")
    print("|---|---:|---:|---:|")
    print(
        f"| `vault.apply` (read, plan, lock, write, path-limited reindex) | {s['apply_ms']:.1f}"
        f" | {s['apply_p90_ms']:.1f} | {s['apply_reindex_ms']:.1f} |"
    )
    print(
        f"| baseline: same write, then incremental `vault.reindex()` | {s['baseline_ms']:.1f}"
        f" | | {s['baseline_reindex_ms']:.1f} |"
    )
    if cli_s:
        print(
            f"| baseline: `vaultmem reindex --no-embed` process (wall) |"
            f" {s['cli_reindex_wall_ms']:.0f} | | |"
        )
    print(
        f"\ntarget <= {TARGET_S * 1000:.0f} ms: {'met' if s['met'] else 'NOT met'}; "
        f"{s['speedup']:.1f}x the baseline; load {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after (1-min avg, {os.cpu_count()} cores)"
    )
    print(f"(JSON: {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
