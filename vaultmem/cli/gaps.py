"""`vaultmem gaps` (the knowledge-gap report) and `gaps fix-aliases` (its one fix)."""

from __future__ import annotations

import sys

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, json_option, plural, wait_option
from vaultmem.gaps import (
    Refusal,
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
@wait_option("How long to wait for a reindex or a write holding the index (exit 4 after).")
@click.pass_obj
def fix_aliases_cmd(obj: Ctx, dry_run: bool, yes: bool, wait: float) -> None:
    """Rewrite links that name an alias ([[Bob]]) to [[Robert Smith|Bob]].

    Shows the diff first; each note is rewritten atomically, in its own encoding and line
    ends, only if it has not changed since the last reindex (and since the diff was shown),
    and is reindexed as it is written. Nothing else in the notes changes. A note that cannot
    be fixed is named with the reason; exit code 6 when one changed on disk meanwhile.
    """
    vault = obj.vault
    plan = plan_alias_fixes(vault)
    for refusal in plan.refused:
        click.echo(f"skipped {refusal.path}: {refusal.reason}", err=True)
    if not plan.files:
        click.echo("no alias-fixable links" if not plan.refused else "nothing to fix now")
        _exit_for(plan.refused)
        return
    for fix in plan.files:
        click.echo(fix.diff, nl=False)
    summary = f"{plural(plan.fixes, 'link')} in {plural(len(plan.files), 'note')}"
    if dry_run:
        click.echo(f"\n{summary} would change (dry run: nothing written)")
        _exit_for(plan.refused)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise click.UsageError(
                "not a terminal to confirm on: pass --yes to apply, or --dry-run"
            )
        click.confirm(f"\nApply: {summary}?", abort=True)
    result = apply_alias_fixes(vault, plan, wait=wait)
    for refusal in result.refused:
        click.echo(f"not written {refusal.path}: {refusal.reason}", err=True)
    if result.written:
        click.echo(
            f"fixed {plural(result.fixed, 'link')} in {plural(len(result.written), 'note')}"
            " (written and reindexed)"
        )
    else:
        click.echo("nothing was written")
    _exit_for((*plan.refused, *result.refused))


def _exit_for(refused: tuple[Refusal, ...]) -> None:
    """Exit code 6 when a note changed on disk meanwhile (read again: run it again), 1 when
    another note could not be fixed."""
    if any(r.changed for r in refused):
        sys.exit(6)
    if refused:
        sys.exit(1)
