r"""Retrieval quality on LoCoMo and BEIR SciFact: vaultmem next to three reference retrievers.

    .venv/bin/python bench/retrieval.py [--datasets locomo,scifact] [--mode MODE]
                                        [--limit-queries N] [--reindex] [--captions]

Each dataset is written as a vault of markdown notes under $VAULTMEM_BENCH_TMP
(/tmp/vaultmem-bench)/retrieval/<dataset>/vault, indexed by vaultmem (Vault.reindex, into
.../index.db next to it; built once and reused, incrementally, unless --reindex), and queried
in-process through one Vault object: Vault.search(q, limit=10) (vaultmem's default mode; the JSON
records which), or Vault.search(q, limit=10, mode=MODE) when --mode is given. The same notes are
scored, in the same run, by three references:

  fts5      plain SQLite FTS5 bm25 over whole notes: one table (path UNINDEXED, title, body) with
            tokenizer `porter unicode61 remove_diacritics 2`; title = file name without .md, body =
            the whole file text, front matter included (as bench/search.py's baseline does);
            query = every \w+ word of the question, lower-cased, deduplicated, double-quoted,
            joined by OR; default bm25 weights.
  wordllama wordllama (l2_supercat, 256 dims) alone: each note (after its front matter) cut into
            pieces of at most 1500 characters on line / sentence / word boundaries, pieces and
            query L2-normalised, cosine; a note scores the max over its pieces.
  rrf       reciprocal rank fusion, k=60, equal weights, of the top 100 of fts5 and wordllama.

BLAS is pinned to one thread: OPENBLAS/OMP/MKL_NUM_THREADS=1 before numpy loads (so vaultmem's
own embedding at reindex too), and threadpoolctl around everything after the reindex.

LoCoMo follows basic-memory's retrieval protocol (basicmachines-co/basic-memory-benchmarks:
converters/locomo_to_corpus.py, scoring/retrieval.py): one note per conversation session, all 10
conversations in one vault (`conv-26/session-03 2023-05-08.md`; front matter `date:` ISO,
`date_time:` the dataset's "1:56 pm on 8 May, 2023", `conversation:`, `session:`), body one
bullet per turn `- **Speaker:** text`, turn text only (basic-memory leaves out the image captions;
--captions adds them as ` [image: <blip_caption>]` in a separate vault `locomo-captions`). Every
question is a query; its ground truth is the set of session notes named by its evidence ids.
Scores are averaged over all 1,986 questions (questions without evidence score 0), overall, per
category, over categories 1-4 (basic-memory's "official headline") and category 5.

  recall@k  fraction of the question's evidence sessions in the top k (basic-memory's recall@k)
  hit@k     1 if any evidence session is in the top k (hit rate)
  MRR       1 / rank of the first evidence session in the top 10 (basic-memory: top_k = 10)

SciFact: one note per abstract (`<doc id>.md`, `# title`, then the abstract), the 300 test
queries, nDCG@10 with graded qrels (trec_eval / BEIR: gain = relevance grade, discount
log2(rank + 1), ideal from the judged documents), recall@10, recall@100 (vaultmem: a second pass
with limit=100) and MRR@10.

Prints markdown tables; writes bench/results/retrieval-<dataset>[-<mode>][-q<N>].json (summary)
and, beside the vault, per-query[-<mode>][-q<N>].jsonl (every query's scores, latency and top 10
of every retriever: diff two of them to see which questions a change won or lost).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import os
import re
import resource
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DATA,
    ROOT,
    WORK,
    die,
    machine_info,
    md_files,
    percentile,
    require,
    snapshot_code,
    write_json,
)

LOCOMO_JSON = DATA / "memory" / "locomo" / "locomo10.json"
SCIFACT_DIR = DATA / "ir" / "beir-scifact"
LONGMEMEVAL_JSON = DATA / "memory" / "longmemeval" / "longmemeval_oracle.json"
BENCH_DIR = WORK / "retrieval"

TOP_K = 10  # basic-memory's top_k; also the nDCG cut-off
DEEP_K = 100  # reference ranking depth, RRF input depth and SciFact recall@100
RRF_K = 60
CHUNK_CHARS = 1500
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
REFERENCES = ("fts5", "wordllama", "rrf")
RETRIEVERS = ("vaultmem", *REFERENCES)

# Figures the issue gives for the references on this machine (all LoCoMo questions; SciFact
# test). The run warns when its own references are further than TOLERANCE from them.
EXPECTED = {
    "locomo": {"fts5": {"recall@5": 0.860, "mrr": 0.781},
               "wordllama": {"recall@5": 0.686},
               "rrf": {"recall@5": 0.832}},
    "scifact": {"fts5": {"ndcg@10": 0.690},
                "wordllama": {"ndcg@10": 0.542},
                "rrf": {"ndcg@10": 0.667}},
}
TOLERANCE = 0.01

# SCHEMA.md's names (mem0's mapping, matches the paper's category sizes), and the labels
# basic-memory's converter gives the same integers (a different, shifted naming).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
BM_CATEGORY_LABELS = {1: "single_hop", 2: "multi_hop", 3: "temporal", 4: "open_domain",
                      5: "adversarial"}

WORD_RE = re.compile(r"\w+")
EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")  # tolerant: finds every id in "D8:6; D9:17" etc.
BM_EVIDENCE_RE = re.compile(r"^D(\d+):")  # basic-memory: the first session number, if any
FRONT_MATTER_RE = re.compile(r"\A---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")


# --------------------------------------------------------------------------- metrics


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Fraction of the relevant documents found in the top k (0 when nothing is relevant)."""
    if not relevant:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for doc in set(relevant) if doc in top) / len(set(relevant))


