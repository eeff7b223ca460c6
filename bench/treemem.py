"""Peak memory of a whole process tree (a command and every worker it starts), sampled.

ru_maxrss reports one process at a time; a cold reindex parses on every core in worker
processes, so its real footprint is the sum. Usage: python bench/treemem.py -- CMD ARGS...
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def tree_rss_kb(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            status = (proc / "status").read_text()
        except OSError:
            continue
        pid, ppid = int(proc.name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), None)
        rss[pid] = int(line.split()[1]) if line else 0
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def main() -> None:
    args = sys.argv[sys.argv.index("--") + 1 :]
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kb(proc.pid))
        time.sleep(0.05)
    print(f"peak tree RSS {peak / 1024:.0f} MB over {time.perf_counter() - started:.1f} s "
          f"(exit {proc.returncode})")


if __name__ == "__main__":
    main()
