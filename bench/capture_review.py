r"""The review queue with 500 pending items: reading it, and the TUI's review screen opening.

    .venv/bin/python bench/capture_review.py [--items 500] [--apps 3] [--reopens 3]

A temporary vault gets capture notes holding `--items` pending items in all (50 per note,
rendered by `vaultmem.capture.note.render` as `capture` writes them), indexed. Timed:

- `vault.captures.pending()`: the queue as the CLI reads it: the first read parses every
  capture note, the next ones (median of 4) only stat them.
- The review screen in a warm running app: Textual's Pilot, headless, 80x24; the app is
  started, its index open and its background loading finished before anything is timed. From
  the F6 key press until the screen's table holds every one of the `--items` rows (`rows`),
  and until the next repaint after that (`painted`, an after-refresh callback); the CPU time
  of the whole process (every thread) over the same span. Twice per app: the first opening
  (the screen is composed) and re-openings (F2, then F6 again: the screen is resumed and
  reads the inbox again), `--reopens` times.
- Baselines in the same app, measured the same way: the browse screen from F3 until its
  folder tree is filled and painted; and a key bound to nothing (F12) until the next paint,
  the floor the Pilot harness itself adds to every figure.

Each of `--apps` runs is a fresh app over a fresh `Vault` in this process (nothing read or
parsed before it starts); medians over all of them.
Writes bench/results/capture-review.json.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.pilot import Pilot  # noqa: E402

from vaultmem.capture.candidates import Candidate  # noqa: E402
from vaultmem.capture.note import Header, render  # noqa: E402
from vaultmem.tui.app import VaultmemApp  # noqa: E402
from vaultmem.tui.screens.browse import BrowseScreen  # noqa: E402
from vaultmem.tui.screens.review import ReviewScreen  # noqa: E402
from vaultmem.tui.widgets.row_table import RowTable  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "capture-review.json"
PER_NOTE = 50
DEADLINE = 60.0  # seconds: a screen that never fills is a failure, not a hang


def make_vault(root: Path, items: int) -> Vault:
    (root / ".obsidian").mkdir(parents=True)
    (root / "inbox").mkdir()
    (root / "Maya.md").write_text("# Maya\n\n## Facts\n- role:: CEO ^f-0001\n", encoding="utf-8")
    for n in range(0, items, PER_NOTE):
        header = Header(
            f"chat {n}", dt.datetime(2026, 12, 1, tzinfo=dt.UTC), f"{n:064x}", "heuristic"
        )
        candidates = [
            Candidate(f"c-{n + i:06x}", "fact", "Maya", f"key {i}", f"value number {n + i}",
                      f"I said value number {n + i}.", str(i + 1), 0.5 + (i % 5) / 10)
            for i in range(min(PER_NOTE, items - n))
        ]  # fmt: skip
        (root / "inbox" / f"2026-12-01 chat {n}.md").write_text(render(header, candidates), "utf-8")
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.reindex()
    return vault


@dataclass
class Opening:
    """One screen opening: seconds from the key press to the rows, to the paint, CPU seconds."""

    rows: float
    painted: float
    cpu: float


async def timed(pilot: Pilot[None], key: str, ready: Callable[[], bool]) -> Opening:
    """Press `key`, wait until `ready()`, then for the next repaint."""
    app = pilot.app
    painted: list[float] = []
    cpu0 = time.process_time()
    started = time.perf_counter()
    await pilot.press(key)
    while not ready():
        if time.perf_counter() - started > DEADLINE:
            raise SystemExit(f"{key}: the screen was not ready after {DEADLINE} s")
        await asyncio.sleep(0.0005)
    rows = time.perf_counter() - started
    app.call_after_refresh(lambda: painted.append(time.perf_counter()))
    while not painted:
        await asyncio.sleep(0.0005)
    cpu = time.process_time() - cpu0
    return Opening(rows, painted[0] - started, cpu)


async def back_to_search(pilot: Pilot[None]) -> None:
    await pilot.press("f2")
    while type(pilot.app.screen).__name__ != "SearchScreen":
        await asyncio.sleep(0.002)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def one_app(vault: Vault, items: int, reopens: int) -> dict[str, list[Opening]]:
    """The browse and review screens opened in one warm app: first, then re-opened."""
    app = VaultmemApp(vault, live=False)
    out: dict[str, list[Opening]] = {
        "review_first": [], "review_again": [], "browse_first": [], "browse_again": [],
        "no_op_key": [],
    }  # fmt: skip

    def browse_ready() -> bool:
        screen = app.screen
        return isinstance(screen, BrowseScreen) and screen.catalogue is not None

    def review_ready() -> bool:
        screen = app.screen
        return (
            isinstance(screen, ReviewScreen)
            and screen.loaded
            and screen.query_one("#review-table", RowTable).row_count == items
        )

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        while app.warming is None:  # the background start (vectors into memory)
            await asyncio.sleep(0.01)
        await asyncio.to_thread(app.warming.join)
        await app.workers.wait_for_complete()
        await pilot.pause()
        for _ in range(reopens):  # the harness's floor: a key bound to nothing (Pilot's waits)
            out["no_op_key"].append(await timed(pilot, "f12", lambda: True))
        for n in range(reopens + 1):
            when = "first" if n == 0 else "again"
            out[f"browse_{when}"].append(await timed(pilot, "f3", browse_ready))
            await back_to_search(pilot)
            out[f"review_{when}"].append(await timed(pilot, "f6", review_ready))
            await back_to_search(pilot)
    return out


def summary(openings: list[Opening]) -> dict[str, float]:
    return {
        "rows_median_ms": round(statistics.median(o.rows for o in openings) * 1000, 1),
        "painted_median_ms": round(statistics.median(o.painted for o in openings) * 1000, 1),
        "painted_max_ms": round(max(o.painted for o in openings) * 1000, 1),
        "cpu_median_ms": round(statistics.median(o.cpu for o in openings) * 1000, 1),
        "n": len(openings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--apps", type=int, default=3, help="fresh apps, one after the other")
    parser.add_argument("--reopens", type=int, default=3, help="re-openings per app")
    args = parser.parse_args()
    load = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="capture-review-"))
    try:
        vault = make_vault(tmp / "vault", args.items)
        reads = []  # the first read parses every capture note; the next ones stat them
        for _ in range(5):
            started = time.perf_counter()
            pending = vault.captures.pending()
            reads.append(time.perf_counter() - started)
            assert sum(len(n.pending) for n in pending) == args.items
        openings: dict[str, list[Opening]] = {}
        for _ in range(args.apps):
            fresh = Vault(vault.root)  # as `vaultmem tui` starts: nothing read or parsed yet
            fresh.embedder_spec = "fake"
            for name, found in asyncio.run(one_app(fresh, args.items, args.reopens)).items():
                openings.setdefault(name, []).extend(found)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "items": args.items,
        "apps": args.apps,
        "reopens": args.reopens,
        "size": "80x24",
        "pending_read_first_ms": round(reads[0] * 1000, 1),
        "pending_read_again_median_ms": round(statistics.median(reads[1:]) * 1000, 1),
        **{name: summary(found) for name, found in openings.items()},
        "load": load,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
