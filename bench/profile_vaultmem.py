"""cProfile one vaultmem operation on MDN; print the top functions by cumulative and total time.

    .venv/bin/python bench/profile_vaultmem.py cold    # one cold reindex into a fresh index
    .venv/bin/python bench/profile_vaultmem.py edit    # reindex after appending a line to one note
    .venv/bin/python bench/profile_vaultmem.py noop    # reindex with nothing changed
    .venv/bin/python bench/profile_vaultmem.py search  # bench/search.py's 200 queries, 3 passes
Options: --top 15, --mdn-dir DIR. Saves $VAULTMEM_BENCH_TMP/profile-<what>.prof (default
/tmp/vaultmem-bench) for pstats/snakeviz. cProfile slows Python-heavy code 2-3x (105 s vs 36 s
for a cold MDN reindex): read the shares, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_MDN_DIR, WORK, ensure_mdn, md_files, snapshot_code

MDN_EDIT = "en-us/web/javascript/reference/global_objects/array/index.md"


def top(prof: cProfile.Profile, key: str, n: int) -> str:
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats(key).print_stats(n)
    lines = buf.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    return "\n".join(lines[start:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["cold", "edit", "noop", "search"])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    args = ap.parse_args()

    code = snapshot_code()
    print(f"code: {code}")
    from vaultmem.vault import Vault

    root = ensure_mdn(args.mdn_dir)
    WORK.mkdir(parents=True, exist_ok=True)
    prof = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="profile-", dir=WORK) as tmp:
        vault = Vault(root, Path(tmp) / "index.db")
        edit = root / MDN_EDIT
        original = edit.read_bytes()
        try:
            if args.what != "cold":
                vault.reindex()
            if args.what == "edit":
                with open(edit, "a", encoding="utf-8") as fh:
                    fh.write(f"\nProfile edit at {time.time_ns()}.\n")
            if args.what == "search":
                import search as bench_search

                queries = [q for _, q in bench_search.make_queries(root, md_files(root))]
                for q in queries:  # warm-up, unprofiled
                    vault.search(q)
                started = time.perf_counter()
                prof.enable()
                for _ in range(3):
                    for q in queries:
                        vault.search(q)
                prof.disable()
            else:
                started = time.perf_counter()
                prof.enable()
                report = vault.reindex()
                prof.disable()
                print(report.summary())
            print(f"profiled {args.what}: {time.perf_counter() - started:.2f}s under cProfile")
        finally:
            vault.close()
            edit.write_bytes(original)
    prof.dump_stats(str(WORK / f"profile-{args.what}.prof"))
    print(f"\n## top {args.top} by cumulative time\n" + top(prof, "cumulative", args.top))
    print(f"\n## top {args.top} by total (own) time\n" + top(prof, "tottime", args.top))


if __name__ == "__main__":
    main()