def hit_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 if any relevant document is in the top k, else 0.0."""
    return 1.0 if any(doc in relevant for doc in ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str],
                    k: int | None = None) -> float:
    """1 / rank of the first relevant document within the top k (all of `ranked` if k is None)."""
    for rank, doc in enumerate(ranked[:k] if k is not None else ranked, start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int,
              gain: str = "linear") -> float:
    """nDCG@k with graded judgements, as trec_eval / pytrec_eval (BEIR) compute it.

    DCG = sum over the top k of gain(rel) / log2(rank + 1); IDCG is the DCG of the judged
    documents sorted by grade. gain "linear" is rel (trec_eval, BEIR); "exp" is 2**rel - 1.
    Grades <= 0 count as not relevant. `ranked` holds each document at most once.
    """
    def g(rel: int) -> float:
        return float(rel) if gain == "linear" else float(2 ** rel - 1)

    dcg = sum(g(qrels[doc]) / math.log2(rank + 1)
              for rank, doc in enumerate(ranked[:k], start=1) if qrels.get(doc, 0) > 0)
    ideal = sorted((rel for rel in qrels.values() if rel > 0), reverse=True)[:k]
    idcg = sum(g(rel) / math.log2(rank + 1) for rank, rel in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K,
        weights: Sequence[float] | None = None) -> list[str]:
    """Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks from 1.

    Ties go to the document with the better best rank, then to the earlier list.
    """
    weights = weights or [1.0] * len(rankings)
    score: dict[str, float] = {}
    best: dict[str, tuple[int, int]] = {}
    for li, (ranking, w) in enumerate(zip(rankings, weights, strict=True)):
        for rank, doc in enumerate(ranking, start=1):
            score[doc] = score.get(doc, 0.0) + w / (k + rank)
            if doc not in best or (rank, li) < best[doc]:
                best[doc] = (rank, li)
    return sorted(score, key=lambda d: (-score[d], best[d]))


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def evidence_sessions(evidence: Iterable[object]) -> set[int]:
    """Session numbers named by LoCoMo evidence ids, tolerating the malformed ones.

    Every `D<session>:<turn>` inside each string counts, so "D8:6; D9:17" and "D9:1 D4:4 D4:6"
    give all their sessions, "D:11:26" gives 11 and "D30:05" gives 30; "D" gives nothing.
    """
    out: set[int] = set()
    for item in evidence:
        if isinstance(item, str):
            out.update(int(s) for s, _turn in EVIDENCE_RE.findall(item))
    return out


def evidence_sessions_bm(evidence: Iterable[object]) -> set[int]:
    """basic-memory's reading: the session of each string that starts `D<n>:` (first id only)."""
    out: set[int] = set()
    for item in evidence:
        if isinstance(item, str) and (m := BM_EVIDENCE_RE.match(item)):
            out.add(int(m.group(1)))
    return out


