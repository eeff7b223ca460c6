r"""Dev-set quality: questions people type, scored in every search mode beside plain FTS5 BM25.

    .venv/bin/python bench/devset.py [--sets mdn,kepano,sample] [--modes keyword,semantic,hybrid]
                                     [--embedder SPEC] [--variants NAME,...] [--reindex]
                                     [--failures MODE] [--mdn-dir DIR]

The dev sets are bench/devsets/<set>.jsonl: one question a line (`query`, `kind`, `relevant`:
the notes that answer it, judged by reading them, `why`: the reason). Each set's vault:

  mdn     the 14,076 MDN pages (ROOT/../shared/data/scale, extracted once to
          $VAULTMEM_BENCH_TMP/mdn, as bench/reindex.py does); vault = mdn/files
  kepano  the kepano vault, copied to $VAULTMEM_BENCH_TMP/devset/kepano/vault
  sample  sample-vault/, copied to $VAULTMEM_BENCH_TMP/devset/sample/vault

Each vault is indexed by vaultmem with the embedder given (default: vaultmem's default) into
$VAULTMEM_BENCH_TMP/devset/<set>-<embedder>.db (reused incrementally unless --reindex), and its
vectors are held in memory (Vault.warm) as the TUI and the MCP server do. Every question runs
through Vault.search(q, limit=10, mode=M) for each mode. The baseline, in the same run: plain
SQLite FTS5 bm25 over whole notes, one row per note (title = front matter `title:`, else the
first `# ` heading, else the file name; body = the whole file), tokenizer
`porter unicode61 remove_diacritics 2`, the question's words quoted and OR-ed, default weights.

A question succeeds at k when a note it names is among the first k hits:
  success@1, success@3   fraction of questions answered at rank 1 / within the top 3
  MRR@10                 mean of 1 / rank of the first answering note in the top 10 (else 0)

Held out: a third of each set's questions (those whose id hashes to 0 mod 3, fixed before any
ranking change of round 3 was tried) are never looked at while tuning; every table reports
the tuning questions ("dev"), the held-out ones and all, so a change that only fits the
questions it was tuned on shows as a gap between the two.

--variants runs experimental rankings (bench/_variants.py) next to the modes, over the same
index. Prints tables, the failures of one mode (--failures, default hybrid: questions with no
answer in the top 3, with what came instead), and writes bench/results/devset-<embedder>.json
(devset-<tag>.json with --variants; -<sets> when not all three) with every question's top 10
per retriever.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    KEPANO_VAULT,
    ROOT,
    WORK,
    die,
    ensure_mdn,
    machine_info,
    md_files,
    percentile,
    require,
    snapshot_code,
    write_json,
)

DEVSETS = ROOT / "bench" / "devsets"
SETS = ("mdn", "kepano", "sample")
MODES = ("keyword", "semantic", "hybrid")
TOP_K = 10
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
WORD_RE = re.compile(r"\w+")
TITLE_RE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
H1_RE = re.compile(r"^# +(.+?)[ \t#]*$", re.MULTILINE)
FRONT_MATTER_RE = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    kind: str
    relevant: frozenset[str]
    why: str


def held_out(qid: str) -> bool:
    """Whether a question belongs to the held-out third (by a hash of its id: stable, blind)."""
    return int(hashlib.blake2b(qid.encode(), digest_size=8).hexdigest(), 16) % 3 == 0


def load_set(name: str) -> list[Question]:
    path = require(DEVSETS / f"{name}.jsonl", f"dev set {name}")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not row.get("relevant"):
            die(f"{path}:{n}: a question without relevant notes")
        out.append(Question(row["id"], row["query"], row.get("kind", ""),
                            frozenset(row["relevant"]), row.get("why", "")))
    return out


def vault_root(name: str, mdn_dir: Path) -> Path:
    """The folder to index for a set (a private copy where the source must stay untouched)."""
    if name == "mdn":
        return ensure_mdn(mdn_dir)
    source = require(KEPANO_VAULT, "kepano vault") if name == "kepano" else ROOT / "sample-vault"
    dst = WORK / "devset" / name / "vault"
    if not dst.exists() or _tree_differs(source, dst):
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(source, dst, ignore=shutil.ignore_patterns(".vaultmem", ".trash"))
    return dst


def _tree_differs(src: Path, dst: Path) -> bool:
    a = {os.path.relpath(p, src) for p in md_files(src)}
    b = {os.path.relpath(p, dst) for p in md_files(dst)}
    if a != b:
        return True
    return any((src / rel).read_bytes() != (dst / rel).read_bytes() for rel in a)


# --------------------------------------------------------------------------- baseline


def note_title(rel: str, text: str) -> str:
    m = FRONT_MATTER_RE.match(text)
    if m and (t := TITLE_RE.search(m.group(1))):
        return t.group(1).strip().strip("'\"")
    body = text[m.end():] if m else text
    if h := H1_RE.search(body):
        return h.group(1)
    return Path(rel).stem


class Bm25Baseline:
    """Plain FTS5 bm25 over whole notes in memory, the question's words OR-ed."""

    def __init__(self, root: Path) -> None:
        import sqlean as sqlite3

        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, body,"
                          f" tokenize = '{FTS_TOKENIZER}')")
        rows = []
        for path in md_files(root):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            rows.append((rel, note_title(rel, text), text))
        self.conn.executemany("INSERT INTO docs(path, title, body) VALUES (?, ?, ?)", rows)
        self.conn.commit()

    def __call__(self, query: str) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in WORD_RE.findall(query)))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.conn.execute(
            "SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, TOP_K))
        return [r[0] for r in rows]


# --------------------------------------------------------------------------- scoring


def first_rank(ranked: Sequence[str], relevant: frozenset[str]) -> int | None:
    for rank, path in enumerate(ranked[:TOP_K], start=1):
        if path in relevant:
            return rank
    return None


def summarise(ranks: Sequence[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {
        "success@1": sum(1 for r in ranks if r == 1) / n,
        "success@3": sum(1 for r in ranks if r is not None and r <= 3) / n,
        "success@10": sum(1 for r in ranks if r is not None) / n,
        "mrr@10": sum(1.0 / r for r in ranks if r is not None) / n,
        "n": len(ranks),
    }


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --------------------------------------------------------------------------- running


Retriever = Callable[[str], list[tuple[str, str]]]  # query -> [(path, heading)]


def run_set(name: str, args: argparse.Namespace, variants: dict[str, Any]) -> dict[str, Any]:
    from vaultmem.vault import Vault

    questions = load_set(name)
    root = vault_root(name, args.mdn_dir)
    slug = re.sub(r"[^\w.-]+", "_", args.embedder or "default")
    index = WORK / "devset" / f"{name}-{slug}.db"
    index.parent.mkdir(parents=True, exist_ok=True)
    if args.reindex:
        for suffix in ("", "-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
    vault = Vault(root, index)
    if args.embedder:
        vault.embedder_spec = args.embedder
    print(f"[{name}] {len(questions)} questions; indexing {root} …", file=sys.stderr, flush=True)
    started, cpu_started, load = time.perf_counter(), time.process_time(), os.getloadavg()
    report = vault.reindex()
    reindex_s = time.perf_counter() - started
    reindex_cpu_s = time.process_time() - cpu_started  # this process (the embedding's)
    emb = getattr(report, "embeddings", None)
    if emb is not None and getattr(emb, "notice", None):
        die(f"{name}: {emb.notice}")
    print(f"  reindex {reindex_s:.1f}s wall, {reindex_cpu_s:.1f}s CPU, load {load[0]:.1f}"
          f" ({report.changed} notes changed"
          + (f"; {emb.embedded} sections embedded, {emb.reused} reused, {emb.model}" if emb
             else "") + ")", file=sys.stderr, flush=True)
    vault.warm(background=False)
    bm25 = Bm25Baseline(root)

    def mode_retriever(mode: str) -> Retriever:
        def run(q: str) -> list[tuple[str, str]]:
            return [(h.path, h.header) for h in vault.search(q, limit=TOP_K, mode=mode).hits]
        return run

    retrievers: dict[str, Retriever] = {"bm25": lambda q: [(p, "") for p in bm25(q)]}
    for mode in args.modes:
        retrievers[mode] = mode_retriever(mode)
    for label, make in variants.items():
        retrievers[label] = make(vault)

    from threadpoolctl import threadpool_limits

    results: dict[str, Any] = {}
    per_question: list[dict[str, Any]] = [
        {"id": q.qid, "query": q.text, "kind": q.kind, "relevant": sorted(q.relevant)}
        for q in questions]
    with threadpool_limits(limits=1):
        for q in questions[:5]:  # warm-up: model load, caches, page faults; not scored
            for run in retrievers.values():
                run(q.text)
        for label, run in retrievers.items():
            ranks: list[int | None] = []
            ms: list[float] = []
            load_before = loadavg()
            for q, row in zip(questions, per_question, strict=True):
                t = time.perf_counter()
                hits = run(q.text)
                ms.append((time.perf_counter() - t) * 1000)
                rank = first_rank([p for p, _ in hits], q.relevant)
                ranks.append(rank)
                row[label] = {"rank": rank, "top": [[p, h] for p, h in hits[:TOP_K]]}
            kinds = sorted({q.kind for q in questions})
            pairs = list(zip(ranks, questions, strict=True))
            results[label] = {
                "all": summarise(ranks),
                "dev": summarise([r for r, q in pairs if not held_out(q.qid)]),
                "held_out": summarise([r for r, q in pairs if held_out(q.qid)]),
                "by_kind": {k: summarise([r for r, q in zip(ranks, questions, strict=True)
                                          if q.kind == k]) for k in kinds},
                "latency": {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95),
                            "loadavg_before": load_before, "loadavg_after": loadavg()},
            }
    return {"set": name, "questions": len(questions), "vault": str(root), "index": str(index),
            "embedder": emb.model if emb else None, "reindex_s": reindex_s,
            "reindex_cpu_s": reindex_cpu_s, "load_before": load,
            "results": results, "per_question": per_question}


def print_set(res: dict[str, Any], failures: str | None) -> None:
    r = res["results"]
    print(f"\n### {res['set']}: {res['questions']} questions (embedder {res['embedder']})\n")
    print("| retriever | success@1 | success@3 | success@10 | MRR@10 | p50 ms | load |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for label, v in r.items():
        a, lat = v["all"], v["latency"]
        print(f"| {label} | {a['success@1']:.3f} | {a['success@3']:.3f} | {a['success@10']:.3f}"
              f" | {a['mrr@10']:.3f} | {lat['p50_ms']:.1f} | {lat['loadavg_before'][0]:.1f} |")
    first = next(iter(r.values()))
    print(f"\ntuning questions ({first['dev']['n']}) / held-out ({first['held_out']['n']}),"
          " success@1 / success@3 / MRR@10:\n")
    print("| retriever | dev | held-out |")
    print("|---|---:|---:|")
    for label, v in r.items():
        d, h = v["dev"], v["held_out"]
        print(f"| {label} | {d['success@1']:.3f} / {d['success@3']:.3f} / {d['mrr@10']:.3f}"
              f" | {h['success@1']:.3f} / {h['success@3']:.3f} / {h['mrr@10']:.3f} |")
    kinds = list(first["by_kind"])
    print("\nsuccess@3 by kind of question:\n")
    print("| retriever | " + " | ".join(f"{k} ({r['bm25']['by_kind'][k]['n']})" for k in kinds)
          + " |")
    print("|---|" + "---:|" * len(kinds))
    for label, v in r.items():
        print(f"| {label} | " + " | ".join(f"{v['by_kind'][k]['success@3']:.2f}" for k in kinds)
              + " |")
    if failures and failures in r:
        # the held-out questions' misses are not listed: reading them is tuning on them
        missed = [q for q in res["per_question"] if not held_out(q["id"])
                  and (q[failures]["rank"] is None or q[failures]["rank"] > 3)]
        print(f"\n{failures}: {len(missed)} tuning questions without an answer in the top 3"
              " (held-out misses not shown)\n")
        for q in missed:
            rank = q[failures]["rank"]
            bm = q["bm25"]["rank"]
            print(f"- {q['query']!r} ({q['kind']}; rank {rank or '>10'}, bm25 {bm or '>10'})")
            print(f"    wanted: {', '.join(_short(p) for p in q['relevant'])}")
            for path, heading in q[failures]["top"][:3]:
                print(f"    got:    {_short(path)}" + (f"  § {heading}" if heading else ""))


def _short(path: str) -> str:
    return path.removeprefix("en-us/").removesuffix("/index.md")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--embedder", default=None,
                    help="embedder spec for the index (default: vaultmem's default)")
    ap.add_argument("--variants", default="",
                    help="experimental rankings from bench/_variants.py, comma-separated")
    ap.add_argument("--tag", default="variants",
                    help="the JSON's name with --variants: devset-<tag>-<sets>.json")
    ap.add_argument("--reindex", action="store_true", help="rebuild the indexes from scratch")
    ap.add_argument("--failures", default="hybrid", help="list this retriever's misses")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    args = ap.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    args.modes = [m for m in args.modes.split(",") if m]
    for m in args.modes:
        if m not in MODES:
            die(f"unknown mode {m!r}: use {', '.join(MODES)}")
    sets = [s for s in args.sets.split(",") if s]
    for s in sets:
        if s not in SETS:
            die(f"unknown dev set {s!r}: use {', '.join(SETS)}")
    code = snapshot_code()
    import _models

    _models.register()  # bench-only embedders (e5-small) by spec
    variants: dict[str, Any] = {}
    if args.variants:
        import _variants

        for name in args.variants.split(","):
            if name not in _variants.VARIANTS:
                die(f"unknown variant {name!r}: use {', '.join(_variants.VARIANTS)}")
            variants[name] = _variants.VARIANTS[name]
    out: dict[str, Any] = {"machine": machine_info(), "code": code,
                           "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                           "embedder_spec": args.embedder, "sets": {}}
    for name in sets:
        res = run_set(name, args, variants)
        print_set(res, args.failures)
        out["sets"][name] = res
    slug = re.sub(r"[^\w.-]+", "_", args.embedder or "default")
    if variants:
        slug = args.tag + ("" if args.embedder is None else f"-{slug}")
    partial = "" if sets == list(SETS) else "-" + "_".join(sets)
    path = write_json(f"devset-{slug}{partial}.json", out)
    print(f"\nJSON: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
