r"""Capture against people's reading of real conversations: LoCoMo's annotated observations.

    nice .venv/bin/python bench/capture_locomo.py [--runs 3] [--json]

Every session of LoCoMo's 10 conversations (`../shared/data/memory/locomo/locomo10.json`) is
read as the `capture` command reads a file (`vaultmem.capture.transcript.parse`, one
transcript per session), the offline extractor proposes candidates and the default
`[capture]` gates keep some (the session's episode is left out of the counts: it cites the
session's first turn by construction). LoCoMo annotates, per session, observations about each
speaker, each pointing at the dialogue turn it came from.

- evidence recall: the share of observed turns that yield at least one candidate;
- precision: the share of candidates whose turn carries an observation (per candidate, as the
  issue defines it; per turn with a candidate beside it);
- baselines in the same run: every turn a candidate (precision = the share of observed turns),
  and every turn with a first-person word;
- time: extraction + gates + rendering the capture note of one session, median over the
  sessions, median of `--runs` runs, beside reading the session alone.

Split: the rules were shaped by reading the misses and false alarms of conv-26, conv-30 and
conv-41 (`dev`); the other seven conversations (`held-out`) were only ever scored in aggregate.
Writes bench/results/capture-locomo.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultmem.capture import note as capture_note  # noqa: E402
from vaultmem.capture.extract import extract  # noqa: E402
from vaultmem.capture.gates import CaptureSettings, apply_gates  # noqa: E402
from vaultmem.capture.transcript import Transcript, parse, transcripts_of  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "memory" / "locomo" / "locomo10.json"
RESULTS = ROOT / "bench" / "results" / "capture-locomo.json"
DEV = ("conv-26", "conv-30", "conv-41")
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|we|our|us)\b", re.IGNORECASE)
HEADER = capture_note.Header(
    "bench", dt.datetime(2026, 12, 1, tzinfo=dt.UTC), "0" * 64, "heuristic"
)


def conv_of(session: Transcript) -> str:
    return session.turns[0].session.split("/")[0]


def observed_turns(samples: list[dict]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for sample in samples:
        for observations in sample["observation"].values():
            for facts in observations.values():
                for _fact, evidence in facts:
                    ids = evidence if isinstance(evidence, list) else [evidence]
                    out.update((sample["sample_id"], str(e)) for e in ids)
    return out


def score(
    sessions: list[Transcript], observed: set[tuple[str, str]], settings: CaptureSettings
) -> dict:
    turns: set[tuple[str, str]] = set()
    fp_turns: set[tuple[str, str]] = set()
    found_turns: set[tuple[str, str]] = set()
    candidates = hits = 0
    kinds: dict[str, int] = {}
    for session in sessions:
        sample = session.turns[0].session.split("/")[0]
        for t in session.turns:
            turns.add((sample, t.ref))
            if FIRST_PERSON.search(t.text):
                fp_turns.add((sample, t.ref))
        for c in apply_gates(extract(session).candidates, settings).kept:
            if c.kind == "episode":
                continue
            kinds[c.kind] = kinds.get(c.kind, 0) + 1
            candidates += 1
            hit = (sample, c.turn) in observed
            hits += hit
            found_turns.add((sample, c.turn))
    labelled = observed & turns
    return {
        "sessions": len(sessions),
        "turns": len(turns),
        "observed_turns": len(labelled),
        "candidates": candidates,
        "kinds": kinds,
        "evidence_recall": round(len(found_turns & labelled) / len(labelled), 4),
        "precision": round(hits / candidates, 4) if candidates else None,
        "precision_per_turn": round(len(found_turns & labelled) / len(found_turns), 4),
        "baseline_every_turn": {"recall": 1.0, "precision": round(len(labelled) / len(turns), 4)},
        "baseline_first_person_turns": {
            "recall": round(len(fp_turns & labelled) / len(labelled), 4),
            "precision": round(len(fp_turns & labelled) / len(fp_turns), 4),
        },
    }


def timing(sessions: list[Transcript], raw: dict[str, bytes], runs: int) -> dict:
    settings = CaptureSettings()
    capture_runs, read_runs = [], []
    for _ in range(runs):
        per_capture, per_read = [], []
        for session in sessions:
            started = time.perf_counter()
            parse(raw[session.turns[0].session])
            per_read.append(time.perf_counter() - started)
            started = time.perf_counter()
            kept = apply_gates(extract(session).candidates, settings).kept
            capture_note.render(HEADER, kept)
            per_capture.append(time.perf_counter() - started)
        capture_runs.append(statistics.median(per_capture))
        read_runs.append(statistics.median(per_read))
    return {
        "runs": runs,
        "capture_session_median_ms": round(statistics.median(capture_runs) * 1000, 2),
        "capture_session_max_of_run_medians_ms": round(max(capture_runs) * 1000, 2),
        "read_session_median_ms": round(statistics.median(read_runs) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"LoCoMo is not at {DATA}: see ../shared/data/README.md")
    data = DATA.read_bytes()
    samples = json.loads(data)
    sessions = transcripts_of([parse(data, "locomo10.json")])
    observed = observed_turns(samples)
    # each session alone as a file, as `capture` would read it, for the reading baseline
    raw: dict[str, bytes] = {}
    for sample in samples:
        conv = sample["conversation"]
        for key, turns in conv.items():
            if isinstance(turns, list):
                raw[f"{sample['sample_id']}/{key}"] = json.dumps(turns).encode()
    settings = CaptureSettings()
    results = {
        "dataset": "LoCoMo locomo10.json (10 conversations, 272 sessions)",
        "settings": {"min_confidence": settings.min_confidence,
                     "min_value_chars": settings.min_value_chars,
                     "max_candidates": settings.max_candidates},
        "load": os.getloadavg(),
        "all": score(sessions, observed, settings),
        "dev": score([s for s in sessions if conv_of(s) in DEV], observed, settings),
        "held-out": score([s for s in sessions if conv_of(s) not in DEV], observed, settings),
        "time": timing(sessions, raw, args.runs),
    }  # fmt: skip
    results["load_after"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        "| split | sessions | observed turns | candidates | evidence recall | precision |"
        " precision per turn | every turn (P) | first-person turns (R / P) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for split in ("dev", "held-out", "all"):
        r = results[split]
        fp = r["baseline_first_person_turns"]
        print(
            f"| {split} | {r['sessions']} | {r['observed_turns']} | {r['candidates']} |"
            f" {r['evidence_recall']} | {r['precision']} | {r['precision_per_turn']} |"
            f" {r['baseline_every_turn']['precision']} | {fp['recall']} / {fp['precision']} |"
        )
    t = results["time"]
    print(
        "\ncapture of one session (extract + gates + note): median"
        f" {t['capture_session_median_ms']} ms (worst run median"
        f" {t['capture_session_max_of_run_medians_ms']} ms); reading it"
        f" alone {t['read_session_median_ms']} ms; load {results['load']}"
    )


if __name__ == "__main__":
    main()