def chunk_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Cut text into pieces of at most `size` characters: whole lines where they fit, long lines
    at sentence ends, then at spaces, then hard. Blank lines are dropped."""
    pieces: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) <= size:
            pieces.append(line)
            continue
        for sentence in SENTENCE_END_RE.split(line):
            while len(sentence) > size:
                cut = sentence.rfind(" ", 0, size + 1)
                cut = cut if cut > 0 else size
                pieces.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                pieces.append(sentence)
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > size:
            chunks.append(current)
            current = piece
        else:
            current = f"{current}\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def split_note(text: str) -> str:
    """The note without its front matter."""
    m = FRONT_MATTER_RE.match(text)
    return text[m.end():] if m else text


def embedder_slug(spec: str) -> str:
    return re.sub(r"[^\w.-]+", "_", spec)


def fts_or_query(text: str) -> str | None:
    words = list(dict.fromkeys(w.lower() for w in WORD_RE.findall(text)))
    return " OR ".join(f'"{w}"' for w in words) if words else None


# --------------------------------------------------------------------------- datasets


@dataclass
class Query:
    qid: str
    text: str
    relevant: dict[str, int]  # note path (relative, posix) -> grade
    category: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Dataset:
    name: str
    notes: dict[str, str]  # relative path -> file text
    queries: list[Query]
    notes_info: dict[str, Any] = field(default_factory=dict)


def locomo_date(value: str) -> datetime:
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")


def load_locomo(captions: bool) -> Dataset:
    samples = json.loads(require(LOCOMO_JSON, "LoCoMo").read_text(encoding="utf-8"))
    notes: dict[str, str] = {}
    queries: list[Query] = []
    stats = {"conversations": 0, "sessions": 0, "turns": 0, "image_turns": 0,
             "captions_included": captions}
    gt_notes = {"no_evidence": [], "malformed_ids": [], "missing_session": [],
                "unknown_turn_kept_session": [], "differs_from_basic_memory_parse": []}
    for sample in samples:
        sid = sample["sample_id"]
        conv = sample["conversation"]
        stats["conversations"] += 1
        session_path: dict[int, str] = {}
        turn_ids = {tuple(int(x) for x in m.groups())
                    for k, v in conv.items() if isinstance(v, list)
                    for t in v if (m := re.fullmatch(r"D(\d+):(\d+)", str(t.get("dia_id", ""))))}
        numbers = sorted(int(k.split("_")[1]) for k, v in conv.items()
                         if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
        for n in numbers:
            when_raw = conv.get(f"session_{n}_date_time", "")
            when = locomo_date(when_raw)
            rel = f"{sid}/session-{n:02d} {when:%Y-%m-%d}.md"
            lines = ["---", f"date: {when:%Y-%m-%d}", f'date_time: "{when_raw}"',
                     f"conversation: {sid}", f"session: {n}", "---", ""]
            for turn in conv[f"session_{n}"]:
                text = " ".join(str(turn.get("text", "")).split())
                caption = " ".join(str(turn.get("blip_caption") or "").split())
                stats["turns"] += 1
                stats["image_turns"] += bool(caption)
                if captions and caption:
                    text = f"{text} [image: {caption}]".strip()
                if not text:
                    continue
                lines.append(f"- **{turn.get('speaker', 'unknown')}:** {text}")
            notes[rel] = "\n".join(lines).rstrip() + "\n"
            session_path[n] = rel
            stats["sessions"] += 1
        for i, qa in enumerate(sample["qa"]):
            ev = qa.get("evidence") or []
            qid = f"{sid}#{i}"
            sessions = evidence_sessions(ev)
            if not ev:
                gt_notes["no_evidence"].append(qid)
            if any(not re.fullmatch(r"D\d+:\d+", str(e)) for e in ev):
                gt_notes["malformed_ids"].append({"q": qid, "evidence": ev,
                                                  "sessions": sorted(sessions)})
            unknown = [f"D{a}:{b}" for e in ev for a, b in EVIDENCE_RE.findall(str(e))
                       if (int(a), int(b)) not in turn_ids and int(a) in session_path]
            if unknown:
                gt_notes["unknown_turn_kept_session"].append({"q": qid, "ids": unknown})
            missing = sorted(s for s in sessions if s not in session_path)
            if missing:
                gt_notes["missing_session"].append({"q": qid, "sessions": missing})
            bm_sessions = {s for s in evidence_sessions_bm(ev) if s in session_path}
            relevant = {session_path[s]: 1 for s in sorted(sessions) if s in session_path}
            if bm_sessions != {s for s in sessions if s in session_path}:
                gt_notes["differs_from_basic_memory_parse"].append(
                    {"q": qid, "evidence": ev, "ours": sorted(sessions),
                     "basic_memory": sorted(bm_sessions)})
            queries.append(Query(
                qid, str(qa["question"]).strip(), relevant, int(qa["category"]),
                {"bm_relevant": sorted(session_path[s] for s in bm_sessions)}))
    stats["ground_truth"] = gt_notes
    return Dataset("locomo-captions" if captions else "locomo", notes, queries, stats)


def load_scifact(split: str = "test") -> Dataset:
    """BEIR SciFact: the 5,183 abstracts, and the claims of one split with their judged
    abstracts: "test" (300 claims, the benchmark's figure) or "train" (809 claims, to tune on
    without looking at the test claims). The vault and index are the same for both."""
    require(SCIFACT_DIR, "BEIR SciFact")
    if split not in ("test", "train"):
        die(f"unknown SciFact split {split!r} (use test or train)")
    notes: dict[str, str] = {}
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            title = " ".join(str(doc.get("title") or "").split())
            body = str(doc.get("text") or "").strip()
            notes[f"{doc['_id']}.md"] = (f"# {title}\n\n" if title else "") + body + "\n"
    qrels: dict[str, dict[str, int]] = {}
    with (SCIFACT_DIR / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[0] == "query-id":
                continue
            qrels.setdefault(parts[0], {})[f"{parts[1]}.md"] = int(parts[2])
    queries = []
    # queries.jsonl holds every claim (train and test); queries.test.jsonl the test ones
    source = "queries.test.jsonl" if split == "test" else "queries.jsonl"
    with (SCIFACT_DIR / source).open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["_id"] in qrels:
                queries.append(Query(q["_id"], q["text"], qrels[q["_id"]]))
    if len(queries) != len(qrels):
        die(f"SciFact: {len(qrels)} judged {split} queries but {len(queries)} found in {source}")
    return Dataset("scifact", notes, queries, {"abstracts": len(notes), "split": split})


def load_longmemeval() -> Dataset:
    """LongMemEval oracle, pooled: every evidence session of the 500 questions in one vault
    (940 distinct sessions), each question scored against its own answer sessions."""
    records = json.loads(require(LONGMEMEVAL_JSON, "LongMemEval").read_text(encoding="utf-8"))
    notes: dict[str, str] = {}
    path_of: dict[str, str] = {}
    queries: list[Query] = []
    for record in records:
        for sid, session, when_raw in zip(record["haystack_session_ids"],
                                          record["haystack_sessions"],
                                          record["haystack_dates"], strict=True):
            if sid in path_of:
                continue
            when = datetime.strptime(when_raw.split(" (")[0], "%Y/%m/%d")
            rel = f"lme/{when:%Y-%m-%d} {sid}.md"
            lines = ["---", f"date: {when:%Y-%m-%d}", f"session: {sid}", "---", ""]
            for turn in session:
                text = " ".join(str(turn.get("content", "")).split())
                if text:
                    lines.append(f"- **{str(turn.get('role', 'unknown')).title()}:** {text}")
            notes[rel] = "\n".join(lines).rstrip() + "\n"
            path_of[sid] = rel
        relevant = {path_of[s]: 1 for s in record["answer_session_ids"] if s in path_of}
        queries.append(Query(record["question_id"], str(record["question"]).strip(), relevant,
                             None, {"bm_relevant": sorted(relevant),
                                    "type": record["question_type"]}))
    return Dataset("longmemeval", notes, queries, {"sessions": len(notes)})


def subsample(queries: list[Query], n: int | None) -> list[Query]:
    """n queries spread evenly over the list (all of them when n is None or too big)."""
    if not n or n >= len(queries):
        return queries
    return [queries[i * len(queries) // n] for i in range(n)]


def write_vault(root: Path, notes: Mapping[str, str]) -> dict[str, int]:
    """Make root hold exactly `notes` (.md files); rewrite only files whose text differs, so an
    unchanged vault stays unchanged on disk and vaultmem's incremental reindex is a no-op."""
    written = removed = 0
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in notes.items():
        path = root / rel
        data = text.encode("utf-8")
        try:
            if path.read_bytes() == data:
                continue
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += 1
    wanted = {str(root / rel) for rel in notes}
    for path in md_files(root):
        if path not in wanted:
            os.unlink(path)
            removed += 1
    return {"written": written, "removed": removed}


