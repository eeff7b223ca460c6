r"""The memory gate on a labelled set: precision and recall of "needs memory", and searches spared.

    .venv/bin/python bench/memory_gate.py [--split dev|heldout|all] [--errors] [--no-names]
                                          [--json]

Reads bench/gate/messages.jsonl (built by bench/gate/build.py: LoCoMo and LongMemEval questions
labelled `memory`, hand-written everyday requests labelled `none`, hard cases both ways; each
message in the `dev` half the rules were tuned on, or the `heldout` half they never were) and
the vault's note names from bench/gate/entities.txt (what the index would hand the gate).
Each message goes through `vaultmem.memory.gate.classify(message, names)` offline: no index,
so no hit strength (`best_hit=None`). A message counts as predicted "needs memory" when the
verdict is needs-memory or nothing-stored. "Spared" = decided no-memory without a search.
--no-names runs the rules without the note names (an ablation: what the names add).

`wired` runs the same messages through `vault.memory.gate` (what `vaultmem gate` calls) over a
vault holding one note per line of entities.txt, indexed: names and search hits from the index.

Prints a table per split; --errors lists the misclassified messages of the chosen split(s)
with the gate's reasons; writes bench/results/memory-gate.json (all splits, both settings).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultmem.memory.gate import classify  # noqa: E402
from vaultmem.memory.mentions import EntityName  # noqa: E402

GATE_DIR = ROOT / "bench" / "gate"
RESULTS = ROOT / "bench" / "results" / "memory-gate.json"


def load_names(path: Path) -> list[EntityName]:
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = tuple(p.strip() for p in line.split("|") if p.strip())
        names.append(EntityName(f"entities/{parts[0]}.md", parts))
    return names


def evaluate(messages: list[dict], names: list[EntityName]) -> dict:
    tp = fp = fn = tn = spared = spared_none = 0
    errors = []
    started = time.perf_counter()
    for m in messages:
        d = classify(m["text"], names)
        predicted = d.verdict != "no-memory"
        actual = m["label"] == "memory"
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not actual and not predicted
        spared += not d.search
        spared_none += not d.search and not actual
        if predicted != actual:
            errors.append({"id": m["id"], "label": m["label"], "kind": m["kind"],
                           "text": m["text"][:160], "verdict": d.verdict,
                           "score": d.score, "reasons": list(d.reasons)})
    elapsed = time.perf_counter() - started
    n = len(messages)
    return {
        "messages": n,
        "memory": tp + fn,
        "none": tn + fp,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "accuracy": round((tp + tn) / n, 4) if n else None,
        "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "spared": spared,
        "spared_share": round(spared / n, 4) if n else None,
        "spared_of_none": spared_none,
        "ms_per_message": round(elapsed / n * 1000, 3) if n else None,
        "errors": errors,
    }


def wired_vault(path: Path) -> Any:
    """A vault holding a note per line of entities.txt (title, aliases, a line of text), indexed:
    the gate as `vaultmem gate` runs it, names and hits from the index."""
    import shutil

    from vaultmem.vault import Vault

    shutil.rmtree(path, ignore_errors=True)
    (path / "entities").mkdir(parents=True)
    for name in load_names(GATE_DIR / "entities.txt"):
        title, *aliases = name.names
        front = f"---\naliases: {json.dumps(aliases)}\n---\n" if aliases else ""
        (path / name.path).write_text(f"{front}# {title}\n\nNotes about {title}.\n", "utf-8")
    vault = Vault(path, path.parent / "gate-index.db")
    vault.reindex(embed=False, full=True)
    return vault


def evaluate_wired(messages: list[dict], vault: Any) -> dict:
    import datetime as dt

    now = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)
    tp = fp = fn = tn = spared = spared_none = 0
    times = []
    for m in messages:
        t = time.perf_counter()
        d = vault.memory.gate(m["text"], now).decision
        times.append((time.perf_counter() - t) * 1000)
        predicted, actual = d.verdict != "no-memory", m["label"] == "memory"
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not actual and not predicted
        spared += not d.search
        spared_none += not d.search and not actual
    n = len(messages)
    return {
        "messages": n, "memory": tp + fn, "none": tn + fp,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "accuracy": round((tp + tn) / n, 4) if n else None,
        "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "spared": spared, "spared_share": round(spared / n, 4) if n else None,
        "spared_of_none": spared_none,
        "ms_per_message": round(sum(times) / n, 3) if n else None,
        "p50_ms": round(sorted(times)[n // 2], 3) if n else None,
        "errors": [],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    parser.add_argument("--errors", action="store_true", help="list misclassified messages")
    parser.add_argument("--no-names", action="store_true", help="only the ablation without names")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    messages = [json.loads(x) for x in (GATE_DIR / "messages.jsonl").open(encoding="utf-8")]
    names = load_names(GATE_DIR / "entities.txt")
    results: dict[str, dict] = {}
    for setting, given in (("names", names), ("no-names", [])):
        if args.no_names and setting == "names":
            continue
        for split in ("dev", "heldout", "all"):
            chosen = [m for m in messages if split == "all" or m["split"] == split]
            results[f"{setting}/{split}"] = evaluate(chosen, given)
    if not args.no_names:  # the wired gate: vault.memory.gate over an indexed vault
        import os
        import tempfile

        work = Path(os.environ.get("VAULTMEM_BENCH_TMP", tempfile.gettempdir())) / "gate-vault"
        vault = wired_vault(work / "vault")
        vault.memory.gate("warm up", __import__("datetime").datetime.now())
        for split in ("dev", "heldout", "all"):
            chosen = [m for m in messages if split == "all" or m["split"] == split]
            results[f"wired/{split}"] = evaluate_wired(chosen, vault)
    if args.json:
        print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "errors"}
                          for k, v in results.items()}, indent=2))
    else:
        print("| setting/split | messages | memory | none | precision | recall | spared |"
              " spared no-memory |")
        print("|---|---|---|---|---|---|---|---|")
        for key, r in results.items():
            print(f"| {key} | {r['messages']} | {r['memory']} | {r['none']} | {r['precision']} |"
                  f" {r['recall']} | {r['spared']} ({r['spared_share']:.0%}) |"
                  f" {r['spared_of_none']} of {r['none']} |")
    if args.errors:
        setting = "no-names" if args.no_names else "names"
        for split in (("dev", "heldout") if args.split == "all" else (args.split,)):
            for e in results[f"{setting}/{split}"]["errors"]:
                print(f"[{split}] {e['label']:6} {e['kind']:28} {e['verdict']:14} {e['score']:5}"
                      f" {e['text']!r}\n        {'; '.join(e['reasons'])}")
    if not args.no_names:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        summary = {k: {kk: vv for kk, vv in v.items() if kk != "errors"}
                   for k, v in results.items()}
        summary["errors_heldout"] = results["names/heldout"]["errors"]
        RESULTS.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                           encoding="utf-8")


if __name__ == "__main__":
    main()
