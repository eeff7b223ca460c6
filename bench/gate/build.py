r"""Build bench/gate/messages.jsonl: the gate's labelled messages, from real questions and
hand-written requests.

    .venv/bin/python bench/gate/build.py

needs memory   70 LoCoMo questions (7 per conversation, categories 1-5 in turn) and 72
               LongMemEval questions (12 per question type, fewer where a type has fewer), read
               from ROOT/../shared/data/memory; and the hand-written `memory` lines of
               written.jsonl (continuations, personal questions, other languages, hard cases).
no memory      the hand-written `none` lines of written.jsonl: greetings, coding help,
               translation, general knowledge, arithmetic, rewriting pasted text, creative and
               how-to requests, other languages, and hard cases that look like memory questions.

Sampling is seeded (random.Random(11)) so the file is reproducible; each message goes to the
`dev` or `heldout` half by a hash of its id (about half each). The output is committed; rerun
only to change the set, and say so in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "memory"
LOCOMO = DATA / "locomo" / "locomo10.json"
LONGMEMEVAL = DATA / "longmemeval" / "longmemeval_oracle.json"
PER_CONVERSATION = 7
PER_TYPE = 12


def split_of(message_id: str) -> str:
    return "dev" if int(hashlib.sha1(message_id.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


def locomo(rng: random.Random) -> list[dict[str, str]]:
    out = []
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        by_cat: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for n, qa in enumerate(sample["qa"]):
            by_cat[int(qa["category"])].append((n, qa["question"]))
        picked: list[tuple[int, int, str]] = []
        cats = sorted(by_cat)
        for cat in cats:
            rng.shuffle(by_cat[cat])
        while len(picked) < PER_CONVERSATION and any(by_cat.values()):
            for cat in cats:
                if by_cat[cat] and len(picked) < PER_CONVERSATION:
                    n, q = by_cat[cat].pop()
                    picked.append((cat, n, q))
        for cat, n, q in sorted(picked, key=lambda p: p[1]):
            out.append({"id": f"locomo-{sample['sample_id']}-q{n}", "label": "memory",
                        "kind": f"locomo-cat{cat}", "text": q})
    return out


def longmemeval(rng: random.Random) -> list[dict[str, str]]:
    by_type: dict[str, list[dict[str, str]]] = defaultdict(list)
    for record in json.loads(LONGMEMEVAL.read_text(encoding="utf-8")):
        by_type[record["question_type"]].append(record)
    out = []
    for kind in sorted(by_type):
        records = sorted(by_type[kind], key=lambda r: r["question_id"])
        for r in sorted(rng.sample(records, min(PER_TYPE, len(records))),
                        key=lambda r: r["question_id"]):
            out.append({"id": f"longmemeval-{r['question_id']}", "label": "memory",
                        "kind": f"longmemeval-{kind}", "text": r["question"]})
    return out


def main() -> None:
    for path in (LOCOMO, LONGMEMEVAL):
        if not path.exists():
            sys.exit(f"error: {path} not found (the shared data at ROOT/../shared/data)")
    rng = random.Random(11)
    written = [json.loads(line) for line in (HERE / "written.jsonl").open(encoding="utf-8")]
    messages = locomo(rng) + longmemeval(rng) + written
    seen: set[str] = set()
    out = []
    for m in messages:
        key = " ".join(m["text"].lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append({**m, "split": split_of(m["id"])})
    target = HERE / "messages.jsonl"
    with target.open("w", encoding="utf-8") as f:
        for m in out:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for m in out:
        counts[(m["split"], m["label"])] += 1
    print(f"{len(out)} messages -> {target}: " + ", ".join(
        f"{s}/{lab} {n}" for (s, lab), n in sorted(counts.items())))


if __name__ == "__main__":
    main()
