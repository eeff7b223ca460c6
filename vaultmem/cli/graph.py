"""`vaultmem graph …`: how notes connect (paths, neighbourhoods, clusters, cycles, bridges)."""

from __future__ import annotations

import sys

import click

from vaultmem import dialect
from vaultmem import graph as link_graph
from vaultmem.cli.context import Ctx, emit_json, json_option, note_path, plural


def register_commands(cli: click.Group) -> None:
    cli.add_command(graph_group)


def _shown(node: link_graph.GraphNode) -> str:
    """A node on a line of its own: a file by its path, a wanted note by its name."""
    return link_graph.label(node) if node.kind == "wanted" else node.id


@click.group("graph")
def graph_group() -> None:
    """How notes connect: paths, neighbourhoods, clusters, cycles, fragile links."""


@graph_group.command("path")
@click.argument("start", callback=note_path)
@click.argument("end", callback=note_path)
@click.option(
    "--max-depth",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="The most links a path may take.",
)
@click.option(
    "--relation",
    "relations",
    multiple=True,
    metavar="R",
    help="Only walk links with this relation (repeatable): links_to, embeds, depends_on, …",
)
@click.option("--directed", is_flag=True, help="Follow links only in the direction written.")
@json_option("the path (or why there is none)")
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
    """The shortest chain of links between two notes (names, paths or aliases).

    Exits 1 when there is none, saying how connected each end is.
    """
    vault = obj.vault
    found = link_graph.connect(
        vault.graph(),
        vault.node(start),
        vault.node(end),
        max_depth=max_depth,
        relations=relations or None,
        directed=directed,
    )
    if as_json:
        emit_json(dialect.connection(found))
    elif not found.found:
        first_line, *more = found.why_not()
        click.echo(first_line, err=True)
        for line in more:
            click.echo(f"  {line}", err=True)
    elif not found.hops:
        click.echo(f"{_shown(found.start)} and {_shown(found.end)} are the same note")
    else:
        for step in found.steps:
            arrow = f"  {click.style(step.arrow, fg='cyan')}  " if step.arrow else ""
            click.echo(arrow + _shown(step.node))
        click.echo(plural(len(found.hops), "hop"))
    if not found.found:
        sys.exit(1)


@graph_group.command("neighbors")
@click.argument("note", callback=note_path)
@click.option(
    "--depth",
    type=click.IntRange(1, 10),
    default=1,
    show_default=True,
    help="How many links away to go (1: the notes NOTE links with).",
)
@click.option(
    "--attachments", is_flag=True, help="List attachments (images, PDFs…) and walk through them."
)
@json_option("the neighbourhood")
@click.pass_obj
def neighbors_cmd(obj: Ctx, note: str, depth: int, attachments: bool, as_json: bool) -> None:
    """The notes around NOTE (linked to or from it), nearest first.

    Attachments are left out unless --attachments is given. NOTE may be an attachment
    (`graph neighbors diagram.png` lists the notes embedding it).
    """
    vault = obj.vault
    G = vault.graph()
    center = vault.node(note)
    found = link_graph.neighbors(G, center, depth=depth, attachments=attachments)
    if as_json:
        emit_json(dialect.neighbors(G, center, depth, found, None))
        return
    for node, distance in found:
        click.echo(f"{distance}  {_shown(link_graph.node_of(G, node))}")


@graph_group.command("clusters")
@click.option(
    "--min-size",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="Leave out clusters of fewer notes.",
)
@click.option("--members", is_flag=True, help="List every member, not only the hub.")
@json_option("the clusters (with their members)")
@click.pass_obj
def clusters_cmd(obj: Ctx, min_size: int, members: bool, as_json: bool) -> None:
    """Communities of densely linked notes (Louvain, deterministic)."""
    found = obj.vault.clusters(min_size=min_size)
    if as_json:
        emit_json(dialect.clusters(found))
        return
    for i, cluster in enumerate(found, start=1):
        tags = " ".join("#" + t for t in cluster.top_tags)
        click.echo(f"{i:3}. {cluster.size:4} notes  hub {cluster.hub}  {tags}")
        if members:
            for member in cluster.members:
                click.echo(f"         {member}")


@graph_group.command("cycles")
@json_option("the cycles")
@click.pass_obj
def cycles_cmd(obj: Ctx, as_json: bool) -> None:
    """Groups of notes that link round in a circle (strongly connected, directed)."""
    found = link_graph.cycles(obj.vault.graph())
    if as_json:
        emit_json(dialect.cycles(found))
        return
    if not found:
        click.echo("no cycles", err=True)
    for number, cycle in enumerate(found, start=1):
        click.echo(click.style(f"cycle {number}: {plural(len(cycle), 'note')}", bold=True))
        for member in cycle:
            click.echo(f"  {member}")


@graph_group.command("fragile")
@json_option("the report")
@click.pass_obj
def fragile_cmd(obj: Ctx, as_json: bool) -> None:
    """Notes and links whose removal would split the vault's link graph."""
    result = link_graph.fragile(obj.vault.graph())
    if as_json:
        emit_json(dialect.fragile(result))
        return
    click.echo(click.style(f"articulation points ({len(result.articulation_points)})", bold=True))
    for note, pieces in result.articulation_points:
        click.echo(f"  {note}  (removing it leaves {pieces} pieces)")
    click.echo(click.style(f"bridges ({len(result.bridges)})", bold=True))
    for a, b in result.bridges:
        click.echo(f"  {a} — {b}")
