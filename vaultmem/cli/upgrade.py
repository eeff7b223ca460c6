"""`vaultmem upgrade-model`: move a vault past auto's limit to all-MiniLM-L6-v2 now."""

from __future__ import annotations

import sys

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, fitting_bar, json_option, plural, wait_option
from vaultmem.embed_upgrade import Outcome, Status

# exit codes beyond the shared ones (cli/root.py): 1 nothing to upgrade; 130 interrupted
NOTHING = 1
INTERRUPTED = 130


def register_commands(cli: click.Group) -> None:
    cli.add_command(upgrade_model)


@click.command("upgrade-model")
@wait_option("How long each batch waits for a reindex or a write holding the index (exit 4 after).")
@json_option("the outcome")
@click.pass_obj
def upgrade_model(obj: Ctx, wait: float, as_json: bool) -> None:
    """Move a vault past auto's limit to all-MiniLM-L6-v2, which finds better answers.

    `auto` gives a vault of more than 2,000 sections (`embed_auto_limit`) the fast wordllama
    model. This embeds every section again with all-MiniLM-L6-v2 (about 10 sections per
    CPU-second: ~16 minutes for 10,000), a batch at a time, then swaps every vector at once.
    Searches, reindexes and writes keep working meanwhile, on wordllama's vectors until the
    swap. Ctrl+C keeps every finished batch: run it again to go on. The MCP server and the
    TUI do the same in the background unless the config says `embed_upgrade = "manual"`.

    Exit codes: 0 the vault uses all-MiniLM-L6-v2 (now or already); 1 nothing to upgrade
    (the reason is said); 2 all-MiniLM-L6-v2 is not installed; 4 the index stayed busy past
    --wait; 130 interrupted (the finished batches are kept).
    """
    vault = obj.vault
    upgrade = vault.embed_upgrade
    before = upgrade.status()
    if before.state in ("none", "upgraded"):
        _finish(Outcome(before, 0, 0.0, False), as_json)
        sys.exit(0 if before.state == "upgraded" else NOTHING)
    if before.state == "pending" and not as_json:
        click.echo(
            f"embedding {plural(before.left, 'section')} with all-MiniLM-L6-v2 "
            f"({before.covered:,} of {before.sections:,} done before; about "
            f"{before.minutes_left} min of one core); Ctrl+C keeps what is done",
            err=True,
        )
    bar = _Bar(before) if sys.stderr.isatty() and not as_json else None
    try:
        outcome = upgrade.run(
            progress=bar.update if bar else None,
            wait=wait,
            on_wait=lambda message: click.echo(message, err=True),
        )
    except KeyboardInterrupt:
        if bar:
            bar.close()
        now = upgrade.status()
        click.echo(
            f"stopped: all-MiniLM-L6-v2 has embedded {now.covered:,} of {now.sections:,} "
            "sections, kept in the index; run `vaultmem upgrade-model` again to go on "
            "(searches use wordllama until it is done)",
            err=True,
        )
        sys.exit(INTERRUPTED)
    if bar:
        bar.close()
    _finish(outcome, as_json)
    sys.exit(0 if outcome.status.state == "upgraded" else NOTHING)


def _finish(outcome: Outcome, as_json: bool) -> None:
    if as_json:
        emit_json(dialect.upgrade(outcome))
        return
    status = outcome.status
    if outcome.swapped:
        click.echo(
            f"meaning search uses all-MiniLM-L6-v2 now: {plural(status.sections, 'section')}, "
            f"{outcome.embedded:,} embedded by this run in {outcome.seconds:.1f} s"
        )
    elif status.state == "upgraded":
        click.echo(f"nothing to do: {status.reason}")
    else:
        click.echo(f"nothing to upgrade: {status.reason}", err=True)


class _Bar:
    """The progress bar on stderr: sections embedded of those left when the run started
    (edits meanwhile grow the total)."""

    def __init__(self, before: Status) -> None:
        self._bar = fitting_bar(max(1, before.left), "embedding with all-MiniLM-L6-v2")
        self._bar.__enter__()

    def update(self, done: int, total: int) -> None:
        if total > (self._bar.length or 0):
            self._bar.length = total
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        self._bar.__exit__(None, None, None)
