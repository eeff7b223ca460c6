r"""The MCP server over stdio on the 14k MDN pages: tool round trips, start-up, idle CPU.

    .venv/bin/python bench/mcp_server.py [--runs 3] [--queries 100] [--passes 2] [--idle 30]

MDN is copied once (with file times) to $VAULTMEM_BENCH_TMP/mcp/files (default
/tmp/vaultmem-bench), with `.vaultmem/config.toml` mapping its /en-US/docs/ links onto the vault
(as the graph benchmark does) and one persona note, `personas/web-dev.md`, linking 16 MDN pages;
its index (text and wordllama vectors) lives at the default place inside that copy and is kept
between runs. Each run then starts `vaultmem --vault COPY mcp` as a stdio subprocess and talks to
it with the MCP SDK's client:

  - start: spawn to the first `search` answer (Python start, imports, the MCP handshake, the
    index opened, the catch-up reindex, the embedding model loaded);
  - one warm-up pass, then the timed passes: `search` (hybrid, limit 10) over fixed queries
    (the first of bench/search.py's seed-42 queries: MDN page titles), `read_note` of fixed
    random notes, `persona_context` of the persona; round trips through the client, in ms;
  - idle: the server's CPU time (user + system, /proc) over --idle seconds with no request;
  - then --starts more start-only runs (spawn, first `search`, close): the start figure is the
    median over all starts.

Baselines in the same run: each timed MCP call is followed by the same call straight through
the core API in this process (Vault.search with its vectors in memory, Vault.read_note,
persona.load_persona), so both see the same machine load; and the CLI (`vaultmem search QUERY
--json`, a process per query) for the first 5 queries.
Writes bench/results/mcp.json.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DEFAULT_MDN_DIR,
    PYTHON,
    ROOT,
    WORK,
    ensure_mdn,
    machine_info,
    md_files,
    percentile,
    snapshot_code,
    write_json,
)
from search import make_queries

SEED = 42
TARGETS_MS = {"search": 30.0, "read_note": 10.0, "persona_context": 200.0, "start": 2000.0}
PERSONA_SLUG = "web-dev"
PERSONA_LINKS = [
    "en-us/web/javascript/reference/global_objects/array/index.md",
    "en-us/web/javascript/reference/global_objects/promise/index.md",
    "en-us/web/javascript/reference/statements/async_function/index.md",
    "en-us/web/api/fetch_api/index.md",
    "en-us/web/api/fetch_api/using_fetch/index.md",
    "en-us/web/http/guides/cors/index.md",
    "en-us/web/css/guides/grid_layout/index.md",
    "en-us/web/css/guides/flexible_box_layout/index.md",
    "en-us/web/html/reference/elements/dialog/index.md",
    "en-us/web/api/web_components/index.md",
    "en-us/web/accessibility/aria/index.md",
    "en-us/web/api/service_worker_api/index.md",
    "en-us/web/api/indexeddb_api/index.md",
    "en-us/web/api/websockets_api/index.md",
    "en-us/web/javascript/guide/modules/index.md",
    "en-us/web/security/index.md",
]


def persona_note(root: Path) -> str:
    links = [p for p in PERSONA_LINKS if (root / p).exists()]
    if len(links) < 8:
        raise SystemExit(f"only {len(links)} of the persona's MDN pages exist: update the list")
    cut = len(links) // 2

    def bullet(p: str) -> str:
        return f"- [[{p.removesuffix('.md')}|{p.split('/')[-2].replace('_', ' ')}]]"

    return "\n".join(
        [
            "---",
            "type: persona",
            "role: Front-end web developer's assistant",
            "budget: 5000",
            "aliases: [webdev]",
            "stack: TypeScript, React, Vite",
            "---",
            "# Web dev assistant",
            "",
            "You help a front-end developer build accessible, fast web apps.",
            "",
            "## Critical Context",
            "",
            "- Support the last two versions of every evergreen browser; no polyfills for IE.",
            *map(bullet, links[:cut]),
            "",
            "## Preferences",
            "",
            "- prefers:: small dependencies and platform APIs over frameworks",
            "- Explain trade-offs in two sentences, then show code.",
            "",
            "## Active Projects",
            "",
            *map(bullet, links[cut:]),
            "",
            "## Decisions Made",
            "",
            "- 2026-10-02: fetch with AbortController instead of axios.",
            "",
        ]
    )


def prepare(mdn_dir: Path) -> Path:
    """The copy of MDN with its config and persona, indexed (incrementally after the first run)."""
    from vaultmem.vault import Vault

    src = ensure_mdn(mdn_dir)
    root = WORK / "mcp" / "files"
    if not (root / "en-us").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        print(f"copying MDN to {root} …", file=sys.stderr, flush=True)
        shutil.copytree(src, root, ignore=shutil.ignore_patterns(".vaultmem"))
    (root / ".vaultmem").mkdir(exist_ok=True)
    (root / ".vaultmem" / "config.toml").write_text(
        '[links]\nurl_prefixes = { "/en-US/docs/" = "en-us/" }\n', encoding="utf-8"
    )
    persona = root / "personas" / f"{PERSONA_SLUG}.md"
    persona.parent.mkdir(exist_ok=True)
    text = persona_note(root)
    if not persona.exists() or persona.read_text(encoding="utf-8") != text:
        persona.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    report = Vault(root).reindex()
    print(f"index: {report.summary()} ({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    return root


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pid() -> int:
    """The `vaultmem … mcp` child of this process (the SDK's stdio client spawned it)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp" in cmd:
            return int(entry.name)
    raise RuntimeError("cannot find the server process")


def summary(ms: list[float]) -> dict[str, float]:
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "max": max(ms),
        "mean": statistics.fmean(ms),
        "n": len(ms),
    }


