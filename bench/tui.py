r"""The TUI over the 14k MDN pages: first screen, keystroke to results, opening a note, idle memory.

    .venv/bin/python bench/tui.py [--runs 3] [--mdn-dir DIR]

Each run is a fresh child process (this script with --child) that starts the real app headless
through Textual's Pilot at 100x30, with the file watcher and the background vector load on, as
`vaultmem tui` runs:

- first screen: from the child's first line (before any import) to the search screen mounted
  and idle; also from the parent's spawn of the process (interpreter start-up included);
- idle: once the vector load and the start-up refresh are done, RSS (VmRSS) and the CPU time the
  process uses over 3 s of doing nothing (the watcher must not poll);
- keystrokes: 20 fixed queries typed one key at a time; for each key, the time from the press
  to the screen's repaint after the hit list took that exact query's results (hybrid, no
  HyDE; the screen records the moment in an after-refresh callback, so Pilot's own idle
  waiting is not counted); the next key waits for it;
- opening a note: `open_note(path)` for the top hit of each query, until the repaint after its
  first screenful of markdown is mounted (the rest is appended after), and until the side
  panel with links and backlinks is filled.

Baselines in the same child: the same prefixes through `Vault.search` alone (the core, no UI),
and in the parent: `vaultmem search QUERY` as a process per full query (what the CLI costs).
The index is a private copy under $VAULTMEM_BENCH_TMP/tui-mdn (copied from the search bench's
index when there is one, else built), brought up to date before the runs.
Writes bench/results/tui.json.
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()  # before any import: the first-screen clock starts here

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUERIES = [
    "array map", "flexbox", "fetch request", "css grid", "promise all", "event listener",
    "local storage", "web workers", "canvas drawimage", "svg path", "http cache", "cors",
    "websocket", "intersection observer", "border radius", "regexp", "date format",
    "service worker", "media queries", "async await",
]  # fmt: skip
TARGETS = {"first_screen_s": 1.5, "keystroke_p95_ms": 100.0, "open_note_ms": 100.0}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(root: Path, index: Path, queries: list[str]) -> None:
    from vaultmem.tui.app import VaultmemApp
    from vaultmem.tui.screens.note import NoteScreen
    from vaultmem.tui.screens.search import SearchScreen
    from vaultmem.vault import Vault

    async def run() -> dict[str, object]:
        app = VaultmemApp(Vault(root, index))
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, SearchScreen)
            ready_s = time.perf_counter() - _STARTED
            ready_epoch = time.time()
            rss_ready = rss_mb()
            while app.warming is None or app.freshness is None:  # the background start
                await asyncio.sleep(0.05)
            await asyncio.to_thread(app.warming.join)
            while app.freshness.pending or app.reindexing:  # the start-up refresh
                await asyncio.sleep(0.05)
            await app.workers.wait_for_complete()
            await asyncio.sleep(2)
            cpu0, wall0 = os.times(), time.perf_counter()
            await asyncio.sleep(3)
            cpu1, wall1 = os.times(), time.perf_counter()
            idle_cpu = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / (wall1 - wall0)
            rss_idle = rss_mb()

            screen = app.screen
            field = screen.query_one("#query")
            keys_ms: list[float] = []
            prefixes: list[str] = []
            top: list[str] = []
            for query in queries:
                field.value = ""  # type: ignore[attr-defined]
                await pilot.pause()
                for i, char in enumerate(query):
                    prefix = query[: i + 1]
                    started = time.perf_counter()
                    await pilot.press("space" if char == " " else char)
                    if not prefix.strip():
                        continue
                    # painted: the screen's own record of when this query's hits were painted
                    while screen.painted is None or screen.painted[0] != prefix:
                        await asyncio.sleep(0.0005)
                    keys_ms.append((screen.painted[1] - started) * 1000)
                    prefixes.append(prefix)
                await asyncio.sleep(0.3)  # a person reads the hits: the preview renders
                await app.workers.wait_for_complete()
                await pilot.pause()
                hits = screen.last_result.hits
                if hits:
                    top.append(hits[0].path)

            open_ms: list[float] = []
            panel_ms: list[float] = []
            for path in top:
                started = time.perf_counter()
                app.open_note(path)
                note = app.screen
                # painted_path: the first screenful of markdown mounted, laid out and painted
                while not (isinstance(note, NoteScreen) and note.painted_path == path):
                    await asyncio.sleep(0.0005)
                    note = app.screen
                open_ms.append((note.painted_at - started) * 1000)
                while note.info is None or note.info.path != path:
                    await asyncio.sleep(0.0005)
                panel_ms.append((time.perf_counter() - started) * 1000)
                await app.workers.wait_for_complete()  # the rest of the note, appended
                await pilot.press("escape")
                await pilot.pause()

            core_ms: list[float] = []
            for prefix in prefixes:
                started = time.perf_counter()
                app.vault.search(prefix, limit=20)
                core_ms.append((time.perf_counter() - started) * 1000)
        return {
            "ready_s": ready_s,
            "ready_epoch": ready_epoch,
            "rss_ready_mb": rss_ready,
            "rss_idle_mb": rss_idle,
            "idle_cpu_fraction": idle_cpu,
            "keystroke_ms": keys_ms,
            "core_search_ms": core_ms,
            "open_note_ms": open_ms,
            "panel_ms": panel_ms,
            "notes_opened": top,
        }

    print(json.dumps(asyncio.run(run())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", nargs=2, metavar=("ROOT", "INDEX"), help=argparse.SUPPRESS)
    ap.add_argument("--queries", type=int, default=len(QUERIES), help="how many of the queries")
    ap.add_argument("--cli-queries", type=int, default=10, help="CLI baseline processes")
    ap.add_argument("--mdn-dir", type=Path, help="where MDN is extracted (default: the benches')")
    args = ap.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), QUERIES[: args.queries])
        return

    from _common import (
        DEFAULT_MDN_DIR,
        PYTHON,
        WORK,
        ensure_mdn,
        machine_info,
        median,
        percentile,
        snapshot_code,
        write_json,
    )

    code = snapshot_code()
    from vaultmem.vault import Vault

    root = ensure_mdn(args.mdn_dir or DEFAULT_MDN_DIR)
    work = WORK / "tui-mdn"
    work.mkdir(parents=True, exist_ok=True)
    index = work / "index.db"
    source = WORK / "search-mdn" / "index.db"
    if not index.exists() and source.exists():
        print(f"copying the index from {source} …", file=sys.stderr, flush=True)
        shutil.copyfile(source, index)
    started = time.perf_counter()
    try:
        report = Vault(root, index).reindex()
    except Exception as exc:  # an index from another schema: start over
        print(f"reindex failed ({exc}); rebuilding", file=sys.stderr)
        report = Vault(root, index).reindex(full=True)
    print(f"index: {report.summary()} ({time.perf_counter() - started:.1f}s)", file=sys.stderr)

    runs = []
    for n in range(args.runs):
        spawned = time.time()
        out = subprocess.run(
            [PYTHON, __file__, "--child", str(root), str(index), "--queries", str(args.queries)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            sys.exit(f"child failed:\n{out.stderr[-4000:]}")
        data = json.loads(out.stdout.strip().splitlines()[-1])
        data["ready_from_spawn_s"] = data["ready_epoch"] - spawned
        keys = data["keystroke_ms"]
        print(
            f"run {n + 1}: ready {data['ready_s']:.2f}s ({data['ready_from_spawn_s']:.2f}s from "
            f"spawn), keystroke p50 {percentile(keys, 50):.0f} p95 {percentile(keys, 95):.0f} ms, "
            f"open p95 {percentile(data['open_note_ms'], 95):.0f} ms, idle RSS "
            f"{data['rss_idle_mb']:.0f} MB, idle CPU {data['idle_cpu_fraction']:.1%}",
            file=sys.stderr,
            flush=True,
        )
        runs.append(data)

    cli_ms = []
    for query in QUERIES[: args.cli_queries]:
        t = time.perf_counter()
        subprocess.run(
            [PYTHON, "-m", "vaultmem", "--vault", str(root), "--index", str(index), "search",
             query, "--limit", "20"],
            capture_output=True, check=True,
        )  # fmt: skip
        cli_ms.append((time.perf_counter() - t) * 1000)

    def per_run(key: str, p: float) -> float:
        return median([percentile(r[key], p) for r in runs])

    summary = {
        "first_screen_s": median([r["ready_s"] for r in runs]),
        "first_screen_from_spawn_s": median([r["ready_from_spawn_s"] for r in runs]),
        "keystroke_p50_ms": per_run("keystroke_ms", 50),
        "keystroke_p95_ms": per_run("keystroke_ms", 95),
        "keystroke_max_ms": median([max(r["keystroke_ms"]) for r in runs]),
        "core_search_p50_ms": per_run("core_search_ms", 50),
        "core_search_p95_ms": per_run("core_search_ms", 95),
        "open_note_p50_ms": per_run("open_note_ms", 50),
        "open_note_p95_ms": per_run("open_note_ms", 95),
        "open_note_with_panel_p95_ms": per_run("panel_ms", 95),
        "rss_ready_mb": median([r["rss_ready_mb"] for r in runs]),
        "rss_idle_mb": median([r["rss_idle_mb"] for r in runs]),
        "idle_cpu_fraction": median([r["idle_cpu_fraction"] for r in runs]),
        "cli_search_process_median_ms": median(cli_ms),
    }
    for key, value in summary.items():
        print(f"{key:32} {value:.3f}", file=sys.stderr)
    path = write_json(
        "tui.json",
        {
            "dataset": "mdn",
            "notes": report.notes,
            "runs": args.runs,
            "queries": QUERIES[: args.queries],
            "keystrokes_per_run": len(runs[0]["keystroke_ms"]),
            "terminal": "100x30, headless Pilot",
            "targets": TARGETS,
            "summary": summary,
            "cli_search_ms": cli_ms,
            "per_run": [{k: v for k, v in r.items() if k not in ("ready_epoch",)} for r in runs],
            "machine": machine_info(),
            "code": code,
        },
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
