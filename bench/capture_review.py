r"""The review queue with 500 pending items: reading it, and the TUI's review screen opening.

    nice .venv/bin/python bench/capture_review.py [--items 500] [--runs 5]

A temporary vault gets capture notes holding `--items` pending items in all (50 per note,
rendered by `vaultmem.capture.note.render` as `capture` writes them). Timed, median of
`--runs`: `vault.captures.pending()` (every capture note read from disk and parsed), and the
review screen from the F6 key press until its table shows every row (Textual's Pilot, headless,
80x24). Baseline in the same run: the browse screen opening from its key (F3), the same way.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultmem.capture.candidates import Candidate  # noqa: E402
from vaultmem.capture.note import Header, render  # noqa: E402
from vaultmem.tui.app import VaultmemApp  # noqa: E402
from vaultmem.tui.screens.review import ReviewScreen  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "capture-review.json"
PER_NOTE = 50


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


async def open_screen(vault: Vault, items: int) -> tuple[float, float]:
    """(the browse screen's opening, the review screen's), each from its key press."""
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("f3")
        while type(app.screen).__name__ != "BrowseScreen":
            await asyncio.sleep(0.002)
        browse = time.perf_counter() - started
        await pilot.press("f2")
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("f6")
        while not (isinstance(app.screen, ReviewScreen) and len(app.screen.rows) == items):
            await asyncio.sleep(0.002)
        opened = time.perf_counter() - started
    return browse, opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="capture-review-"))
    try:
        vault = make_vault(tmp / "vault", args.items)
        reads, paints, opens = [], [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            pending = vault.captures.pending()
            reads.append(time.perf_counter() - started)
            assert sum(len(n.pending) for n in pending) == args.items
            paint, opened = asyncio.run(open_screen(vault, args.items))
            paints.append(paint)
            opens.append(opened)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "items": args.items,
        "runs": args.runs,
        "pending_read_median_ms": round(statistics.median(reads) * 1000, 1),
        "review_screen_open_median_ms": round(statistics.median(opens) * 1000, 1),
        "browse_screen_open_median_ms": round(statistics.median(paints) * 1000, 1),
        "load": load,
        "load_after": os.getloadavg(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