async def start_once(root: Path, query: str) -> float:
    """Spawn to the first `search` answer, in ms (then the server is closed)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "VAULTMEM_EMBEDDER": "wordllama"}
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "vaultmem", "--vault", str(root), "mcp"], env=env
    )
    with open(WORK / "mcp" / "server-stderr.log", "a") as errlog:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("search", {"query": query})
            ms = (time.perf_counter() - started) * 1000
            assert not result.is_error, result.content
    return ms


def direct_calls(vault: Any) -> dict[str, Any]:
    """The core API calls each tool makes, for the paired in-process baseline."""
    from vaultmem.persona import load_persona

    return {
        "search": lambda a: vault.search(a["query"], 10),
        "read_note": lambda a: vault.read_note(a["ref"]),
        "persona_context": lambda a: load_persona(vault, a["slug"]).to_markdown(),
    }


async def one_run(
    root: Path, vault: Any, queries: list[str], notes: list[str], passes: int, idle: float
) -> dict[str, Any]:
    """One server start; each timed MCP call is followed by the same core call in this process
    (on a warm Vault of its own), so both see the same machine load."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "VAULTMEM_EMBEDDER": "wordllama"}
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "vaultmem", "--vault", str(root), "mcp"], env=env
    )
    core = direct_calls(vault)
    out: dict[str, Any] = {}
    errlog = open(WORK / "mcp" / "server-stderr.log", "a")  # noqa: SIM115 - closed below
    try:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog)) as client:
            first = await client.call_tool("search", {"query": queries[0]})
            out["start_ms"] = (time.perf_counter() - started) * 1000
            assert not first.is_error, first.content
            pid = server_pid()

            async def timed(tool: str, args: dict[str, Any]) -> float:
                t = time.perf_counter()
                result = await client.call_tool(tool, args)
                ms = (time.perf_counter() - t) * 1000
                if result.is_error:
                    raise RuntimeError(f"{tool} {args}: {result.content}")
                return ms

            def timed_core(tool: str, args: dict[str, Any]) -> float:
                t = time.perf_counter()
                core[tool](args)
                return (time.perf_counter() - t) * 1000

            calls: dict[str, list[dict[str, Any]]] = {
                "search": [{"query": q} for q in queries],
                "read_note": [{"ref": n} for n in notes],
                "persona_context": [{"slug": PERSONA_SLUG}] * 20,
            }
            for tool, arg_list in calls.items():  # warm-up (vectors finish loading meanwhile)
                for args in arg_list:
                    await timed(tool, args)
                    timed_core(tool, args)
            cpu_before, idle_started = cpu_seconds(pid), time.perf_counter()
            await anyio.sleep(idle)
            idle_wall = time.perf_counter() - idle_started
            out["idle"] = {
                "seconds": round(idle_wall, 2),
                "cpu_seconds": round(cpu_seconds(pid) - cpu_before, 3),
            }
            for tool, arg_list in calls.items():
                mcp_ms, core_ms = [], []
                for _ in range(passes):
                    for args in arg_list:
                        mcp_ms.append(await timed(tool, args))
                        core_ms.append(timed_core(tool, args))
                out[tool] = summary(mcp_ms)
                out[f"{tool}_core"] = summary(core_ms)
            sizes = []
            for n in notes:
                body = (await client.call_tool("read_note", {"ref": n})).content[1]  # the text
                sizes.append(len(getattr(body, "text", "")))
            out["read_note_chars_median"] = statistics.median(sizes)
    finally:
        errlog.close()
    return out


