r"""Memory that answers questions: LoCoMo captured, every candidate accepted, then searched.

    nice .venv/bin/python bench/capture_qa.py [--conversations N] [--mode keyword|hybrid]

For each LoCoMo conversation, in a fresh vault: every session is captured
(`vault.captures.capture`, the offline rules) and every candidate accepted as a script would
(`vault.captures.accept(all_items=True)`: facts into the speakers' entity notes with `was::`
history, loops, decisions, one episode note per session), through the real write path. The
capture notes themselves are excluded from the index (`exclude = ["inbox/**"]`): the search
runs over the accepted facts and episodes only. LoCoMo's questions (categories 1-4; the
adversarial category 5 has no answer to find) are asked with `vault.search`, top 5.

recall@5 of evidence turns "through the quotes": a hit's snippet (the matched part of its
section) is traced back to the candidates whose value it shows, and so to their turns; a
question counts as found when any of its evidence turns is among them. Baseline in the same
run: the raw sessions as notes (one paragraph per turn, `D1:3 Caroline: text`), searched the
same way, a hit's snippet counting the turns whose ids it shows.

Writes bench/results/capture-qa.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultmem.capture.transcript import parse  # noqa: E402
from vaultmem.memory.values import normalise  # noqa: E402
from vaultmem.vault import HIGHLIGHT_END, HIGHLIGHT_START, Vault  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "memory" / "locomo" / "locomo10.json"
RESULTS = ROOT / "bench" / "results" / "capture-qa.json"
DIA = re.compile(r"\bD\d+:\d+\b")
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def evidence(qa: dict) -> set[str]:
    out: set[str] = set()
    for e in qa.get("evidence") or []:
        out.update(DIA.findall(str(e).replace(";", " ")))
    return out


def plain(snippet: str) -> str:
    return snippet.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "")


def accepted_vault(root: Path, sample: dict, raw: bytes) -> tuple[Vault, dict[str, set[str]], dict]:
    (root / ".obsidian").mkdir(parents=True)
    (root / ".vaultmem").mkdir()
    (root / ".vaultmem" / "config.toml").write_text('exclude = ["inbox/**"]\n', encoding="utf-8")
    vault = Vault(root)
    vault.embedder_spec = os.environ.get("VAULTMEM_EMBEDDER", "fake")
    vault.reindex()
    transcript = parse(raw, sample["sample_id"])
    by_value: dict[str, set[str]] = {}
    counts = {"captured": 0, "accepted": 0, "capture_s": [], "accept_s": []}
    for label in transcript.sessions:
        session = transcript.session(label)
        started = time.perf_counter()
        result = vault.captures.capture(session, source=f"{sample['sample_id']} {label}", now=NOW)
        counts["capture_s"].append(time.perf_counter() - started)
        if result.status != "written":
            continue
        counts["captured"] += len(result.candidates)
        for c in result.candidates:
            if c.kind != "episode":
                by_value.setdefault(normalise(c.value), set()).add(c.turn)
        started = time.perf_counter()
        decisions = vault.captures.accept(all_items=True, today=NOW.date())
        counts["accept_s"].append(time.perf_counter() - started)
        counts["accepted"] += sum(d.status == "accepted" for d in decisions)
    return vault, by_value, counts


def raw_vault(root: Path, sample: dict) -> Vault:
    (root / ".obsidian").mkdir(parents=True)
    conv = sample["conversation"]
    for key, turns in conv.items():
        if isinstance(turns, list):
            text = f"# {key} ({conv.get(key + '_date_time', '')})\n\n" + "\n\n".join(
                f"{t['dia_id']} {t['speaker']}: {t['text']}" for t in turns
            )
            (root / f"{key}.md").write_text(text + "\n", encoding="utf-8")
    vault = Vault(root)
    vault.embedder_spec = os.environ.get("VAULTMEM_EMBEDDER", "fake")
    vault.reindex()
    return vault


def turns_in_accepted(snippet: str, by_value: dict[str, set[str]]) -> set[str]:
    text = normalise(plain(snippet))
    found: set[str] = set()
    for value, turns in by_value.items():
        if len(value) >= 8 and value[:60] in text:
            found |= turns
    return found


def score(vault: Vault, questions: list[dict], mode: str, trace) -> tuple[int, list[float]]:  # type: ignore[no-untyped-def]
    found = 0
    times = []
    for qa in questions:
        started = time.perf_counter()
        hits = vault.search(qa["question"], limit=5, mode=mode).hits  # type: ignore[arg-type]
        times.append(time.perf_counter() - started)
        turns: set[str] = set()
        for hit in hits:
            turns |= trace(hit.snippet)
        found += bool(turns & evidence(qa))
    return found, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"LoCoMo is not at {DATA}: see ../shared/data/README.md")
    samples = json.loads(DATA.read_bytes())[: args.conversations]
    load = os.getloadavg()
    rows = []
    for sample in samples:
        questions = [q for q in sample["qa"] if q.get("category") != 5 and evidence(q)]
        raw = json.dumps(sample).encode()
        tmp = Path(tempfile.mkdtemp(prefix="capture-qa-"))
        try:
            started = time.perf_counter()
            vault, by_value, counts = accepted_vault(tmp / "accepted", sample, raw)
            build = time.perf_counter() - started
            trace = partial(turns_in_accepted, by_value=by_value)
            got, times = score(vault, questions, args.mode, trace)
            baseline = raw_vault(tmp / "raw", sample)
            base, base_times = score(
                baseline, questions, args.mode, lambda s: set(DIA.findall(plain(s)))
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        row = {
            "sample": sample["sample_id"],
            "questions": len(questions),
            "accepted_recall_at_5": round(got / len(questions), 4),
            "raw_sessions_recall_at_5": round(base / len(questions), 4),
            "candidates": counts["captured"],
            "accepted": counts["accepted"],
            "capture_session_median_s": round(statistics.median(counts["capture_s"]), 3),
            "accept_all_session_median_s": round(statistics.median(counts["accept_s"]), 3),
            "build_seconds": round(build, 1),
            "search_median_ms": round(statistics.median(times) * 1000, 1),
            "raw_search_median_ms": round(statistics.median(base_times) * 1000, 1),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    total = sum(r["questions"] for r in rows)
    summary = {
        "mode": args.mode,
        "embedder": os.environ.get("VAULTMEM_EMBEDDER", "fake"),
        "questions": total,
        "accepted_recall_at_5": round(
            sum(r["accepted_recall_at_5"] * r["questions"] for r in rows) / total, 4
        ),
        "raw_sessions_recall_at_5": round(
            sum(r["raw_sessions_recall_at_5"] * r["questions"] for r in rows) / total, 4
        ),
        "load": load,
        "load_after": os.getloadavg(),
        "conversations": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "conversations"}))


if __name__ == "__main__":
    main()
