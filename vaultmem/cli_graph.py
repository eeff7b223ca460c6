"""The `vaultmem graph …` and `vaultmem gaps` commands: the link graph as text or JSON."""

from __future__ import annotations

import dataclasses
import sys

import click
import networkx as nx

from vaultmem import graph as link_graph
from vaultmem.cli import Ctx, emit_json
from vaultmem.gaps import apply_alias_fixes, gaps_report, plan_alias_fixes


def _label(G: nx.DiGraph, node: str) -> str:
    data = G.nodes[node]
    return f"{data['title']} (wanted)" if data["kind"] == "wanted" else node


def _notes(count: int) -> str:
    return f"{count} note{'s' if count != 1 else ''}"


@click.group("graph")
def graph_group() -> None:
    """How notes connect: paths, neighbourhoods, clusters, cycles, fragile links."""


@graph_group.command("path")
@click.argument("start")
@click.argument("end")
@click.option("--max-depth", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option(
    "--relation",
    "relations",
    multiple=True,
    metavar="R",
    help="Only walk links with this relation (repeatable): links_to, embeds, depends_on, …",
)
@click.option("--directed", is_flag=True, help="Follow links only in the direction written.")
@click.option("--json", "as_json", is_flag=True, help="Print the path as JSON.")
@click.pass_obj
def path_cmd(
    obj: Ctx,
    start: str,
    end: str,
    max_depth: int,
    relations: tuple[str, ...],
    directed: bool,
    as_json: bool,
) -> None:
    """The shortest chain of links between two notes (names, paths or aliases)."""
    vault = obj.vault
    G = vault.graph()
    a, b = vault.node(start), vault.node(end)
    result = link_graph.shortest_path(
        G, a, b, max_depth=max_depth, relations=relations or None, directed=directed
    )
    if as_json:
        data = dataclasses.asdict(result)
        data["found"] = isinstance(result, link_graph.PathResult)
        emit_json(data)
        if not data["found"]:
            sys.exit(1)
        return
    if isinstance(result, link_graph.PathResult):
        if not result.hops:
            click.echo(f"{_label(G, a)} and {_label(G, b)} are the same note")
            return
        click.echo(_label(G, a))
        for hop in result.hops:
            arrow = f"{hop.direction}{hop.relation}"
            click.echo(f"  {click.style(arrow, fg='cyan')}  {_label(G, hop.dst)}")
        click.echo(f"{len(result.hops)} hop{'s' if len(result.hops) != 1 else ''}")
        return
    click.echo(f"no path from {_label(G, a)} to {_label(G, b)} within {max_depth} hops", err=True)
    for name, degree, size in (
        (a, result.start_degree, result.start_component_size),
        (b, result.end_degree, result.end_component_size),
    ):
        click.echo(f"  {_label(G, name)}: {degree} linked notes, in a group of {size}", err=True)
    if result.connected:
        click.echo(
            "  they are connected: try a larger --max-depth, or fewer --relation / no --directed",
            err=True,
        )
    sys.exit(1)


@graph_group.command("neighbors")
@click.argument("note")
@click.option("--depth", type=click.IntRange(1, 10), default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the neighbourhood as JSON.")
@click.pass_obj
def neighbors_cmd(obj: Ctx, note: str, depth: int, as_json: bool) -> None:
    """The notes around NOTE, nearest first."""
    vault = obj.vault
    G = vault.graph()
    found = link_graph.neighbors(G, vault.node(note), depth=depth)
    if as_json:
        emit_json([{"node": n, "distance": d, "kind": G.nodes[n]["kind"]} for n, d in found])
        return
    for node, distance in found:
        click.echo(f"{distance}  {_label(G, node)}")


@graph_group.command("clusters")
@click.option("--min-size", type=click.IntRange(1), default=3, show_default=True)
@click.option("--members", is_flag=True, help="List every member, not only the hub.")
@click.option("--json", "as_json", is_flag=True, help="Print the clusters as JSON.")
@click.pass_obj
def clusters_cmd(obj: Ctx, min_size: int, members: bool, as_json: bool) -> None:
    """Communities of densely linked notes (Louvain, deterministic)."""
    found = obj.vault.clusters(min_size=min_size)
    if as_json:
        emit_json([{**dataclasses.asdict(c), "size": c.size} for c in found])
        return
    for i, cluster in enumerate(found, start=1):
        tags = " ".join("#" + t for t in cluster.top_tags)
        click.echo(f"{i:3}. {cluster.size:4} notes  hub {cluster.hub}  {tags}")
        if members:
            for member in cluster.members:
                click.echo(f"         {member}")


@graph_group.command("cycles")
@click.option("--json", "as_json", is_flag=True, help="Print the cycles as JSON.")
@click.pass_obj
def cycles_cmd(obj: Ctx, as_json: bool) -> None:
    """Groups of notes that link round in a circle (strongly connected, directed)."""
    found = link_graph.cycles(obj.vault.graph())
    if as_json:
        emit_json([list(c) for c in found])
        return
    if not found:
        click.echo("no cycles", err=True)
    for cycle in found:
        click.echo(f"{len(cycle)} notes: " + ", ".join(cycle))


@graph_group.command("fragile")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def fragile_cmd(obj: Ctx, as_json: bool) -> None:
    """Notes and links whose removal would split the vault's link graph."""
    result = link_graph.fragile(obj.vault.graph())
    if as_json:
        emit_json(dataclasses.asdict(result))
        return
    click.echo(click.style(f"articulation points ({len(result.articulation_points)})", bold=True))
    for note, pieces in result.articulation_points:
        click.echo(f"  {note}  (removing it leaves {pieces} pieces)")
    click.echo(click.style(f"bridges ({len(result.bridges)})", bold=True))
    for a, b in result.bridges:
        click.echo(f"  {a} — {b}")


@click.group("gaps", invoke_without_command=True)
@click.option(
    "--limit", type=click.IntRange(0), default=10, show_default=True, help="Rows per list (0: all)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def gaps_group(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Where the knowledge is thin: orphans, dead ends, wanted notes, fragile links…"""
    if ctx.invoked_subcommand is not None:
        return
    obj: Ctx = ctx.obj
    report = gaps_report(obj.vault)
    G = obj.vault.graph()

    # (title, rows, whether the rows are notes, so a share of all notes means something)
    sections: list[tuple[str, list[str], bool]] = [
        ("orphans (no links in or out)", list(report.orphans), True),
        ("dead ends (linked to, linking nowhere)", list(report.dead_ends), True),
        (
            "wanted notes (linked to, not written yet)",
            [
                f"{w.name}  <- {_notes(len(w.linked_from))}: {', '.join(w.linked_from[:3])}"
                + (" …" if len(w.linked_from) > 3 else "")
                for w in report.wanted
            ],
            False,
        ),
        (
            "alias-fixable links (`vaultmem gaps fix-aliases` rewrites them)",
            [f"{p.src_path}:{p.line}  {p.written} -> {p.fix}" for p in report.alias_fixable],
            False,
        ),
        ("weakly linked notes (one neighbour)", list(report.weakly_linked), True),
        (
            "articulation points (removing one splits the graph)",
            [f"{n}  ({k} pieces)" for n, k in report.articulation_points],
            True,
        ),
        (
            "bridges (single links holding groups together)",
            [f"{a} — {b}" for a, b in report.bridges],
            False,
        ),
        ("small isolated clusters", [", ".join(c) for c in report.isolated_clusters], False),
        (
            "suggested links",
            [f"{s.source} -> {_label(G, s.target)}: {s.evidence}" for s in report.suggestions],
            False,
        ),
        (
            "expired notes (decay tier)",
            [f"{e.path}  ({e.tier}, expired {e.expired_at[:10]})" for e in report.expired],
            True,
        ),
    ]
    if as_json:
        data = dataclasses.asdict(report)
        for key, value in data.items():
            if isinstance(value, list) and limit:
                data[key] = value[:limit]
        emit_json({"totals": report.totals(), **data})
        return
    click.echo(click.style(f"{report.notes} notes", bold=True))
    for title, rows, of_notes in sections:
        share = f"  {report.percent(len(rows)):5.1f}%" if of_notes else "        "
        click.echo(f"  {len(rows):6}{share}  {title}")
    for title, rows, _ in sections:
        if not rows:
            continue
        click.echo("\n" + click.style(f"{title} ({len(rows)})", bold=True))
        for row in rows if limit == 0 else rows[:limit]:
            click.echo("  " + row)
        if limit and len(rows) > limit:
            click.echo(f"  … {len(rows) - limit} more (--limit 0 shows all)")


@gaps_group.command("fix-aliases")
@click.option("--dry-run", is_flag=True, help="Show the changes; write nothing.")
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@click.pass_obj
def fix_aliases_cmd(obj: Ctx, dry_run: bool, yes: bool) -> None:
    """Rewrite links that name an alias ([[Bob]]) to [[Robert Smith|Bob]].

    Shows the diff first; each file is rewritten atomically and only if it has not changed
    since the last reindex. Nothing else in the notes changes.
    """
    vault = obj.vault
    plans = plan_alias_fixes(vault)
    if not plans:
        click.echo("no alias-fixable links")
        return
    for plan in plans:
        click.echo(plan.diff, nl=False)
    total = sum(p.fixes for p in plans)
    summary = f"{total} link{'s' if total != 1 else ''} in {len(plans)} note" + (
        "s" if len(plans) != 1 else ""
    )
    if dry_run:
        click.echo(f"\n{summary} would change (dry run: nothing written)")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise click.UsageError(
                "not a terminal to confirm on: pass --yes to apply, or --dry-run"
            )
        click.confirm(f"\nApply: {summary}?", abort=True)
    fixed = apply_alias_fixes(vault, plans)
    report = vault.reindex()
    click.echo(f"fixed {fixed} link{'s' if fixed != 1 else ''}; {report.summary()}")
