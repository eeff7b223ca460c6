"""Write benchmark: a fact-sized edit (one line of one note changed) through `vault.apply`, the
write and its reindex included, on the 14k MDN pages; baseline in the same run: the same edit
written, then a plain incremental reindex (what every front-end ran after a write before).

    nice .venv/bin/python bench/edit.py [--runs 9] [--mdn-dir DIR] [--note PATH]...

The vault is a private copy of MDN (extracted once into --mdn-dir, default
$VAULTMEM_BENCH_TMP/mdn); the index is built once (text only, as `reindex --no-embed`) and
reused. For each note (by default the median MDN page, one at the 90th percentile of size, and
a 49 KB page), one line of prose is changed:
  apply warm     read_for_edit + plan_edit + vault.apply (lock, atomic write, path-limited
                 reindex), writes in a row as a long-running front-end makes them
  apply cold     the same right after a whole reindex (the resolver's file set built again)
  baseline       read_for_edit + plan_edit + edit.write, then vault.reindex(embed=False)
  cli_reindex    (fewer runs) the `vaultmem reindex --no-embed` process after the same edit
Wall and CPU time (of this process) are both kept: on a loaded machine CPU time says what the
work costs. Every apply is checked: the index must find the new line. Writes
bench/results/edit-mdn.json and prints a markdown table; the machine's load is recorded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    PYTHON,
    ROOT,
    ensure_mdn,
    machine_info,
    median,
    snapshot_code,
    write_json,
)

# vaultmem is imported in main(), after snapshot_code() put a frozen copy first on the path
if TYPE_CHECKING:
    from vaultmem import edit
    from vaultmem.vault import Applied, Vault

# the median MDN page (2.3 KB), one at the 90th percentile (9.9 KB), and the 49 KB page
# bench/reindex.py edits
MDN_NOTES = (
    "en-us/web/api/audioparammap/index.md",
    "en-us/web/javascript/reference/global_objects/array/map/index.md",
    "en-us/web/javascript/reference/global_objects/array/index.md",
)
TARGET_S = 0.050


def fact_line(lines: edit.Lines) -> int:
    """A line of prose near the middle of the note (no heading, list, table or code; without a
    link when there is such a line): the line a fact edit changes."""
    body = 0  # the first line after the front matter
    if lines and lines[0].text == "---":
        body = next((i + 1 for i in range(1, len(lines)) if lines[i].text == "---"), 0)
    middle = (body + len(lines)) // 2
    order = sorted(range(body, len(lines)), key=lambda i: abs(i - middle))
    prose = [
        i
        for i in order
        if len(lines[i].text) > 20
        and not lines[i].text.startswith(("#", "-", "*", "|", ">", "`", " ", "---"))
    ]
    plain = [i for i in prose if "[" not in lines[i].text and "{{" not in lines[i].text]
    if not prose:
        raise SystemExit("no line of prose to edit in the note")
    return (plain or prose)[0] + 1


def one_edit(vault: Vault, note: str, number: int, tag: str) -> edit.Change:
    source = vault.read_for_edit(note)
    text = source.lines[number - 1].text
    stem = text.split(" [bench ", 1)[0]
    return edit.plan_edit(source, edit.replace_line(source.lines, number, f"{stem} [bench {tag}]"))


def timed(call: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call: on a loaded machine the CPU
    time says what the work costs, the wall time what a person waits."""
    w, c = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - w, time.process_time() - c


def apply_once(vault: Vault, note: str, number: int) -> tuple[float, float, float]:
    tag = f"a{uuid.uuid4().hex}"  # one search token
    out: dict[str, Applied] = {}

    def go() -> None:
        out["a"] = vault.apply(one_edit(vault, note, number, tag), embed=False)

    wall, cpu = timed(go)
    applied = out["a"]
    assert applied.report is not None and applied.report.changed == 1, applied
    hits = vault.search(tag, mode="keyword").hits
    assert [h.path for h in hits] == [note], "the index does not have the edit"
    return wall, cpu, applied.report.seconds


