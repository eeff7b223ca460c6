"""`vaultmem gaps` (the knowledge-gap report) and `gaps fix-aliases` (its one fix)."""

from __future__ import annotations

import sys

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, json_option, plural
from vaultmem.gaps import (
    apply_alias_fixes,
    gap_counts,
    gap_rows,
    gaps_report,
    plan_alias_fixes,
)

FIX_HINT = "  `vaultmem gaps fix-aliases` rewrites them"


def register_commands(cli: click.Group) -> None:
    cli.add_command(gaps_group)


@click.group("gaps", invoke_without_command=True)
@click.option(
    "--limit", type=click.IntRange(0), default=10, show_default=True, help="Rows per list (0: all)."
)
@json_option("the report (each list cut to --limit rows; totals whole)")
@click.pass_context
def gaps_group(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Where the knowledge is thin: orphans, dead ends, wanted notes, fragile links…"""
    if ctx.invoked_subcommand is not None:
        return
    obj: Ctx = ctx.obj
    report = gaps_report(obj.vault)
    if as_json:
        emit_json(dialect.gaps(report, limit or None))
        return
    counts = gap_counts(report)
    click.echo(click.style(plural(report.notes, "note"), bold=True))
    for c in counts:
        share = f"  {c.percent:5.1f}%" if c.percent is not None else "        "
        click.echo(f"  {c.count:6}{share}  {c.gap.label.lower()}: {c.gap.description}")
    for c in counts:
        rows = gap_rows(report, c.gap.key)
        if not rows:
            continue
        hint = FIX_HINT if c.gap.key == "alias_fixable" else ""
        click.echo("\n" + click.style(f"{c.gap.label.lower()} ({len(rows)})", bold=True) + hint)
        for row in rows if limit == 0 else rows[:limit]:
            first, *more = row.cells
            named = [
                f"{name}: {cell}"
                for name, cell in zip(c.gap.columns[1:], more, strict=True)
                if cell
            ]
            click.echo("  " + "  ".join([first, *named]))
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
    summary = f"{plural(total, 'link')} in {plural(len(plans), 'note')}"
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
    click.echo(f"fixed {plural(fixed, 'link')}; {report.summary()}")
