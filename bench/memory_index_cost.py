r"""What reading facts and open-task detail adds to indexing: per note, on the 14k MDN pages.

    .venv/bin/python bench/memory_index_cost.py [--runs R]

For every MDN note (extracted by the other MDN scripts under $VAULTMEM_BENCH_TMP, else here),
times the parser (`parse_note`, the baseline: what indexing a note already costs) and the work
this branch adds in the indexer's `_load` (the line split, `memory.facts.parse_facts` for notes
with fields, `memory.loops.detail_of` for open tasks), on the same text in the same process.
Median of R passes over all notes. Writes bench/results/memory-index-cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import WORK, ensure_mdn, machine_info, md_files, snapshot_code, write_json

LINE_END = re.compile(r"\r\n|\r|\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    code = snapshot_code()
    from vaultmem.memory.facts import parse_facts
    from vaultmem.memory.loops import detail_of
    from vaultmem.parser import parse_note

    root = ensure_mdn(WORK / "mdn-memory")
    files = md_files(root)
    texts = [(os.path.relpath(f, root), Path(f).read_text(encoding="utf-8")) for f in files]
    load_before = os.getloadavg()
    parse_s, added_s = [], []
    facts = tasks = 0
    for _ in range(args.runs):
        p = a = 0.0
        facts = tasks = 0
        for path, text in texts:
            t = time.perf_counter()
            note = parse_note(text, path)
            p += time.perf_counter() - t
            t = time.perf_counter()
            if note.fields or note.tasks:
                lines = LINE_END.split(text)
                found = parse_facts(lines, note) if note.fields else ()
                details = [detail_of(lines, x.line - 1) for x in note.tasks if x.status == " "]
                facts += len(found)
                tasks += len(details)
            a += time.perf_counter() - t
        parse_s.append(p)
        added_s.append(a)
    out = {
        "notes": len(texts),
        "facts": facts,
        "open_tasks": tasks,
        "parse_s": round(statistics.median(parse_s), 3),
        "facts_and_detail_s": round(statistics.median(added_s), 3),
        "added_share": round(statistics.median(added_s) / statistics.median(parse_s), 4),
        "runs": args.runs,
        "machine": machine_info(),
        "load": {"before": load_before, "after": os.getloadavg()},
        "code": code,
    }
    write_json("memory-index-cost.json", out)
    print(json.dumps({k: v for k, v in out.items() if k not in ("machine", "code")}, indent=1))


if __name__ == "__main__":
    main()
