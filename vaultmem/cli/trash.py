"""`vaultmem trash NOTE`, `trash list`, `trash purge` and `vaultmem restore ENTRY`.

Deleting means moving to `.trash/` (Obsidian's own trash folder, keeping the path); the index
forgets the file at once, and `restore` brings it back (never over an existing file). Only
`trash purge` deletes, and only inside `.trash/`.
"""

from __future__ import annotations

import datetime as dt
import re
import sys

import click

from vaultmem import dialect
from vaultmem.cli.context import (
    Ctx,
    emit_json,
    human_bytes,
    json_option,
    note_path,
    plural,
    wait_option,
)
from vaultmem.edit import TrashEntry
from vaultmem.errors import NoIndex, NoteNotFound
from vaultmem.vault import Vault

_DURATION = re.compile(r"^\s*(\d+)\s*([dhwm]?)\s*$")
_UNITS = {"": 1.0, "d": 1.0, "h": 1 / 24, "w": 7.0, "m": 1 / 1440}


def register_commands(cli: click.Group) -> None:
    cli.add_command(trash_group)
    cli.add_command(restore_cmd)


WAIT_HELP = "How long to wait for a reindex or a write holding the index (exit 4 after)."


class TrashGroup(click.Group):
    """`trash NOTE` is `trash move NOTE`: a first word that is no subcommand is a note."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "move", self.commands["move"], args
        return super().resolve_command(ctx, args)


@click.group("trash", cls=TrashGroup)
def trash_group() -> None:
    """Move notes to .trash/, list the trash, delete from it for good.

    \b
      vaultmem trash NOTE            move a note or attachment to .trash/ (same as `trash move`)
      vaultmem trash list            what is in the trash, newest first
      vaultmem restore ENTRY         put an entry back where it came from
      vaultmem trash purge           delete entries trashed over 30 days ago, for good
    """


def _vault_path(vault: Vault, ref: str) -> str:
    """A note's or attachment's vault path: by path, title or alias from the index, else a
    vault path that exists on disk (a file the index has not seen yet)."""
    try:
        return vault.find_note(ref)
    except (NoteNotFound, NoIndex):
        candidate = ref.strip().lstrip("./")
        if candidate and (vault.root / candidate).is_file():
            return candidate
        raise


@trash_group.command("move")
@click.argument("note", callback=note_path)
@wait_option(WAIT_HELP)
@json_option("where the file went, and the reindex")
@click.pass_obj
def move_cmd(obj: Ctx, note: str, wait: float, as_json: bool) -> None:
    """Move NOTE (a path, title or alias; or an attachment's path) to .trash/.

    It keeps its path below .trash/ (a taken name gets Obsidian's numbering, `Note 1.md`) and
    leaves the index at once. Nothing is deleted: `vaultmem restore ENTRY` brings it back.
    """
    vault = obj.vault
    path = _vault_path(vault, note)
    result = vault.trash(path, wait=wait, on_wait=lambda m: click.echo(m, err=True))
    if as_json:
        emit_json(dialect.trashed(result))
        return
    entry = result.entry.path
    click.echo(f"moved {path} to {entry}")
    click.echo(f"  undo: vaultmem restore '{entry}'")


@trash_group.command("list")
@json_option("every entry in the trash")
@click.pass_obj
def list_cmd(obj: Ctx, as_json: bool) -> None:
    """What is in .trash/, most recently trashed first, with where each file came from.

    A file vaultmem did not trash (Obsidian did, or vaultmem's log was lost) shows its place in
    the trash as its origin, marked `?`, and the time it was moved there.
    """
    entries = obj.vault.list_trash()
    if as_json:
        emit_json(dialect.trash_list(entries))
        return
    if not entries:
        click.echo("the trash is empty")
        return
    total = sum(e.size for e in entries)
    click.echo(click.style(f"{plural(len(entries), 'file')}, {human_bytes(total)}", bold=True))
    for e in entries:
        click.echo(_entry_line(e))


def _entry_line(e: TrashEntry) -> str:
    when = e.trashed_at.astimezone().strftime("%Y-%m-%d %H:%M")
    origin = e.original if e.known else f"{e.original} ?"
    return f"  {when}  {human_bytes(e.size):>10}  {e.path}  ← {origin}"


def parse_age(text: str) -> dt.timedelta:
    """`30d`, `12h`, `2w`, `90m` (minutes) or a bare number of days."""
    m = _DURATION.match(text)
    if m is None:
        raise click.BadParameter(f"{text!r}: give an age like 30d, 12h, 2w or 90m")
    return dt.timedelta(days=int(m[1]) * _UNITS[m[2]])


@trash_group.command("purge")
@click.argument("entries", nargs=-1, metavar="[ENTRY]...")
@click.option(
    "--older-than",
    "older_than",
    default="30d",
    show_default=True,
    metavar="AGE",
    help="Delete entries trashed longer ago than AGE (30d, 12h, 2w, 90m).",
)
@click.option("--all", "everything", is_flag=True, help="Delete everything in the trash.")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@json_option("what was deleted")
@click.pass_obj
def purge_cmd(
    obj: Ctx, entries: tuple[str, ...], older_than: str, everything: bool, yes: bool, as_json: bool
) -> None:
    """Delete trash entries for good: the ENTRYs named, else those trashed longer ago than
    --older-than (30 days), or --all. The one write vaultmem cannot undo; only inside .trash/.
    """
    if entries and everything:
        raise click.UsageError("name ENTRYs or pass --all, not both")
    age = dt.timedelta(0) if everything else parse_age(older_than)
    vault = obj.vault
    now = dt.datetime.now(dt.UTC)
    if entries:
        named = _trash_paths(entries)
        chosen = [e for e in vault.list_trash() if e.path in named]
    else:
        chosen = [e for e in vault.list_trash() if e.trashed_at <= now - age]
    if not chosen and not entries:
        if as_json:
            emit_json(dialect.purged(()))
        else:
            click.echo(
                "nothing in the trash to purge"
                + ("" if everything else f" (older than {older_than})")
            )
        return
    if not yes:
        if not sys.stdin.isatty():
            raise click.UsageError("not a terminal to confirm on: pass --yes to delete for good")
        for e in chosen:
            click.echo(_entry_line(e))
        click.confirm(f"Delete {plural(len(chosen), 'file')} for good?", abort=True)
    if entries:
        done = vault.purge(entries=entries, now=now)
    else:
        done = vault.purge(older_than=age, now=now)
    if as_json:
        emit_json(dialect.purged(done))
        return
    total = sum(e.size for e in done)
    click.echo(f"deleted {plural(len(done), 'file')} ({human_bytes(total)}) for good")


def _trash_paths(entries: tuple[str, ...]) -> set[str]:
    return {_trash_path(e) for e in entries}


def _trash_path(entry: str) -> str:
    """ENTRY as the vault path of a file in .trash/ (given with or without `.trash/`); a path
    that could lead elsewhere (`..`, absolute, a backslash, NUL) is refused as bad usage
    before the core refuses it in terms of vault paths, which ENTRY is not."""
    parts = entry.split("/")
    if entry.startswith("/") or ".." in parts or "\\" in entry or "\x00" in entry:
        raise click.BadParameter(
            f"{entry!r} is not a trash entry: give its path in .trash/ as `vaultmem trash"
            " list` shows it (for example `work/Old plan.md`)",
            param_hint="ENTRY",
        )
    return entry if entry.startswith(".trash/") else f".trash/{entry}"


@click.command("restore")
@click.argument("entry")
@click.option("--to", "to", metavar="PATH", help="Restore to this vault path instead.")
@wait_option(WAIT_HELP)
@json_option("where the file is now, and the reindex")
@click.pass_obj
def restore_cmd(obj: Ctx, entry: str, to: str | None, wait: float, as_json: bool) -> None:
    """Move ENTRY (its path in .trash/, as `vaultmem trash list` shows it) back where it came
    from, or to --to PATH, and index it again. Never overwrites: if a file has that name now,
    nothing moves (exit 1); restore --to another path, or move that file first.
    """
    vault = obj.vault
    where = _trash_path(entry)
    result = vault.restore(where, to=to, wait=wait, on_wait=lambda m: click.echo(m, err=True))
    if as_json:
        emit_json(dialect.restored(result, where))
        return
    click.echo(f"restored {where} to {result.path}")