# --------------------------------------------------------------------------- retrievers

Ranker = Callable[[str], list[str]]


class Fts5Reference:
    """Plain FTS5 bm25 over whole notes (in memory), query words OR-ed."""

    def __init__(self, notes: Mapping[str, str]) -> None:
        import sqlean as sqlite3

        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, body,"
                          f" tokenize = '{FTS_TOKENIZER}')")
        self.conn.executemany(
            "INSERT INTO docs(path, title, body) VALUES (?, ?, ?)",
            [(rel, Path(rel).stem, text) for rel, text in notes.items()])
        self.conn.commit()

    def __call__(self, query: str, k: int = DEEP_K) -> list[str]:
        match = fts_or_query(query)
        if not match:
            return []
        rows = self.conn.execute(
            "SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, k))
        return [r[0] for r in rows]


class WordllamaReference:
    """wordllama embeddings of <=1500-char pieces; a note scores its best piece's cosine."""

    def __init__(self, notes: Mapping[str, str]) -> None:
        import numpy as np
        import wordllama
        from wordllama import WordLlama

        self.np = np
        self.wl = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        self.paths = list(notes)
        texts: list[str] = []
        starts: list[int] = []
        for rel in self.paths:
            pieces = chunk_text(split_note(notes[rel])) or [Path(rel).stem]
            starts.append(len(texts))
            texts.extend(pieces)
        started = time.perf_counter()
        self.vectors = self._normalise(self.wl.embed(texts, batch_size=256))
        self.embed_s = time.perf_counter() - started
        self.starts = np.asarray(starts, dtype=np.intp)
        self.chunks = len(texts)

    def _normalise(self, m: Any) -> Any:
        m = self.np.asarray(m, dtype=self.np.float32)
        norms = self.np.linalg.norm(m, axis=1, keepdims=True)
        return m / self.np.maximum(norms, 1e-12)

    def __call__(self, query: str, k: int = DEEP_K) -> list[str]:
        np = self.np
        q = self._normalise(self.wl.embed([query]))[0]
        per_note = np.maximum.reduceat(self.vectors @ q, self.starts)
        k = min(k, len(per_note))
        top = np.argpartition(-per_note, k - 1)[:k]
        top = top[np.lexsort((top, -per_note[top]))]  # score desc, then note order
        return [self.paths[i] for i in top]


# --------------------------------------------------------------------------- running


def timed(rank: Ranker, queries: Sequence[Query]) -> tuple[list[list[str]], list[float]]:
    rankings, ms = [], []
    for q in queries:
        started = time.perf_counter()
        ranked = rank(q.text)
        ms.append((time.perf_counter() - started) * 1000)
        rankings.append(ranked)
    return rankings, ms


def latency(ms: Sequence[float]) -> dict[str, float]:
    return {"p50_ms": percentile(list(ms), 50), "p95_ms": percentile(list(ms), 95),
            "mean_ms": mean(ms), "max_ms": max(ms)}


def locomo_scores(ranked: Sequence[str], q: Query) -> dict[str, float]:
    rel = q.relevant
    bm = q.meta["bm_relevant"]
    return {"recall@5": recall_at_k(ranked, rel, 5), "recall@10": recall_at_k(ranked, rel, 10),
            "hit@5": hit_at_k(ranked, rel, 5), "hit@10": hit_at_k(ranked, rel, 10),
            "mrr": reciprocal_rank(ranked, rel, TOP_K),
            "bm_recall@5": recall_at_k(ranked, bm, 5), "bm_mrr": reciprocal_rank(ranked, bm, TOP_K)}


def scifact_scores(ranked: Sequence[str], q: Query, deep: Sequence[str]) -> dict[str, float]:
    return {"ndcg@10": ndcg_at_k(ranked, q.relevant, TOP_K),
            "recall@10": recall_at_k(ranked, q.relevant, TOP_K),
            "recall@100": recall_at_k(deep, q.relevant, DEEP_K),
            "mrr@10": reciprocal_rank(ranked, q.relevant, TOP_K)}


def aggregate(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    keys = rows[0].keys() if rows else []
    return {key: mean(r[key] for r in rows) for key in keys} | {"n": len(rows)}


def prepare_vaultmem(ds: Dataset, root: Path, index: Path, full: bool) -> tuple[Any, dict]:
    from vaultmem.vault import Vault

    if full:
        for suffix in ("", "-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
    vault = Vault(root, index)
    started = time.perf_counter()
    cpu_started = time.process_time()  # this process: parsing's pool and the embedding
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    try:
        report = vault.reindex()
    except Exception as exc:  # e.g. an index from an older schema: start over
        print(f"  vaultmem reindex failed ({type(exc).__name__}: {exc}); rebuilding",
              file=sys.stderr)
        vault = Vault(root, index)
        report = vault.reindex(full=True)
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_children = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    info = {"notes": report.notes, "changed": report.changed, "reindex_s": seconds,
            "reindex_cpu_s": round(cpu, 2), "reindex_children_cpu_s": round(cpu_children, 2),
            "load_before": load_before, "load_after": os.getloadavg(),
            "index_mb": sum(p.stat().st_size for p in index.parent.glob(index.name + "*")) / 1e6,
            "full_rebuild": full, "search_signature": str(inspect.signature(Vault.search))}
    mode_param = inspect.signature(Vault.search).parameters.get("mode")
    info["default_mode"] = (mode_param.default if mode_param is not None
                            and mode_param.default is not inspect.Parameter.empty else None)
    emb = getattr(report, "embeddings", None)  # vaultmem with vectors: what reindex embedded
    if emb is not None:
        info["embeddings"] = dataclasses.asdict(emb) if dataclasses.is_dataclass(emb) else str(emb)
        if getattr(emb, "notice", None):
            print(f"  vaultmem: {emb.notice}", file=sys.stderr)
    if report.notes != len(ds.notes):
        print(f"  warning: vaultmem indexed {report.notes} notes, the vault has "
              f"{len(ds.notes)}", file=sys.stderr)
    return vault, info


def run_upgrade(vault: Any, cache_from: str | None) -> dict:
    """The MiniLM upgrade (vaultmem/embed_upgrade.py) run to its end before scoring; with
    `cache_from`, the MiniLM rows of another index's embedding cache copied in first (the same
    text hashes: only what they do not cover is embedded; that index is only read)."""
    from vaultmem import store
    from vaultmem.embed_upgrade import minilm_name

    copied = 0
    if cache_from:
        conn = vault.conn
        before = store.cache_coverage(conn, minilm_name())[1]
        conn.execute("ATTACH DATABASE ? AS other", (cache_from,))
        try:
            with store.transaction(conn):
                conn.execute(
                    "INSERT OR IGNORE INTO embeddings(model, text_hash, vector) SELECT model,"
                    " text_hash, vector FROM other.embeddings WHERE model = ?", (minilm_name(),))
        finally:
            conn.execute("DETACH DATABASE other")
        copied = store.cache_coverage(conn, minilm_name())[1] - before
    status = vault.embed_upgrade.status()
    print(f"  upgrade: {status.state}, {status.covered:,} of {status.sections:,} sections "
          f"covered ({copied:,} by the copied cache); running it", file=sys.stderr, flush=True)
    started, cpu_started, load = time.perf_counter(), time.process_time(), os.getloadavg()
    outcome = vault.embed_upgrade.run()
    info = {"state": outcome.status.state, "swapped": outcome.swapped,
            "embedded": outcome.embedded, "covered_before": status.covered,
            "copied_from_cache": copied, "cache_from": cache_from, "sections": status.sections,
            "seconds": round(time.perf_counter() - started, 2),
            "cpu_s": round(time.process_time() - cpu_started, 2),
            "load_before": load, "load_after": os.getloadavg(),
            "model": store.get_meta(vault.conn, "embed_model")}
    print(f"  upgrade: {info}", file=sys.stderr, flush=True)
    return info


def run_dataset(ds: Dataset, args: argparse.Namespace) -> tuple[dict, list[dict]]:
    """Score every retriever on ds: (results for the JSON, per-query rows)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    started_all = time.perf_counter()
    base = BENCH_DIR / ds.name
    root, index = base / "vault", base / "index.db"
    wrote = write_vault(root, ds.notes)
    queries = subsample(ds.queries, args.limit_queries)
    print(f"[{ds.name}] {len(ds.notes):,} notes ({wrote['written']} written, "
          f"{wrote['removed']} removed), {len(queries):,} queries", file=sys.stderr, flush=True)

    vault, vm_info = prepare_vaultmem(ds, root, index, args.reindex)
    if args.upgrade:
        vm_info["upgrade"] = run_upgrade(vault, args.upgrade_cache_from)
    emb = vm_info.get("embeddings")
    print(f"  vaultmem reindex: {vm_info['changed']} notes (re)indexed in "
          f"{vm_info['reindex_s']:.1f}s wall, {vm_info['reindex_cpu_s']:.1f}s CPU"
          f" (+{vm_info['reindex_children_cpu_s']:.1f}s in workers)"
          + (f"; vectors: {emb.get('embedded')} embedded, {emb.get('reused')} reused "
             f"({emb.get('model')})" if isinstance(emb, dict) else ""),
          file=sys.stderr, flush=True)
    search_kwargs: dict[str, Any] = {"mode": args.mode} if args.mode else {}

    notes = {p: (root / p).read_text(encoding="utf-8") for p in ds.notes}  # what vaultmem saw
    with threadpool_limits(limits=1):
        t = time.perf_counter()
        fts = Fts5Reference(notes)
        build = {"fts5_build_s": time.perf_counter() - t}
        t = time.perf_counter()
        wl = WordllamaReference(notes)
        build |= {"wordllama_build_s": time.perf_counter() - t, "wordllama_embed_s": wl.embed_s,
                  "wordllama_chunks": wl.chunks}
        print(f"  references: fts5 {build['fts5_build_s']:.1f}s, wordllama {wl.chunks:,} "
              f"pieces in {build['wordllama_build_s']:.1f}s", file=sys.stderr, flush=True)
        blas = [{k: i.get(k) for k in ("internal_api", "num_threads")} for i in threadpool_info()]

        def vm(q: str, limit: int = TOP_K) -> list[str]:
            return [h.path for h in vault.search(q, limit=limit, **search_kwargs).hits]

        try:
            vm(queries[0].text)
        except TypeError as exc:
            if search_kwargs and "mode" in str(exc):
                die(f"this vaultmem's Vault.search takes no mode= yet ({exc})")
            raise
        for q in queries[:20]:  # warm-up (caches, page faults); not scored
            vm(q.text)
            fts(q.text)
            wl(q.text)
        rankings: dict[str, list[list[str]]] = {}
        times: dict[str, list[float]] = {}
        for name, rank in (("vaultmem", vm), ("fts5", fts), ("wordllama", wl)):
            t = time.perf_counter()
            rankings[name], times[name] = timed(rank, queries)
            print(f"  {name}: {len(queries)} queries in {time.perf_counter() - t:.1f}s",
                  file=sys.stderr, flush=True)
        t = time.perf_counter()
        rankings["rrf"] = [rrf([f[:DEEP_K], w[:DEEP_K]])
                           for f, w in zip(rankings["fts5"], rankings["wordllama"], strict=True)]
        # RRF latency = fusion only; add fts5 + wordllama for the end-to-end cost
        fuse_ms = (time.perf_counter() - t) * 1000 / max(1, len(queries))
        times["rrf"] = [a + b + fuse_ms for a, b in zip(times["fts5"], times["wordllama"],
                                                        strict=True)]
        deep_vm: list[list[str]] | None = None
        if ds.name.startswith("scifact"):
            deep_vm, _ = timed(lambda s: vm(s, DEEP_K), queries)

    per_query: list[dict] = []
    per_retriever: dict[str, list[dict[str, float]]] = {r: [] for r in RETRIEVERS}
    for i, q in enumerate(queries):
        entry: dict[str, Any] = {"id": q.qid, "query": q.text, "relevant": sorted(q.relevant)}
        if q.category is not None:
            entry["category"] = q.category
        for r in RETRIEVERS:
            ranked = rankings[r][i]
            if ds.name.startswith("scifact"):
                deep = deep_vm[i] if (r == "vaultmem" and deep_vm) else ranked
                s = scifact_scores(ranked[:TOP_K], q, deep)
            else:
                s = locomo_scores(ranked[:TOP_K], q)
            per_retriever[r].append(s)
            entry[r] = {k: round(v, 4) for k, v in s.items()} | {"ms": round(times[r][i], 3)}
            entry[r]["top"] = ranked[:TOP_K]
        per_query.append(entry)

    summary: dict[str, Any] = {}
    for r in RETRIEVERS:
        summary[r] = {"all": aggregate(per_retriever[r]), "latency": latency(times[r])}
        if ds.name.startswith("locomo"):
            by_cat: dict[str, Any] = {}
            for cat in sorted(CATEGORIES):
                rows = [s for s, q in zip(per_retriever[r], queries, strict=True)
                        if q.category == cat]
                by_cat[str(cat)] = aggregate(rows)
            summary[r]["by_category"] = by_cat
            summary[r]["categories_1_4"] = aggregate(
                [s for s, q in zip(per_retriever[r], queries, strict=True) if q.category != 5])
        if ds.name.startswith("longmemeval"):
            types = sorted({q.meta["type"] for q in queries})
            summary[r]["by_type"] = {
                t: aggregate([s for s, q in zip(per_retriever[r], queries, strict=True)
                              if q.meta["type"] == t]) for t in types}
    checks = check_expected(ds.name, summary, args.limit_queries is None)
    return {
        "dataset": ds.name, "vault": str(root), "index": str(index),
        "mode": args.mode, "search_kwargs": search_kwargs, "limit": TOP_K,
        "vaultmem_mode": args.mode or vm_info["default_mode"],
        "queries": len(queries), "queries_total": len(ds.queries),
        "limit_queries": args.limit_queries, "notes": len(ds.notes), "notes_info": ds.notes_info,
        "vault_write": wrote, "vaultmem_index": vm_info, "reference_build": build,
        "blas_threadpools": blas, "summary": summary, "expected_references": checks,
        "seconds": time.perf_counter() - started_all,
    }, per_query


def check_expected(name: str, summary: Mapping[str, Any], full_set: bool) -> list[dict]:
    out = []
    for ref, metrics in EXPECTED.get(name, {}).items():
        for metric, want in metrics.items():
            got = summary[ref]["all"][metric]
            ok = abs(got - want) <= TOLERANCE
            out.append({"retriever": ref, "metric": metric, "expected": want, "got": got,
                        "within_tolerance": ok, "full_query_set": full_set})
            if not ok and full_set:
                print(f"warning: {name} {ref} {metric} = {got:.3f}, the issue says {want:.3f} "
                      f"(off by more than {TOLERANCE})", file=sys.stderr)
    return out


# --------------------------------------------------------------------------- report


def label(r: str, mode: str | None) -> str:
    """mode: the mode vaultmem searched in (given, or its default), None for older vaultmem."""
    return f"vaultmem ({mode})" if r == "vaultmem" and mode else {
        "vaultmem": "vaultmem", "fts5": "ref: FTS5 bm25 (OR)", "wordllama": "ref: wordllama",
        "rrf": "ref: RRF(fts5, wordllama)"}[r]


def expected_note(name: str, r: str, metric: str) -> str:
    want = EXPECTED.get(name, {}).get(r, {}).get(metric)
    return f" ({want:.3f})" if want is not None else ""


def print_locomo(res: dict) -> None:
    s, name, mode = res["summary"], res["dataset"], res["vaultmem_mode"]
    print(f"### {name}: {res['notes']} session notes, {res['queries']:,} questions"
          f"{' (subset)' if res['limit_queries'] else ''}; top {TOP_K}\n")
    print("recall@k = fraction of the question's evidence sessions in the top k (basic-memory's "
          "definition); hit@k = any evidence session in the top k; MRR over the top 10. "
          "Averaged over all questions (no evidence = 0). Issue figures in brackets.\n")
    print("| retriever | recall@5 | recall@10 | hit@5 | hit@10 | MRR | cat 1-4 recall@5 | "
          "cat 1-4 MRR | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in RETRIEVERS:
        a, h, lat = s[r]["all"], s[r]["categories_1_4"], s[r]["latency"]
        print(f"| {label(r, mode)} | {a['recall@5']:.3f}{expected_note(name, r, 'recall@5')} | "
              f"{a['recall@10']:.3f} | {a['hit@5']:.3f} | {a['hit@10']:.3f} | "
              f"{a['mrr']:.3f}{expected_note(name, r, 'mrr')} | {h['recall@5']:.3f} | "
              f"{h['mrr']:.3f} | {lat['p50_ms']:.2f} | {lat['p95_ms']:.2f} |")
    print("\nper category: recall@5 / hit@5 / MRR\n")
    print("| category | n | " + " | ".join(label(r, mode) for r in RETRIEVERS) + " |")
    print("|---|---:|" + "---|" * len(RETRIEVERS))
    for cat in sorted(CATEGORIES):
        cells = []
        for r in RETRIEVERS:
            c = s[r]["by_category"][str(cat)]
            cells.append(f"{c['recall@5']:.3f} / {c['hit@5']:.3f} / {c['mrr']:.3f}"
                         if c["n"] else "–")
        n = s["vaultmem"]["by_category"][str(cat)]["n"]
        print(f"| {cat} {CATEGORIES[cat]} (basic-memory: {BM_CATEGORY_LABELS[cat]}) | {n} | "
              + " | ".join(cells) + " |")
    cells = [f"{s[r]['categories_1_4']['recall@5']:.3f} / {s[r]['categories_1_4']['hit@5']:.3f}"
             f" / {s[r]['categories_1_4']['mrr']:.3f}" for r in RETRIEVERS]
    print(f"| 1-4 (basic-memory headline) | {s['vaultmem']['categories_1_4']['n']} | "
          + " | ".join(cells) + " |")
    cells = [f"{s[r]['all']['recall@5']:.3f} / {s[r]['all']['hit@5']:.3f} / "
             f"{s[r]['all']['mrr']:.3f}" for r in RETRIEVERS]
    print(f"| all | {s['vaultmem']['all']['n']} | " + " | ".join(cells) + " |")
    gt = res["notes_info"]["ground_truth"]
    print(f"\nground truth (full set): {len(gt['no_evidence'])} questions without evidence "
          f"(score 0); {len(gt['malformed_ids'])} with malformed ids, parsed leniently; "
          f"{len(gt['missing_session'])} name a session that does not exist (dropped); "
          f"{len(gt['unknown_turn_kept_session'])} name a turn that does not exist in a session "
          "that does (session kept); "
          f"{len(gt['differs_from_basic_memory_parse'])} differ from basic-memory's parse "
          "(recall@5 / MRR with its parse: " + ", ".join(
              f"{r} {s[r]['all']['bm_recall@5']:.3f} / {s[r]['all']['bm_mrr']:.3f}"
              for r in RETRIEVERS) + ")")


def print_scifact(res: dict) -> None:
    s, name, mode = res["summary"], res["dataset"], res["vaultmem_mode"]
    print(f"### {name}: {res['notes']:,} abstracts, {res['queries']} test queries"
          f"{' (subset)' if res['limit_queries'] else ''}\n")
    print("nDCG@10 (graded, trec_eval gain); recall@100 of vaultmem from a limit=100 pass. "
          "Issue figures in brackets.\n")
    print("| retriever | nDCG@10 | recall@10 | recall@100 | MRR@10 | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in RETRIEVERS:
        a, lat = s[r]["all"], s[r]["latency"]
        print(f"| {label(r, mode)} | {a['ndcg@10']:.3f}{expected_note(name, r, 'ndcg@10')} | "
              f"{a['recall@10']:.3f} | {a['recall@100']:.3f} | {a['mrr@10']:.3f} | "
              f"{lat['p50_ms']:.2f} | {lat['p95_ms']:.2f} |")


def print_longmemeval(res: dict) -> None:
    s, mode = res["summary"], res["vaultmem_mode"]
    print(f"### {res['dataset']} (oracle, pooled): {res['notes']} session notes, "
          f"{res['queries']} questions{' (subset)' if res['limit_queries'] else ''}\n")
    print("| retriever | recall@5 | recall@10 | hit@5 | MRR | p50 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in RETRIEVERS:
        a, lat = s[r]["all"], s[r]["latency"]
        print(f"| {label(r, mode)} | {a['recall@5']:.3f} | {a['recall@10']:.3f} | "
              f"{a['hit@5']:.3f} | {a['mrr']:.3f} | {lat['p50_ms']:.2f} |")
    print("\nrecall@5 by question type:\n")
    types = list(s["vaultmem"]["by_type"])
    print("| retriever | " + " | ".join(f"{t} ({s['vaultmem']['by_type'][t]['n']})"
                                         for t in types) + " |")
    print("|---|" + "---:|" * len(types))
    for r in RETRIEVERS:
        print(f"| {label(r, mode)} | " + " | ".join(
            f"{s[r]['by_type'][t]['recall@5']:.3f}" for t in types) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", default="locomo,scifact,longmemeval",
                    help="comma-separated: locomo,scifact,longmemeval")
    ap.add_argument("--embedder", default=None,
                    help="vaultmem's embedder spec (default: its default); a vault per embedder")
    ap.add_argument("--mode", default=None,
                    help="passed to Vault.search(..., mode=MODE); omitted when not given")
    ap.add_argument("--limit-queries", type=int, default=None, metavar="N",
                    help="score only N queries, spread evenly over the set (JSON gets -qN)")
    ap.add_argument("--reindex", action="store_true",
                    help="rebuild the vaultmem index from scratch instead of reusing it")
    ap.add_argument("--scifact-split", choices=("test", "train"), default="test",
                    help="SciFact's claims: test (300, the benchmark's figure) or train (809, "
                         "to tune on; the same vault and index; JSON gets -train)")
    ap.add_argument("--captions", action="store_true",
                    help="LoCoMo: add the image captions to the turns (vault locomo-captions)")
    ap.add_argument("--upgrade", action="store_true",
                    help="run the MiniLM upgrade (vaultmem upgrade-model) to its end after the "
                         "reindex, before scoring (vault <dataset>-upgrade)")
    ap.add_argument("--upgrade-cache-from", metavar="INDEX", default=None,
                    help="with --upgrade: copy the MiniLM vectors of INDEX's embedding cache "
                         "first (same text hashes: spares their embedding; pass a copy)")
    args = ap.parse_args()
    # Before anything imports numpy (vaultmem does): BLAS on one thread from the start too.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    names = [d.strip() for d in args.datasets.split(",") if d.strip()]
    for n in names:
        if n not in ("locomo", "scifact", "longmemeval"):
            die(f"unknown dataset {n!r} (use locomo, scifact, longmemeval)")
    if args.limit_queries is not None and args.limit_queries < 1:
        die("--limit-queries must be at least 1")

    started = time.perf_counter()
    code = snapshot_code()
    if args.embedder:
        import _models

        _models.register()  # bench-only embedders (e5-small) by spec
        os.environ["VAULTMEM_EMBEDDER"] = args.embedder
    machine = machine_info()
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    for n in names:
        ds = (load_locomo(args.captions) if n == "locomo"
              else load_scifact(args.scifact_split) if n == "scifact" else load_longmemeval())
        if args.embedder:  # a vault and index per embedder: an index holds one model's vectors
            ds.name = f"{ds.name}-{embedder_slug(args.embedder)}"
        if args.upgrade:
            ds.name = f"{ds.name}-upgrade"
        res, per_query = run_dataset(ds, args)
        split = "-train" if n == "scifact" and args.scifact_split == "train" else ""
        suffix = split + (f"-{args.mode}" if args.mode else "") + (
            f"-q{args.limit_queries}" if args.limit_queries else "")
        # per-query rows (scores, latency, top 10 of every retriever) are big: kept beside the
        # vault, out of the tracked results
        rows_path = BENCH_DIR / ds.name / f"per-query{suffix}.jsonl"
        with rows_path.open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in per_query)
        res |= {"per_query_file": str(rows_path), "machine": machine, "code": code,
                "when": time.strftime("%Y-%m-%d %H:%M:%S")}
        out = write_json(f"retrieval-{ds.name}{suffix}.json", res)
        (print_scifact if n == "scifact" else print_locomo if n == "locomo"
         else print_longmemeval)(res)
        print(f"\n({res['seconds']:.1f}s; vaultmem index {res['vaultmem_index']['reindex_s']:.1f}s"
              f" for {res['vaultmem_index']['changed']} changed notes; "
              f"JSON: {out.relative_to(ROOT)})\n", flush=True)
    print(f"total {time.perf_counter() - started:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