def cli(root: Path, queries: list[str]) -> dict[str, Any]:
    ms = []
    for q in queries:
        t = time.perf_counter()
        subprocess.run(
            [PYTHON, "-m", "vaultmem", "--vault", str(root), "search", q, "--json"],
            check=True,
            capture_output=True,
            env={**os.environ, "VAULTMEM_EMBEDDER": "wordllama"},
        )
        ms.append((time.perf_counter() - t) * 1000)
    return summary(ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="server starts, each a full measurement")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--notes", type=int, default=100)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--idle", type=float, default=30.0, help="idle seconds measured per run")
    ap.add_argument("--starts", type=int, default=7, help="extra start-only runs")
    ap.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    args = ap.parse_args()

    import anyio

    code = snapshot_code()
    machine = machine_info()
    root = prepare(args.mdn_dir)
    rng = random.Random(SEED)
    paths = md_files(root / "en-us")
    queries = [q for kind, q in make_queries(root, paths) if kind != "hostile"][: args.queries]
    notes = [os.path.relpath(p, root) for p in rng.sample(paths, args.notes)]

    from vaultmem.vault import Vault

    vault = Vault(root)
    vault.embedder_spec = "wordllama"
    vault.warm(background=False)
    load_before = os.getloadavg()
    runs = []
    for i in range(args.runs):
        run = anyio.run(one_run, root, vault, queries, notes, args.passes, args.idle)
        runs.append(run)
        print(
            f"run {i + 1}: start {run['start_ms']:.0f} ms; p50 search {run['search']['p50']:.1f}, "
            f"read_note {run['read_note']['p50']:.1f}, persona_context "
            f"{run['persona_context']['p50']:.1f} ms; idle CPU {run['idle']['cpu_seconds']} s "
            f"in {run['idle']['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    starts = [run["start_ms"] for run in runs]
    for i in range(args.starts):
        starts.append(anyio.run(start_once, root, queries[(i + 1) % len(queries)]))
        time.sleep(1)  # the previous server's exit is not part of the next start
    cli_search = cli(root, queries[:5])

    def med(key: str, stat: str = "p50") -> float:
        return statistics.median(r[key][stat] for r in runs)

    figures = {
        "search": med("search"),
        "read_note": med("read_note"),
        "persona_context": med("persona_context"),
        "start": statistics.median(starts),
    }
    idle_cpu = statistics.median(r["idle"]["cpu_seconds"] for r in runs)
    targets = {
        name: {
            "target_ms": f"<= {TARGETS_MS[name]:g}",
            "value": value,
            "met": value <= TARGETS_MS[name],
        }
        for name, value in figures.items()
    }
    out = write_json(
        "mcp.json",
        {
            "dataset": "mdn (copy + 1 persona note)",
            "transport": "stdio",
            "runs": args.runs,
            "queries": len(queries),
            "notes": len(notes),
            "passes": args.passes,
            "idle_seconds": args.idle,
            "seed": SEED,
            "machine": machine,
            "load_average_1_5_15": {"before": load_before, "after": os.getloadavg()},
            "code": code,
            "median_of_runs": {
                **figures,
                "search_p95": med("search", "p95"),
                "idle_cpu_seconds": idle_cpu,
            },
            "start_ms_all": [round(ms) for ms in starts],
            "targets": targets,
            "baseline_core_api_p50_median_of_runs": {
                name: med(f"{name}_core") for name in ("search", "read_note", "persona_context")
            },
            "baseline_cli_search": cli_search,
            "per_run": runs,
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
    )
    print(f"\n### MCP server over stdio, MDN ({len(paths):,} pages), median of {args.runs} runs\n")
    print("| call | MCP round trip p50 / p95 ms | core API in-process p50 ms | target | status |")
    print("|---|---:|---:|---|---|")
    for name in ("search", "read_note", "persona_context"):
        p95 = med(name, "p95")
        print(
            f"| `{name}` | {figures[name]:.1f} / {p95:.1f} | {med(name + '_core'):.1f} | "
            f"<= {TARGETS_MS[name]:g} | {'met' if targets[name]['met'] else 'NOT met'} |"
        )
    print(
        f"| start to first answer ({len(starts)} starts) | {figures['start']:.0f} | | <= 2000 | "
        f"{'met' if targets['start']['met'] else 'NOT met'} |"
    )
    print(
        f"\nidle: {idle_cpu} s of CPU in {args.idle:g} s; CLI `vaultmem search` per query "
        f"(a process each): p50 {cli_search['p50']:.0f} ms"
    )
    print(f"(JSON: {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
