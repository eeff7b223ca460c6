"""`vaultmem related NOTE`: the notes most like one note, each with why."""

from __future__ import annotations

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, json_option, note_path


def register_commands(cli: click.Group) -> None:
    cli.add_command(related)


@click.command()
@click.argument("note", callback=note_path)
@click.option(
    "--limit",
    type=click.IntRange(1, 200),
    default=10,
    show_default=True,
    help="How many related notes to list.",
)
@json_option("the related notes, each with its reasons")
@click.pass_obj
def related(obj: Ctx, note: str, limit: int, as_json: bool) -> None:
    """The notes most like NOTE (a path, title or alias), best first, each with why.

    Four kinds of evidence, each weighed by how rare it is: close in meaning (the sections
    nearest to the note's own), both link to the same notes, linked together from the same
    notes (co-citation), and tags both carry. A note without links, tags or vectors may have
    none: the answer is then empty (exit 1).
    """
    vault = obj.vault
    path = vault.find_note(note)
    found = vault.related(path, limit)
    if as_json:
        emit_json(dialect.related(path, found))
    else:
        for rank, r in enumerate(found, start=1):
            click.echo(f"{rank:2}. {click.style(r.path, bold=True)}  {r.score:.2f}")
            for why in r.reasons:
                click.echo(click.style(f"    {why.detail}", dim=True))
        if not found:
            click.echo(f"nothing related to {path} found", err=True)
    if not found:
        raise SystemExit(1)
