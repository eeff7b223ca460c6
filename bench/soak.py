r"""Soak: the MCP server and the TUI's core under mixed queries while the vault churns (issue 15).

    nice .venv/bin/python bench/soak.py [--minutes 30] [--notes 400] [--out soak.json]

For --minutes, all at once against one vault (a copy of sample-vault plus --notes generated
notes linking each other, in $VAULTMEM_BENCH_TMP/soak, default /tmp/vaultmem-bench):

  - `vaultmem mcp` over stdio (the MCP SDK's client): `search` (hybrid and keyword),
    `read_note`, `backlinks`, `neighbors`, one after another, no pause;
  - the TUI's core in this process, as the app drives it (no Textual): a `Vault` with its
    vectors in memory and a `Freshness` watcher that reindexes what changed, a thread
    searching, reading notes and backlinks and the status line's stats;
  - an editor thread: every 0.2 s it edits a note (a line appended, a link added), renames,
    deletes or creates one (only "churn/" notes are renamed or deleted; the notes the
    readers ask for by name stay, so a "no such note" is never expected);
  - a reindexer: `vaultmem reindex` every 10 s, `reindex --full` every fifth time (CLI
    processes, racing the watcher's own reindexes and the server's).

Counted as an error: a tool answering with an error, an exception in the core thread, a
reindex exiting non-zero, a call that takes over 60 s. Every 15 s it samples the server's
and this process's resident memory and open file descriptors, and the latency (p50, p99) of
the calls since the last sample. Writes bench/results/OUT (JSON) and prints a table.

`tests/test_soak.py` runs it for a few seconds (marked `soak`) to keep it working; the
30-minute run is this script, by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, WORK, machine_info, percentile, snapshot_code, write_json

WORDS = [
    "heat",
    "pump",
    "tariff",
    "garden",
    "budget",
    "meeting",
    "recipe",
    "travel",
    "sleep",
    "project",
    "deadline",
    "review",
    "invoice",
    "library",
    "kettle",
    "bicycle",
    "solar",
    "battery",
    "window",
    "harvest",
    "lecture",
    "vaccine",
    "mortgage",
    "notebook",
]
QUERIES = [
    "heat pump tariff",
    "garden harvest",
    "project deadline review",
    "how much does the solar battery cost",
    "Maya Chen",
    "meeting notes",
    "bicycle",
    "recipe for dinner",
]
CALL_LIMIT = 60.0  # a call slower than this counts as an error (a hang)


@dataclass
class Window:
    """What happened since the last sample."""

    ms: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, who: str, ms: float) -> None:
        self.ms.setdefault(who, []).append(ms)


class Soak:
    def __init__(self, root: Path, seconds: float, embedder: str) -> None:
        self.root = root
        self.seconds = seconds
        self.embedder = embedder
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.window = Window()
        self.samples: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.counts: dict[str, int] = {}
        self.stable = sorted(
            str(p.relative_to(root)) for p in root.rglob("*.md") if "churn" not in p.parts
        )
        self.churn = sorted(str(p.relative_to(root)) for p in (root / "churn").glob("*.md"))
        self.rng = random.Random(42)
        self.server_pid: int | None = None

    # ---- bookkeeping

    def record(self, who: str, started: float, error: str | None = None) -> None:
        ms = (time.perf_counter() - started) * 1000
        if error is None and ms > CALL_LIMIT * 1000:
            error = f"{who} took {ms / 1000:.0f} s"
        with self.lock:
            self.window.add(who, ms)
            self.counts[who] = self.counts.get(who, 0) + 1
            if error is not None:
                self.window.errors.append(error)
                self.errors.append(f"{time.strftime('%H:%M:%S')} {who}: {error}"[:500])
                if len(self.errors) <= 20:  # as they happen: a long run can be looked into
                    print(f"error: {self.errors[-1]}", flush=True)

    def sample(self, started: float) -> None:
        with self.lock:
            window, self.window = self.window, Window()
        row: dict[str, Any] = {"t": round(time.monotonic() - started, 1)}
        for who, values in sorted(window.ms.items()):
            row[who] = {
                "n": len(values),
                "p50": round(percentile(values, 50), 1),
                "p99": round(percentile(values, 99), 1),
            }
        row["errors"] = len(window.errors)
        row["server_rss_mb"], row["server_fds"] = _process(self.server_pid)
        row["core_rss_mb"], row["core_fds"] = _process(os.getpid())
        row["load"] = os.getloadavg()[0]
        self.samples.append(row)
        print(_sample_line(row), flush=True)

    # ---- the MCP server

    async def mcp(self) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {**os.environ, "VAULTMEM_EMBEDDER": self.embedder}
        params = StdioServerParameters(
            command=PYTHON, args=["-m", "vaultmem", "--vault", str(self.root), "mcp"], env=env
        )
        rng = random.Random(7)
        with open(self.root.parent / "server-stderr.log", "a") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                self.server_pid = _child_pid("mcp")
                while not self.stop.is_set():
                    tool, args = self._mcp_call(rng)
                    started = time.perf_counter()
                    try:
                        result = await asyncio.wait_for(
                            client.call_tool(tool, args), CALL_LIMIT * 2
                        )
                        problem = str(result.content)[:300] if result.is_error else None
                    except Exception as exc:  # a broken pipe, a timeout: the server failed
                        problem = f"{type(exc).__name__}: {exc}"
                    self.record(f"mcp {tool}", started, problem)

    def _mcp_call(self, rng: random.Random) -> tuple[str, dict[str, Any]]:
        roll = rng.random()
        if roll < 0.35:
            return "search", {"query": rng.choice(QUERIES)}
        if roll < 0.5:
            return "search", {"query": rng.choice(QUERIES), "mode": "keyword"}
        if roll < 0.75:
            return "read_note", {"ref": rng.choice(self.stable)}
        if roll < 0.9:
            return "backlinks", {"ref": rng.choice(self.stable)}
        return "neighbors", {"ref": rng.choice(self.stable)}

    # ---- the TUI's core

    def core(self) -> None:
        from vaultmem.live import Freshness
        from vaultmem.vault import Vault

        vault = Vault(self.root)
        vault.embedder_spec = self.embedder
        warming = vault.warm()
        freshness = Freshness(vault)
        freshness.start()
        rng = random.Random(9)
        try:
            while not self.stop.is_set():
                roll = rng.random()
                started = time.perf_counter()
                try:
                    if roll < 0.4:
                        vault.search(rng.choice(QUERIES), 20)
                        who = "core search"
                    elif roll < 0.6:
                        vault.read_note(rng.choice(self.stable))
                        who = "core read_note"
                    elif roll < 0.75:
                        vault.backlinks(rng.choice(self.stable))
                        who = "core backlinks"
                    elif roll < 0.9:
                        vault.stats()
                        who = "core stats"
                    else:
                        freshness.ensure_fresh()  # what the app does on a disk change
                        who = "core refresh"
                    self.record(who, started)
                except Exception as exc:
                    self.record("core", started, f"{type(exc).__name__}: {exc}")
        finally:
            freshness.stop()
            if warming is not None:
                warming.join()
            vault.close()

    # ---- the writers

    def editor(self) -> None:
        rng = random.Random(11)
        made = 0
        while not self.stop.wait(0.2):
            roll = rng.random()
            started = time.perf_counter()
            try:
                if roll < 0.5 or not self.churn:
                    path = self.root / rng.choice(self.stable + self.churn)
                    with open(path, "a", encoding="utf-8") as handle:
                        other = Path(rng.choice(self.stable)).stem
                        handle.write(f"\n{rng.choice(WORDS)} {rng.choice(WORDS)} [[{other}]]\n")
                    who = "edit"
                elif roll < 0.7:
                    old = self.churn.pop(rng.randrange(len(self.churn)))
                    made += 1
                    new = f"churn/renamed {made}.md"
                    os.rename(self.root / old, self.root / new)
                    self.churn.append(new)
                    who = "rename"
                elif roll < 0.85:
                    old = self.churn.pop(rng.randrange(len(self.churn)))
                    os.remove(self.root / old)
                    who = "delete"
                else:
                    made += 1
                    new = f"churn/new {made}.md"
                    (self.root / new).write_text(_note_text(rng, self.stable), encoding="utf-8")
                    self.churn.append(new)
                    who = "create"
                self.record(who, started)
            except OSError as exc:
                self.record("editor", started, f"{type(exc).__name__}: {exc}")

    def reindexer(self) -> None:
        runs = 0
        while not self.stop.wait(10.0):
            runs += 1
            args = ["reindex", "--full"] if runs % 5 == 0 else ["reindex"]
            started = time.perf_counter()
            env = {**os.environ, "VAULTMEM_EMBEDDER": self.embedder}
            try:
                done = subprocess.run(
                    [PYTHON, "-m", "vaultmem", "--vault", str(self.root), *args],
                    capture_output=True,
                    text=True,
                    timeout=CALL_LIMIT * 5,
                    env=env,
                )
                problem = None if done.returncode == 0 else f"exit {done.returncode}: "
                if problem:
                    problem += done.stderr.strip()[-300:]
            except subprocess.TimeoutExpired:
                problem = "reindex timed out"
            self.record(" ".join(args), started, problem)

    # ---- the run

    def run(self) -> None:
        started = time.monotonic()
        threads = [
            threading.Thread(target=self.core, name="core"),
            threading.Thread(target=self.editor, name="editor"),
            threading.Thread(target=self.reindexer, name="reindexer"),
        ]
        server = threading.Thread(target=lambda: asyncio.run(self.mcp()), name="mcp")
        server.start()
        for thread in threads:
            thread.start()
        try:
            while time.monotonic() - started < self.seconds:
                time.sleep(min(15.0, max(0.1, self.seconds - (time.monotonic() - started))))
                self.sample(started)
        finally:
            self.stop.set()
            for thread in [*threads, server]:
                thread.join(CALL_LIMIT * 5)


def _note_text(rng: random.Random, stable: list[str]) -> str:
    links = " ".join(f"[[{Path(rng.choice(stable)).stem}]]" for _ in range(3))
    body = " ".join(rng.choice(WORDS) for _ in range(60))
    return f"---\ntags: [soak]\n---\n# {rng.choice(WORDS)}\n\n{body}\n\n{links}\n"


def build_vault(root: Path, notes: int) -> None:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(ROOT / "sample-vault", root)
    shutil.rmtree(root / ".vaultmem", ignore_errors=True)
    rng = random.Random(3)
    stable = sorted(str(p.relative_to(root)) for p in root.rglob("*.md"))
    for folder, share in (("gen", 0.75), ("churn", 0.25)):
        (root / folder).mkdir()
        for i in range(int(notes * share)):
            (root / folder / f"{folder} {i}.md").write_text(
                _note_text(rng, stable), encoding="utf-8"
            )


def _child_pid(word: str) -> int | None:
    """The child process of this one whose command line holds `word`."""
    me = str(os.getpid())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me and word.encode() in cmd:
                return int(entry.name)
        time.sleep(0.2)
    return None


def _process(pid: int | None) -> tuple[float | None, int | None]:
    """Resident memory (MB) and open file descriptors of a process, from /proc."""
    if pid is None:
        return None, None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rss = next(int(line.split()[1]) for line in status.splitlines() if line[:6] == "VmRSS:")
        return round(rss / 1024, 1), len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return None, None


def _sample_line(row: dict[str, Any]) -> str:
    calls = sum(v["n"] for v in row.values() if isinstance(v, dict))
    p99 = max((v["p99"] for k, v in row.items() if isinstance(v, dict) and " " in k), default=0)
    return (
        f"{row['t']:7.0f}s  calls {calls:5}  errors {row['errors']}  worst p99 {p99:8.1f} ms"
        f"  server {row['server_rss_mb']} MB {row['server_fds']} fds"
        f"  core {row['core_rss_mb']} MB {row['core_fds']} fds  load {row['load']:.1f}"
    )


def summary(soak: Soak, seconds: float) -> dict[str, Any]:
    samples = soak.samples
    first, last = samples[min(1, len(samples) - 1)], samples[-1]  # after the first warm-up

    def growth(key: str) -> float | None:
        if first.get(key) is None or last.get(key) is None:
            return None
        return round(last[key] - first[key], 1)

    return {
        "seconds": seconds,
        "calls": soak.counts,
        "errors": len(soak.errors),
        "error_list": soak.errors[:50],
        "server_rss_growth_mb": growth("server_rss_mb"),
        "core_rss_growth_mb": growth("core_rss_mb"),
        "server_fds": [s["server_fds"] for s in samples],
        "core_fds": [s["core_fds"] for s in samples],
        "samples": samples,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--notes", type=int, default=400)
    ap.add_argument("--embedder", default="wordllama", help="VAULTMEM_EMBEDDER for all three")
    ap.add_argument("--work", type=Path, default=WORK / "soak")
    ap.add_argument("--out", default="soak.json", help="file name under bench/results/")
    args = ap.parse_args(argv)
    code = snapshot_code()  # every process of the run uses this code, whatever is edited meanwhile
    root = args.work / "vault"
    build_vault(root, args.notes)
    env = {**os.environ, "VAULTMEM_EMBEDDER": args.embedder}
    subprocess.run([PYTHON, "-m", "vaultmem", "--vault", str(root), "reindex"], check=True, env=env)
    soak = Soak(root, args.minutes * 60, args.embedder)
    soak.run()
    result = summary(soak, args.minutes * 60)
    result["machine"] = machine_info()
    result["code"] = code
    path = write_json(args.out, result)
    print(
        f"\n{sum(soak.counts.values())} calls, {result['errors']} errors; "
        f"memory growth: server {result['server_rss_growth_mb']} MB, "
        f"core {result['core_rss_growth_mb']} MB; written to {path}"
    )
    for error in soak.errors[:20]:
        print("  " + error)
    return 1 if soak.errors else 0


if __name__ == "__main__":
    sys.exit(main())
