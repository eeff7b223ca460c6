"""`reindex --full` with the embedding cache kept, against a rebuild that embeds every section.

    .venv/bin/python bench/full_reindex.py [--runs 5] [--notes 2000]

The vault is the first N pages of MDN (a mid-sized vault, read from the tarball in
../shared/data, extracted to a folder under /tmp), embedded with the bundled wordllama model.
Each run, in fresh child processes:
  baseline  reindex into a new index file: every section embedded, which is what `reindex --full`
            cost before it kept the cache (it emptied the index, cache included)
  full      `reindex --full` over that index: the text index rebuilt, vectors from the cache
  full-edit `reindex --full` after one note gained a paragraph: one section embedded
Times are the reindex's own seconds (imports excluded) and the child's wall time; the load
average is read before each step. Writes bench/results/full-reindex.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    MDN_TARBALL,
    PYTHON,
    ROOT,
    WORK,
    machine_info,
    median,
    require,
    run_child,
    snapshot_code,
    write_json,
)


def child(root: Path, index: Path, full: bool) -> None:
    """One reindex with the default embedder; its figures as one JSON line."""
    from vaultmem.vault import Vault

    load = os.getloadavg()[0]
    vault = Vault(root, index)
    report = vault.reindex(full=full)
    emb = report.embeddings
    assert emb is not None and emb.notice is None, emb
    print(json.dumps({
        "seconds": report.seconds, "notes": report.notes, "model": emb.model,
        "embedded": emb.embedded, "reused": emb.reused, "embed_s": emb.seconds, "load": load,
    }))


def mdn_subset(notes: int) -> Path:
    """The first `notes` .md pages of the MDN tarball, in tar order, under WORK."""
    require(MDN_TARBALL, "MDN tarball")
    root = WORK / f"mdn-{notes}" / "files"
    if root.is_dir() and sum(1 for _ in root.rglob("*.md")) == notes:
        return root
    shutil.rmtree(root.parent, ignore_errors=True)
    root.mkdir(parents=True)
    taken = 0
    with tarfile.open(MDN_TARBALL) as tar:
        for member in tar:
            if taken == notes:
                break
            if member.isfile() and member.name.endswith(".md") and member.name.startswith("files/"):
                member.name = member.name[len("files/"):]
                tar.extract(member, root, filter="data")
                taken += 1
    return root


def one_run(root: Path, tmp: Path, edit: Path, run: int) -> dict:
    index = tmp / "index.db"
    step = [PYTHON, __file__, "--child", str(root), str(index)]
    baseline = run_child(step)
    full = run_child([*step, "--full"])
    with open(edit, "a", encoding="utf-8") as fh:
        fh.write(f"\n\nA paragraph added by run {run} of the benchmark at {time.time_ns()}.\n")
    edited = run_child([*step, "--full"])
    return {"baseline": baseline, "full": full, "full_edit": edited}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--child", nargs=2, metavar=("ROOT", "INDEX"), help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.full)
        return
    os.environ.pop("VAULTMEM_EMBEDDER", None)  # the default, bundled model
    code = snapshot_code()
    machine = machine_info()
    root = mdn_subset(args.notes)
    edit = sorted(root.rglob("*.md"))[args.notes // 2]
    original = edit.read_bytes()
    runs = []
    try:
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory(prefix="full-reindex-", dir=WORK) as tmp:
                r = one_run(root, Path(tmp), edit, run)
            edit.write_bytes(original)
            runs.append(r)
            print(f"[run {run}/{args.runs}] baseline {r['baseline']['seconds']:.2f}s "
                  f"(embedded {r['baseline']['embedded']}) full {r['full']['seconds']:.2f}s "
                  f"(reused {r['full']['reused']}, embedded {r['full']['embedded']}) "
                  f"full after an edit {r['full_edit']['seconds']:.2f}s "
                  f"(embedded {r['full_edit']['embedded']}) "
                  f"load {r['baseline']['load']:.1f}/{r['full']['load']:.1f}",
                  file=sys.stderr, flush=True)
    finally:
        edit.write_bytes(original)

    def med(step: str, key: str) -> float:
        return median([r[step][key] for r in runs])

    summary = {
        step: {key: med(step, key) for key in
               ("seconds", "wall_s", "embed_s", "embedded", "reused", "load", "peak_rss_mb")}
        for step in ("baseline", "full", "full_edit")
    }
    summary["notes"] = runs[0]["baseline"]["notes"]
    summary["model"] = runs[0]["baseline"]["model"]
    summary["saved_s"] = summary["baseline"]["seconds"] - summary["full"]["seconds"]
    out = write_json("full-reindex.json", {
        "dataset": f"MDN, first {args.notes} pages", "vault": str(root),
        "edited_note": str(edit.relative_to(root)), "runs": args.runs, "machine": machine,
        "code": code, "summary": summary, "raw": runs, "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    })
    print("| step | median s (reindex) | median wall s | sections embedded | reused | "
          "load (1 min) |")
    print("|---|---:|---:|---:|---:|---:|")
    names = {"baseline": "baseline: new index, every section embedded (old `--full`)",
             "full": "`reindex --full`, cache kept", "full_edit": "`reindex --full` after 1 edit"}
    for step, name in names.items():
        s = summary[step]
        print(f"| {name} | {s['seconds']:.2f} | {s['wall_s']:.2f} | {s['embedded']:,.0f} | "
              f"{s['reused']:,.0f} | {s['load']:.1f} |")
    print(f"\n{summary['notes']:,} notes, {summary['model']}; median of {args.runs} runs; "
          f"JSON: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
