"""Link-graph benchmark: graph build, `graph path`, the whole gaps report, Louvain clusters.

For each dataset (MDN 14k pages, the kepano vault) an index is built once under
$VAULTMEM_BENCH_TMP (default /tmp/vaultmem-bench); then each run is a fresh child process that
measures, in the same run:
  - floor: the three SQL queries the graph is built from (store.graph_rows);
  - baseline: a bare networkx DiGraph from the same link rows (no node kinds, no relations);
  - vaultmem: Vault.graph() (rows -> GraphNode/GraphEdge -> link_graph.build_graph);
  - path: 200 fixed random note pairs through link_graph.shortest_path (max depth 5), p50/p95,
    against networkx's bidirectional shortest path on the undirected graph as a baseline;
  - gaps: gaps_report() end to end (graph cached, as in a long-running process, and cold);
  - clusters: Louvain once (cold) and from the per-generation cache;
  - peak RSS of the child.
Usage: python bench/graph.py [--runs 3] [--datasets mdn,kepano]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contextlib

from _common import (
    DEFAULT_MDN_DIR,
    KEPANO_VAULT,
    PYTHON,
    WORK,
    ensure_mdn,
    machine_info,
    median,
    percentile,
    require,
    run_child,
    write_json,
)

from vaultmem.config import Config

TARGETS = {"build_s": 1.0, "path_p50_ms": 50.0, "gaps_cold_s": 5.0}


def child(vault_root: str, index: str) -> None:
    import networkx as nx

    from vaultmem import graph as link_graph
    from vaultmem import store
    from vaultmem.gaps import gaps_report
    from vaultmem.vault import Vault

    vault = Vault(Path(vault_root), Path(index), config_for(vault_root))
    conn = vault.conn
    out: dict[str, float] = {}

    t = time.perf_counter()
    rows = store.graph_rows(conn)
    out["floor_rows_s"] = time.perf_counter() - t

    t = time.perf_counter()
    bare = nx.DiGraph()
    bare.add_nodes_from(p for p, _, _ in rows.files)
    bare.add_edges_from((s, d or "wanted:" + k) for s, d, k, *_ in rows.links)
    out["baseline_build_s"] = time.perf_counter() - t + out["floor_rows_s"]

    vault.linkgraph.forget()
    t = time.perf_counter()
    G = vault.graph()
    out["build_s"] = time.perf_counter() - t
    out["nodes"] = G.number_of_nodes()
    out["edges"] = G.number_of_edges()

    notes = sorted(n for n, kind in G.nodes(data="kind") if kind == "note")
    rng = random.Random(7)
    pairs = [(rng.choice(notes), rng.choice(notes)) for _ in range(200)]
    ours, theirs, found = [], [], 0
    undirected = bare.to_undirected(as_view=True)
    for a, b in pairs:
        t = time.perf_counter()
        result = link_graph.shortest_path(G, a, b, max_depth=5)
        ours.append((time.perf_counter() - t) * 1000)
        found += isinstance(result, link_graph.PathResult)
        t = time.perf_counter()
        with contextlib.suppress(nx.NetworkXNoPath):
            nx.bidirectional_shortest_path(undirected, a, b)
        theirs.append((time.perf_counter() - t) * 1000)
    out["path_p50_ms"] = median(ours)
    out["path_p95_ms"] = percentile(ours, 95)
    out["path_found"] = found
    out["baseline_path_p50_ms"] = median(theirs)

    t = time.perf_counter()
    report = gaps_report(vault)
    out["gaps_cached_graph_s"] = time.perf_counter() - t
    vault.linkgraph.forget()
    t = time.perf_counter()
    report = gaps_report(vault)
    out["gaps_cold_s"] = time.perf_counter() - t
    out.update({f"gaps_{k}": v for k, v in report.totals().items()})

    conn.execute("DELETE FROM meta WHERE key = 'clusters'")
    t = time.perf_counter()
    found_clusters = vault.clusters(min_size=3)
    out["clusters_cold_s"] = time.perf_counter() - t
    t = time.perf_counter()
    vault.clusters(min_size=3)
    out["clusters_cached_s"] = time.perf_counter() - t
    out["clusters"] = len(found_clusters)
    # VmHWM, not ru_maxrss: ru_maxrss keeps the high-water mark of the parent that forked this
    # process (it survives exec), and the parent may have just built a big index
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    out["peak_mb"] = int(hwm.split()[1]) / 1024
    print(json.dumps(out))


def config_for(vault_root: str | Path) -> Config:
    """MDN links as `/en-US/docs/Web/API/X`: map them onto its folders, as its site does."""
    if Path(vault_root).name == "files":
        return Config(url_prefixes={"/en-US/docs/": "en-us/"})
    return Config()


def prepare(name: str, mdn_dir: Path) -> tuple[Path, Path]:
    root = ensure_mdn(mdn_dir) if name == "mdn" else require(KEPANO_VAULT, "kepano vault")
    index = WORK / f"graph-{name}.db"
    if not index.exists():
        print(f"indexing {name} into {index} …", file=sys.stderr, flush=True)
        from vaultmem.vault import Vault

        Vault(root, index, config_for(root)).reindex()
    return root, index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--datasets", default="mdn,kepano")
    parser.add_argument("--mdn-dir", type=Path, default=DEFAULT_MDN_DIR)
    parser.add_argument("--child", nargs=2, metavar=("VAULT", "INDEX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    for name in args.datasets.split(","):
        root, index = prepare(name, args.mdn_dir)
        runs = [
            run_child([PYTHON, __file__, "--child", str(root), str(index)])
            for _ in range(args.runs)
        ]
        summary = {k: median([r[k] for r in runs]) for k in runs[0]}
        print(f"\n## {name} (median of {len(runs)} runs)")
        print("| measure | vaultmem | baseline | target |\n|---|---|---|---|")
        rows = [
            ("graph build (s)", "build_s", "baseline_build_s"),
            ("graph path p50 (ms)", "path_p50_ms", "baseline_path_p50_ms"),
            ("graph path p95 (ms)", "path_p95_ms", None),
            ("gaps report, cold graph (s)", "gaps_cold_s", None),
            ("gaps report, cached graph (s)", "gaps_cached_graph_s", None),
            ("Louvain clusters, cold (s)", "clusters_cold_s", None),
            ("Louvain clusters, cached (s)", "clusters_cached_s", None),
            ("peak memory, VmHWM (MB)", "peak_mb", None),
        ]
        for label, key, base in rows:
            target = TARGETS.get(key)
            verdict = (
                ""
                if target is None
                else (f"≤ {target:g}: {'met' if summary[key] <= target else 'NOT met'}")
            )
            base_text = f"{summary[base]:.4g}" if base else ""
            print(f"| {label} | {summary[key]:.4g} | {base_text} | {verdict} |")
        print(
            f"nodes {summary['nodes']:.0f}, edges {summary['edges']:.0f}, "
            f"paths found {summary['path_found']:.0f}/200, clusters {summary['clusters']:.0f}"
        )
        write_json(
            f"graph-{name}.json",
            {"dataset": name, "machine": machine_info(), "summary": summary, "runs": runs},
        )


if __name__ == "__main__":
    main()
