"""`vaultmem persona …`: list personas, load one's context for an agent, create one."""

from __future__ import annotations

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, json_option, plural
from vaultmem.persona import (
    PersonaContext,
    find_persona,
    list_personas,
    load_persona,
    new_persona,
)

_KIND_LABEL = {
    "persona": "persona note",
    "facts": "facts",
    "loops": "open loops",
    "working_set": "working set",
}


def register_commands(cli: click.Group) -> None:
    cli.add_command(persona_group)


@click.group("persona")
def persona_group() -> None:
    """Personas agents load: a persona note, its facts and its working set, within a budget."""


@persona_group.command("list")
@json_option("the personas")
@click.pass_obj
def list_cmd(obj: Ctx, as_json: bool) -> None:
    """The persona notes (`type: persona`) in the personas folder."""
    vault = obj.vault
    personas = list_personas(vault)
    if as_json:
        emit_json(dialect.personas(personas))
        return
    if not personas:
        folder = vault.config.personas_folder or "the vault root"
        click.echo(
            f"no personas in {folder}/ yet: `vaultmem persona new SLUG --role TEXT` makes one",
            err=True,
        )
        return
    width = max(len(p.slug) for p in personas)
    for p in personas:
        click.echo(f"{p.slug:<{width}}  {p.budget:>6} chars  {p.role or '(no role)'}  [{p.path}]")


@persona_group.command("load")
@click.argument("slug")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    metavar="CHARS",
    help="Characters of context to load (default: the persona's `budget`, else 5000); "
    "at least the persona note's own size.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json"]),
    default="markdown",
    show_default=True,
    help="markdown: the context on stdout, a usage summary on stderr; json: all of it.",
)
@click.option(
    "--include-expired", is_flag=True, help="Keep notes past their decay tier in the working set."
)
@json_option("all of it (the same as --format json)")
@click.pass_obj
def load_cmd(
    obj: Ctx, slug: str, budget: int | None, fmt: str, include_expired: bool, as_json: bool
) -> None:
    """Print a persona's context for an agent: the note, its facts, its working set.

    SLUG is the persona's file name (without .md) or one of its aliases. The same vault always
    gives the same bytes, so an agent's prompt cache keeps working.
    """
    vault = obj.vault
    context = load_persona(vault, slug, budget, include_expired=include_expired)
    if as_json or fmt == "json":
        info = find_persona(vault, context.slug)
        emit_json(dialect.persona_context(context, info, with_text=True))
        return
    click.echo(context.to_markdown(), nl=False)
    click.echo(usage_summary(context), err=True)


def usage_summary(context: PersonaContext) -> str:
    """`used of budget`, chars per kind, and what was left out, for a person reading stderr."""
    usage = context.usage()
    notes = sum(1 for p in context.parts if p.kind == "working_set")
    counted = {"working_set": f" ({plural(notes, 'note')})"}
    per_kind = ", ".join(
        f"{_KIND_LABEL[kind]} {chars:,}{counted.get(kind, '')}" for kind, chars in usage.items()
    )
    lines = [f"{context.slug}: {context.used:,} of {context.budget:,} chars: {per_kind}"]
    if context.over_budget:
        lines.append(
            f"the persona note alone is {usage['persona']:,} chars, over the budget: it is never "
            "cut, so nothing else was loaded (raise --budget or shorten the note)"
        )
    if context.left_out:
        shown = ", ".join(context.left_out[:5])
        more = f" and {len(context.left_out) - 5} more" if len(context.left_out) > 5 else ""
        lines.append(f"left out ({len(context.left_out)}): {shown}{more}")
    return "\n".join(lines)


@persona_group.command("new")
@click.argument("slug")
@click.option("--role", required=True, help="What the persona does, e.g. 'Running coach for Maya'.")
@click.pass_obj
def new_cmd(obj: Ctx, slug: str, role: str) -> None:
    """Create personas/SLUG.md from the template (never overwriting a file).

    The new note has `type: persona`, the role, a budget of 5000 and the recommended sections
    (Critical Context, Preferences, Active Projects, Key Facts, Decisions Made), each with a
    line saying what goes there (a %% comment %% to delete once filled in). When the vault
    has an index, the note is indexed right away (text only; vectors come with the next
    `vaultmem reindex`).
    """
    vault = obj.vault
    path = new_persona(vault, slug, role)
    rel = path.relative_to(vault.root).as_posix()
    click.echo(f"created {rel}")
    if not vault.index_path.exists():
        click.echo(f"no index yet: run `vaultmem reindex`, then `vaultmem persona load {slug}`")
        return
    click.echo(f"indexed; fill in its sections, then `vaultmem persona load {slug}`")