def measure(vault: Vault, root: Path, note: str, runs: int) -> dict[str, Any]:
    """Warm applies in a row (as a long-running front-end makes them: the resolver's file set
    is kept between writes), then rounds of baseline (the same write, then the incremental
    reindex) each followed by an apply right after that reindex (its file set to build again)."""
    number = fact_line(vault.read_for_edit(note).lines)
    warm = [apply_once(vault, note, number) for _ in range(runs)]
    base: list[tuple[float, float]] = []
    cold: list[tuple[float, float, float]] = []
    for _ in range(runs):
        change = one_edit(vault, note, number, f"b{uuid.uuid4().hex}")

        def baseline(change: edit.Change = change) -> None:
            edit.write(root, change)
            assert vault.reindex(embed=False).changed == 1

        base.append(timed(baseline))
        cold.append(apply_once(vault, note, number))
    size = (root / note).stat().st_size
    row = {
        "note": note,
        "bytes": size,
        "line": number,
        "apply_warm_ms": median([w for w, _, _ in warm]) * 1000,
        "apply_warm_cpu_ms": median([c for _, c, _ in warm]) * 1000,
        "apply_warm_reindex_ms": median([r for _, _, r in warm]) * 1000,
        "apply_cold_ms": median([w for w, _, _ in cold]) * 1000,
        "apply_cold_cpu_ms": median([c for _, c, _ in cold]) * 1000,
        "baseline_ms": median([w for w, _ in base]) * 1000,
        "baseline_cpu_ms": median([c for _, c in base]) * 1000,
        "raw": {"warm": warm, "cold": cold, "baseline": base},
    }
    print(
        f"{note} ({size:,} bytes): apply warm {row['apply_warm_ms']:.1f} ms"
        f" (cpu {row['apply_warm_cpu_ms']:.1f}), after a reindex {row['apply_cold_ms']:.1f} ms;"
        f" baseline {row['baseline_ms']:.1f} ms (cpu {row['baseline_cpu_ms']:.1f})",
        file=sys.stderr,
        flush=True,
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--note", action="append", help="vault path of a note to edit (repeatable)")
    args = ap.parse_args()
    notes = args.note or list(MDN_NOTES)
    root = ensure_mdn(args.mdn_dir)
    index = args.mdn_dir / "edit-index.db"
    originals = {n: (root / n).read_bytes() for n in notes}
    code = snapshot_code()
    global edit, Vault, Applied
    from vaultmem import edit
    from vaultmem.vault import Applied, Vault

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
    rows: list[dict[str, Any]] = []
    cli_s: list[float] = []
    try:
        for note in notes:
            rows.append(measure(vault, root, note, args.runs))
        for run in range(args.cli_runs):
            edit.write(
                root, one_edit(vault, notes[0], rows[0]["line"], f"c{run}x{uuid.uuid4().hex}")
            )
            t0 = time.perf_counter()
            subprocess.run(
                [PYTHON, "-m", "vaultmem", "--vault", str(root), "--index", str(index), "reindex",
                 "--no-embed"],
                check=True, capture_output=True, cwd=ROOT,
            )  # fmt: skip
            cli_s.append(time.perf_counter() - t0)
    finally:
        vault.close()
        for note, data in originals.items():
            (root / note).write_bytes(data)
        Vault(root, index).reindex(embed=False)  # leave the index matching the copy
    load_after = os.getloadavg()
    summary = {
        "notes": report.notes,
        "cli_reindex_wall_ms": median(cli_s) * 1000 if cli_s else None,
        "target_ms": TARGET_S * 1000,
        "load_before": load_before,
        "load_after": load_after,
    }
    out = write_json(
        "edit-mdn.json",
        {
            "dataset": "mdn",
            "vault": str(root),
            "runs": args.runs,
            "machine": machine,
            "code": code,
            "summary": summary,
            "notes": rows,
            "cli_s": cli_s,
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
    )
    print(f"### MDN: {report.notes:,} notes; one line of one note changed; median of {args.runs}\n")
    print(
        "| note (bytes) | `vault.apply` warm ms (CPU ms) | of which reindex ms |"
        " `vault.apply` after a reindex ms (CPU ms) | baseline: write + incremental reindex ms"
        " (CPU ms) | target 50 ms |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        met = "met" if r["apply_warm_ms"] <= TARGET_S * 1000 else "NOT met"
        print(
            f"| `{r['note'].split('/global_objects/')[-1].split('/web/')[-1]}` ({r['bytes']:,})"
            f" | {r['apply_warm_ms']:.1f} ({r['apply_warm_cpu_ms']:.1f})"
            f" | {r['apply_warm_reindex_ms']:.1f}"
            f" | {r['apply_cold_ms']:.1f} ({r['apply_cold_cpu_ms']:.1f})"
            f" | {r['baseline_ms']:.1f} ({r['baseline_cpu_ms']:.1f}) | {met} |"
        )
    if cli_s:
        print(
            "\n`vaultmem reindex --no-embed` process after the edit:"
            f" {median(cli_s) * 1000:.0f} ms wall"
        )
    print(
        f"\nload {load_before[0]:.1f} before, {load_after[0]:.1f} after (1-min avg,"
        f" {os.cpu_count()} cores); JSON: {out.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main()
