r"""Do two versions of vaultmem rank alike? Every question's top 10, compared hit by hit.

    .venv/bin/python bench/same_ranking.py --base REF [--sets mdn,kepano,sample,locomo,...]
                                           [--modes hybrid,keyword,semantic] [--queries N]

For speed changes that must not change a single result. The base is vaultmem/ as of git REF
(`git archive`), the head is this worktree's vaultmem/ (a snapshot); each runs in a child
process of its own over the same indexes (built or refreshed first, by the head), and dumps
every query's hits: path, lines, heading, score, snippet and `--explain` parts. Two dumps are
the same when every field of every hit is equal (scores to the last bit); the first
differences are printed and the exit code is 1.

Sets and their indexes (under $VAULTMEM_BENCH_TMP, shared with the other benchmarks):
  mdn          bench/devsets/mdn.jsonl and bench/search.py's 200 queries, over the MDN index
               of bench/search.py (search-mdn/index.db)
  kepano, sample   their dev sets (bench/devset.py's copies and indexes)
  locomo, scifact, longmemeval   the retrieval benchmarks' questions (bench/retrieval.py's
               vaults and indexes; --queries N takes N spread evenly, default all)
Every set also runs a few operator queries made from its questions (a quoted phrase, a
`-word`, a `path:` folder), so the filtered path is compared too. Modes: each of --modes
with the vectors in memory (Vault.warm, as the TUI and MCP server search), and hybrid
without them (sqlite-vec, as the CLI does) on the sets of fewer than 5,000 notes. The
clock is fixed (2026-12-01), so dates and decay rank alike in both runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, WORK, base_code, die, md_files, snapshot_code

SETS = ("mdn", "kepano", "sample", "locomo", "scifact", "longmemeval")
MODES = ("hybrid", "keyword", "semantic")
NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)
COLD_UP_TO = 5000  # notes: hybrid without the vectors in memory is also compared below this
OPERATOR_QUERIES = 10  # questions of each set turned into operator queries


def set_queries(name: str, limit: int | None) -> tuple[Path, Path, list[str]]:
    """(vault root, index, queries) of a set."""
    if name in ("mdn", "kepano", "sample"):
        import devset

        root = devset.vault_root(name, WORK / "mdn")
        questions = [q.text for q in devset.load_set(name)]
        if name == "mdn":
            import search as search_bench

            questions += [q for _, q in search_bench.make_queries(root, md_files(root))]
            return root, WORK / "search-mdn" / "index.db", questions
        return root, WORK / "devset" / f"{name}-default.db", questions
    import retrieval

    loaders = {"locomo": lambda: retrieval.load_locomo(False), "scifact": retrieval.load_scifact,
               "longmemeval": retrieval.load_longmemeval}
    ds = loaders[name]()
    folder = retrieval.BENCH_DIR / name
    retrieval.write_vault(folder / "vault", ds.notes)
    chosen = retrieval.subsample(ds.queries, limit)
    return folder / "vault", folder / "index.db", [q.text for q in chosen]


def with_operators(queries: list[str], root: Path) -> list[str]:
    """A few operator queries made from the first questions: a phrase, a -word, a path:."""
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    out = []
    for n, q in enumerate(queries[:OPERATOR_QUERIES]):
        words = q.split()
        if len(words) >= 3:
            out.append(f'"{words[0]} {words[1]}" {" ".join(words[2:])}')
            out.append(f"{' '.join(words[:-1])} -{words[-1]}")
        if folders:
            out.append(f"{q} path:{folders[n % len(folders)]}")
    return out


def dump(args: argparse.Namespace) -> None:
    """The child: every query of every set, every mode; one JSON file."""
    from vaultmem.vault import Vault

    out: dict[str, Any] = {}
    for name in args.sets:
        root, index, queries = set_queries(name, args.queries)
        queries += with_operators(queries, root)
        vault = Vault(root, index)
        runs: list[tuple[str, bool]] = []
        if vault.stats().notes < COLD_UP_TO and "hybrid" in args.modes:
            runs.append(("hybrid-cold", False))
        runs += [(m, True) for m in args.modes]
        for label, warm in runs:
            if warm:
                vault.warm(background=False)
            started = time.perf_counter()
            got: dict[str, Any] = {}
            for q in queries:
                mode = label.removesuffix("-cold")
                try:
                    hits = vault.search(q, 10, mode=mode, now=NOW).hits  # type: ignore[arg-type]
                except Exception as exc:
                    got[q] = f"{type(exc).__name__}: {exc}"
                    continue
                got[q] = [[h.path, h.start_line, h.end_line, h.header, h.score, h.snippet,
                           [list(p) for p in h.explain]] for h in hits]
            out[f"{name}/{label}"] = got
            print(f"  {name}/{label}: {len(queries)} queries in "
                  f"{time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
        vault.close()
    Path(args.dump).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


def prepare(sets: list[str], queries: int | None) -> None:
    """Build or refresh every set's index (with the head's code) before either side reads."""
    from vaultmem.vault import Vault

    for name in sets:
        root, index, _ = set_queries(name, queries)
        index.parent.mkdir(parents=True, exist_ok=True)
        report = Vault(root, index).reindex()
        print(f"[{name}] index ready: {report.notes} notes, {report.changed} (re)indexed",
              file=sys.stderr, flush=True)


def differences(base: dict[str, Any], head: dict[str, Any]) -> list[str]:
    out = []
    for run in base.keys() | head.keys():
        a, b = base.get(run), head.get(run)
        if a is None or b is None:
            out.append(f"{run}: only in {'head' if a is None else 'base'}")
            continue
        for q in a.keys() | b.keys():
            if a.get(q) == b.get(q):
                continue
            ha, hb = a.get(q), b.get(q)
            if not isinstance(ha, list) or not isinstance(hb, list):
                out.append(f"{run} {q!r}: {ha!r} / {hb!r}")
                continue
            for i in range(max(len(ha), len(hb))):
                x = ha[i] if i < len(ha) else None
                y = hb[i] if i < len(hb) else None
                if x != y:
                    out.append(f"{run} {q!r} #{i + 1}: base {x!r}\n    head {y!r}")
                    break
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", help="the git ref to compare with (required unless --dump)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--queries", type=int, default=None,
                    help="retrieval sets: this many questions, spread evenly (default all)")
    ap.add_argument("--dump", help=argparse.SUPPRESS)  # child: write the hits here
    args = ap.parse_args()
    args.sets = [s for s in args.sets.split(",") if s]
    args.modes = [m for m in args.modes.split(",") if m]
    if unknown := set(args.sets) - set(SETS):
        die(f"unknown sets: {', '.join(sorted(unknown))} (known: {', '.join(SETS)})")
    if args.dump:
        dump(args)
        return
    if not args.base:
        die("--base REF is required")

    head_code = snapshot_code()
    prepare(args.sets, args.queries)
    versions = {"base": str(base_code(args.base)), "head": os.environ["PYTHONPATH"]}
    dumps: dict[str, Any] = {}
    for label, code in versions.items():
        out = WORK / f"same-ranking-{label}.json"
        print(f"{label} ({args.base if label == 'base' else head_code['head']}):",
              file=sys.stderr, flush=True)
        child = [PYTHON, __file__, "--dump", str(out), "--sets", ",".join(args.sets),
                 "--modes", ",".join(args.modes)]
        if args.queries:
            child += ["--queries", str(args.queries)]
        # run from WORK: the worktree's vaultmem/ must not shadow the code on PYTHONPATH
        subprocess.run(child, cwd=WORK, env={**os.environ, "PYTHONPATH": code}, check=True)
        dumps[label] = json.loads(out.read_text(encoding="utf-8"))
    found = differences(dumps["base"], dumps["head"])
    compared = sum(len(v) for v in dumps["head"].values())
    hits = sum(len(h) for v in dumps["head"].values() for h in v.values() if isinstance(h, list))
    if found:
        print(f"{len(found)} queries rank differently (of {compared}):")
        for line in found[:30]:
            print("  " + line)
        raise SystemExit(1)
    print(f"identical: {compared} queries over {len(dumps['head'])} runs "
          f"({', '.join(sorted(dumps['head']))}), {hits} hits, every field equal "
          f"(head {head_code['head']}{' + changes' if head_code['vaultmem_dirty'] else ''}"
          f" vs {args.base})")


if __name__ == "__main__":
    main()
