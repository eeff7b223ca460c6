r"""Persona load time over the 14k MDN pages, against `show` of the persona note in the same run.

    .venv/bin/python bench/persona.py [--runs 5] [--loads 20] [--links 60] [--members 300]

Builds once, under $VAULTMEM_BENCH_TMP (default /tmp/vaultmem-bench)/persona-mdn: a copy of the
MDN pages (the shared data is never written) with a persona, `personas/bench.md`, whose sections
link to --links pages drawn with a fixed seed (10 in Critical Context, 20 in Active Projects, the
rest in Preferences and Decisions Made), and `persona: bench` added to the front matter of
--members other pages (a persona note is instructions a person writes and keeps short: with 60
links it is ~3,000 characters; the many notes belong to it through their property). It is
indexed without vectors: loading a persona reads none.

Each run is a fresh child process that measures, in the same process:
  - load_cold_ms: the first load_persona of the process (first queries, first file reads);
  - load_ms: the median of --loads further loads (a long-running MCP server or TUI);
  - load_50k_ms: the same with a 50,000-character budget (ten times the default: more files);
  - baseline show_ms: the median of Vault.show() of the persona note (its metadata, headings,
    links and backlinks: the cheapest existing command about the same note);
and, end to end as an agent's shell would run them, `vaultmem persona load bench` against
`vaultmem show personas/bench.md` (process start to exit). Every run checks that the context is
byte-identical (sha256). Writes bench/results/persona.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    PYTHON,
    WORK,
    ensure_mdn,
    machine_info,
    md_files,
    run_child,
    snapshot_code,
    write_json,
)

TARGET_MS = 200.0
SEED = 6
PERSONA = "personas/bench.md"
CONFIG = '[links]\nurl_prefixes = { "/en-US/docs/" = "en-us/" }\n'


def persona_text(links: list[str]) -> str:
    def items(paths: list[str]) -> str:
        return "".join(f"- [[{p.removesuffix('.md')}]]\n" for p in paths)

    a, b, c = links[:10], links[10:30], links[30:]
    half = len(c) // 2
    return (
        "---\ntype: persona\nrole: Web platform tutor for a front-end team\nbudget: 5000\n"
        "tags: [persona]\n---\n# Web platform tutor\n\n"
        "You help a team of front-end engineers use the web platform well. Prefer standard APIs\n"
        "over libraries, cite the MDN page a fact comes from, and give runnable examples.\n\n"
        f"## Critical Context\n\n{items(a)}\n## Preferences\n\n{items(c[:half])}\n"
        f"## Active Projects\n\n{items(b)}\n"
        "## Key Facts\n\nbrowsers:: last two versions of Chrome, Firefox and Safari\n"
        "framework:: none (web components)\n\n"
        f"## Decisions Made\n\n{items(c[half:])}"
    )


def prepare(mdn_dir: Path, n_links: int, n_members: int) -> Path:
    """The bench vault (copied MDN + persona + members), indexed and brought up to date."""
    from vaultmem.vault import Vault

    src = ensure_mdn(mdn_dir)
    root = WORK / "persona-mdn"
    stamp = root / ".vaultmem" / "bench-stamp.json"
    wanted = {"links": n_links, "members": n_members, "seed": SEED}
    if not (stamp.exists() and json.loads(stamp.read_text()) == wanted):
        shutil.rmtree(root, ignore_errors=True)
        print(f"copying MDN into {root} …", file=sys.stderr, flush=True)
        shutil.copytree(src, root)
        pages = sorted(Path(p).relative_to(root).as_posix() for p in md_files(root))
        chosen = random.Random(SEED).sample(pages, n_links + n_members)
        (root / "personas").mkdir()
        (root / PERSONA).write_text(persona_text(chosen[:n_links]), encoding="utf-8")
        for rel in chosen[n_links:]:
            page = root / rel
            text = page.read_text(encoding="utf-8")
            if text.startswith("---\n"):
                page.write_text("---\npersona: bench\n" + text[4:], encoding="utf-8")
            else:
                page.write_text("---\npersona: bench\n---\n" + text, encoding="utf-8")
        (root / ".vaultmem").mkdir(exist_ok=True)
        (root / ".vaultmem" / "config.toml").write_text(CONFIG, encoding="utf-8")
        print("indexing (text only) …", file=sys.stderr, flush=True)
        started = time.perf_counter()
        Vault(root).reindex(full=True, embed=False)
        print(f"indexed in {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
        stamp.write_text(json.dumps(wanted))
    Vault(root).reindex(embed=False)  # nothing to do unless the copy changed
    return root


def child(root: str, loads: int) -> None:
    from vaultmem.persona import load_persona
    from vaultmem.vault import Vault

    def ms(started: float) -> float:
        return (time.perf_counter() - started) * 1000

    t = time.perf_counter()
    vault = Vault(Path(root))
    context = load_persona(vault, "bench")
    out: dict[str, object] = {"load_cold_ms": ms(t)}
    timings: dict[str, list[float]] = {"load_ms": [], "load_50k_ms": [], "show_ms": []}
    for _ in range(loads):
        t = time.perf_counter()
        again = load_persona(vault, "bench")
        timings["load_ms"].append(ms(t))
        assert again == context
        t = time.perf_counter()
        big = load_persona(vault, "bench", 50_000)
        timings["load_50k_ms"].append(ms(t))
        t = time.perf_counter()
        vault.show(PERSONA)
        timings["show_ms"].append(ms(t))
    out.update({k: statistics.median(v) for k, v in timings.items()})
    out.update(
        sha256=hashlib.sha256(context.to_markdown().encode()).hexdigest(),
        used=context.used,
        usage=context.usage(),
        notes=sum(p.kind == "working_set" for p in context.parts),
        left_out=len(context.left_out),
        notes_50k=sum(p.kind == "working_set" for p in big.parts),
        used_50k=big.used,
    )
    print(json.dumps(out))


def cli_ms(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([PYTHON, "-m", "vaultmem", *args], check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--loads", type=int, default=20)
    ap.add_argument("--links", type=int, default=60)
    ap.add_argument("--members", type=int, default=300)
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    ap.add_argument("--child", nargs=2, metavar=("VAULT", "LOADS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    code = snapshot_code()
    root = prepare(args.mdn_dir, args.links, args.members)
    runs = [
        run_child([PYTHON, __file__, "--child", str(root), str(args.loads)])
        for _ in range(args.runs)
    ]
    hashes = {r["sha256"] for r in runs}
    cli = {"persona_load_ms": [], "show_ms": []}
    for _ in range(args.runs):
        cli["persona_load_ms"].append(cli_ms(["--vault", str(root), "persona", "load", "bench"]))
        cli["show_ms"].append(cli_ms(["--vault", str(root), "show", PERSONA]))
    keys = ["load_cold_ms", "load_ms", "load_50k_ms", "show_ms"]
    summary = {k: round(statistics.median(r[k] for r in runs), 2) for k in keys}
    summary.update({f"cli_{k}": round(statistics.median(v), 1) for k, v in cli.items()})
    first = runs[0]
    result = {
        "dataset": "mdn",
        "pages": len(md_files(root)),
        "persona": {"links": args.links, "members": args.members, "budget": 5000},
        "context": {k: first[k] for k in ("used", "usage", "notes", "left_out", "notes_50k")},
        "byte_identical_runs": len(hashes) == 1,
        "runs": args.runs,
        "loads_per_run": args.loads,
        "summary": summary,
        "target_ms": TARGET_MS,
        "met": max(summary["load_cold_ms"], summary["load_ms"]) <= TARGET_MS,
        "machine": machine_info(),
        "code": code,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "raw": runs,
        "raw_cli": cli,
    }
    write_json("persona.json", result)
    print(f"### persona load over MDN ({result['pages']:,} pages), median of {args.runs} runs\n")
    print("| measure | persona load | baseline: show of the persona note |\n|---|---:|---:|")
    print(f"| first load in a process (ms) | {summary['load_cold_ms']} | |")
    print(f"| warm load, budget 5,000 (ms) | {summary['load_ms']} | {summary['show_ms']} |")
    print(f"| warm load, budget 50,000 (ms) | {summary['load_50k_ms']} | |")
    print(
        f"| CLI process, start to exit (ms) | {summary['cli_persona_load_ms']} | "
        f"{summary['cli_show_ms']} |"
    )
    print(
        f"\ncontext: {first['used']} chars, {first['notes']} notes, {first['left_out']} left out "
        f"(50k budget: {first['notes_50k']} notes); byte-identical across runs: "
        f"{result['byte_identical_runs']}; target ≤ {TARGET_MS:g} ms: "
        f"{'met' if result['met'] else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
