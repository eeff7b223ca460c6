"""`vaultmem init`, `reindex`, `stats` and `doctor`: making the index and checking on it."""

from __future__ import annotations

import datetime as dt
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import click

from vaultmem import dialect, live
from vaultmem.cli.context import (
    Ctx,
    emit_json,
    human_bytes,
    json_option,
    plural,
    progress_bar,
    wait_option,
)
from vaultmem.config import config_path
from vaultmem.embed_upgrade import Status
from vaultmem.errors import VaultmemError
from vaultmem.indexer import ReindexReport
from vaultmem.live import Freshness
from vaultmem.vault import Stats, Vault


def register_commands(cli: click.Group) -> None:
    for command in (init, reindex_cmd, watch, stats, doctor):
        cli.add_command(command)


@click.command()
@click.pass_obj
def init(obj: Ctx) -> None:
    """Make a folder of markdown notes a vault: settings, then the index.

    The folder is --vault PATH, else the current folder: any folder of .md files will do (it
    needs no .obsidian). Writes .vaultmem/config.toml (never over one) and
    .vaultmem/.gitignore, builds the index (words, links, vectors) and says where it is.
    Run `vaultmem reindex` after edits, or keep `vaultmem watch` running.
    """
    vault = obj.vault_to_be()
    config = config_path(vault.root)
    created = vault.init()
    click.echo(("created " if created else "kept ") + f"{config} (settings; every key optional)")
    with _interruptible(vault, full=False), progress_bar() as progress:
        report = vault.reindex(progress=progress)
    if report.embeddings.notice:
        click.echo(f"note: {report.embeddings.notice}", err=True)
    size = vault.index_path.stat().st_size if vault.index_path.exists() else 0
    click.echo(f"indexed {report.summary()}")
    if report.skipped:
        _say_skipped(vault.skipped_files())
    click.echo(f"index: {vault.index_path} ({human_bytes(size)}; derived: safe to delete)")
    if report.notes == 0:
        click.echo(
            f"no notes (.md files) in {vault.root} yet: add some, then run `vaultmem reindex`",
            err=True,
        )
        return
    where = "" if vault.root == Path.cwd().resolve() else f"--vault {vault.root} "
    click.echo(
        f"next: `vaultmem {where}search WORDS`, `vaultmem {where}tui` (the terminal app), "
        f"`vaultmem {where}mcp` (for AI agents)"
    )


@click.command("reindex")
@click.option("--full", is_flag=True, help="Rebuild the index from scratch.")
@wait_option("How long to wait for another reindex or a write holding the index (exit 4 after).")
@click.option("--no-embed", is_flag=True, help="Skip making vectors (keyword search only).")
@click.option(
    "--embeddings",
    "redo_embeddings",
    is_flag=True,
    help="Make every vector again (after switching --embedder); the text index is kept.",
)
@json_option("the summary")
@click.pass_obj
def reindex_cmd(
    obj: Ctx, full: bool, wait: float, no_embed: bool, redo_embeddings: bool, as_json: bool
) -> None:
    """Bring the index in line with the vault (only changed files are parsed)."""
    vault = obj.vault
    if no_embed and redo_embeddings:
        raise click.UsageError("--no-embed and --embeddings contradict each other")

    def waiting(message: str) -> None:
        click.echo(message, err=True)

    with _interruptible(vault, full), progress_bar() as progress:
        report: ReindexReport = vault.reindex(
            full=full,
            progress=progress,
            wait=wait,
            on_wait=waiting,
            embed=not no_embed,
            redo_embeddings=redo_embeddings,
        )
    if report.embeddings.notice:
        click.echo(f"note: {report.embeddings.notice}", err=True)
    if as_json:
        emit_json(dialect.reindex(report))
    else:
        click.echo(report.summary())
        if report.skipped:
            _say_skipped(vault.skipped_files())


INTERRUPTED = 130  # Ctrl+C, as a shell reports a process SIGINT ended


@contextmanager
def _interruptible(vault: Vault, full: bool) -> Iterator[None]:
    """Ctrl+C in a reindex: exit code 130 and what the index holds now, with what to run
    (click's own answer was a bare "aborted"). Around the progress bar, so the bar is
    closed (and the cursor shown again) before this is said."""
    rebuild = full and vault.index_path.exists()
    try:
        yield
    except KeyboardInterrupt:
        if rebuild:  # one transaction, rolled back: the index as it was
            said = "the index is as it was before (a full rebuild keeps all of it or none);"
            said += " run `vaultmem reindex --full` again to rebuild it"
        else:  # batches commit as they go, vectors after the text
            said = "what was indexed so far is kept and searchable;"
            said += " run `vaultmem reindex` to finish (it goes on from there)"
        click.echo(f"interrupted: {said}", err=True)
        sys.exit(INTERRUPTED)


SKIPPED_SHOWN = 5  # a vault with many skipped files gets a few lines, and doctor for the rest


def _say_skipped(skipped: tuple[tuple[str, str], ...]) -> None:
    """Name the skipped files and why on stderr (stdout keeps the one summary line)."""
    for path, reason in skipped[:SKIPPED_SHOWN]:
        click.echo(f"skipped {path}: {reason}", err=True)
    if len(skipped) > SKIPPED_SHOWN:
        more = len(skipped) - SKIPPED_SHOWN
        click.echo(f"... and {plural(more, 'more file')}: `vaultmem doctor` lists them", err=True)


@click.command()
@click.option(
    "--count",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop after N refreshes (the first is the catch-up at start; 2 waits for one change).",
)
@json_option("each refresh", per_line=True)
@click.pass_obj
def watch(obj: Ctx, count: int | None, as_json: bool) -> None:
    """Keep the index fresh while you edit, and say what changed.

    Catches up with what changed since the last reindex, then waits for changes on disk
    (inotify/FSEvents: no CPU while nothing changes; where the system refuses, it says so and
    looks every second) and reindexes them a moment after the last one, printing the notes
    new, edited and gone. Runs in the foreground until Ctrl+C (or SIGTERM), which ends it after
    any reindex in progress, with exit code 0.
    """
    vault = obj.vault
    changed = threading.Event()
    freshness = Freshness(vault, on_change=lambda _paths: changed.set())
    freshness.start(check_now=True)
    freshness.ready.wait(live.READY_WAIT)
    if freshness.failure is not None:
        freshness.stop()
        raise VaultmemError(
            f"cannot watch {vault.root} for changes ({freshness.failure}); "
            "run `vaultmem reindex` after edits instead"
        )
    done = 0
    stop_on_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="vaultmem-refresh") as pool:
            waited = False  # the first refresh is the catch-up: it waits for nothing
            while count is None or done < count:
                if waited:
                    while not changed.wait(1.0):  # a second at a time: Ctrl+C gets through
                        pass
                    changed.clear()
                waited = True
                found = _finished(pool.submit(live.refresh, freshness))
                if found is not None and (found.changed or not done):
                    _tell(found, vault, first=not done, as_json=as_json)
                    done += 1
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
    finally:
        signal.signal(signal.SIGTERM, stop_on_term)
        freshness.stop()


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM ends `watch` as Ctrl+C does


def _finished(future: Future[live.Refresh | None]) -> live.Refresh | None:
    """The refresh's result. It runs on a worker so that Ctrl+C never lands inside a reindex:
    one arriving meanwhile waits for the reindex to finish, then stops the watch."""
    try:
        return future.result()
    except KeyboardInterrupt:
        click.echo("stopping once the reindex in progress is done…", err=True)
        future.result()
        raise


def _tell(found: live.Refresh, vault: Vault, first: bool, as_json: bool) -> None:
    """A refresh on stdout: one JSON object, or a time, a summary and a line per note."""
    notice = found.report.embeddings.notice
    if notice:
        click.echo(f"note: {notice}", err=True)
    if as_json:
        emit_json(dialect.refresh(found))
        sys.stdout.flush()
        return
    when = dt.datetime.fromtimestamp(found.at).strftime("%H:%M:%S")
    if first:
        click.echo(f"watching {vault.root} ({plural(found.notes, 'note')}); Ctrl+C stops")
    rows = [("+", p) for p in found.new] + [("~", p) for p in found.edited]
    rows += [("-", p) for p in found.gone]
    if not rows:
        if first:
            click.echo(f"{when}  the index is up to date")
        else:
            click.echo(f"{when}  reindexed: {found.report.summary()}")
        sys.stdout.flush()
        return
    counts = ", ".join(
        f"{n} {what}"
        for n, what in (
            (len(found.new), "new"),
            (len(found.edited), "edited"),
            (len(found.gone), "gone"),
        )
        if n
    )
    click.echo(f"{when}  {counts} ({found.report.seconds:.2f} s)")
    for mark, path in rows:
        click.echo(f"  {mark} {path}")
    sys.stdout.flush()


@click.command()
@json_option("the figures")
@click.pass_obj
def stats(obj: Ctx, as_json: bool) -> None:
    """Counts of notes, links, tags and tasks in the index."""
    figures = obj.vault.stats()
    upgrade = obj.vault.embed_upgrade.status()
    if as_json:
        emit_json(dialect.stats(figures, upgrade))
        return
    background = obj.vault.config.embed_upgrade == "background"
    for label, value in stats_lines(figures, time.time(), upgrade, background):
        click.echo(f"{label:20} {value}")


def stats_lines(
    s: Stats, now: float, upgrade: Status | None = None, background: bool = True
) -> list[tuple[str, str]]:
    """The figures as a person reads them: counts with their parts, a size, a local time."""
    vectors = f"{s.vectors:,}" + (f" ({s.embed_model})" if s.embed_model else "")
    rows = [("meaning model", s.embed_reason)] if s.embed_reason else []
    if upgrade is not None and upgrade.state in ("pending", "unavailable"):
        rows.append(("model upgrade", upgrade_line(upgrade, background)))
    last = "never"
    if s.last_reindex is not None:
        when = dt.datetime.fromtimestamp(s.last_reindex).strftime("%Y-%m-%d %H:%M")
        last = f"{when} ({ago(now - s.last_reindex)})"
    return [
        ("notes", f"{s.notes:,}"),
        ("attachments", f"{s.attachments:,}"),
        ("sections", f"{s.chunks:,}"),
        ("vectors", vectors),
        *rows,
        (
            "links",
            f"{s.links:,} ({s.resolved_links:,} resolved, {s.wanted_links:,} to "
            f"{plural(s.wanted_notes, 'wanted note')}, {s.ambiguous_links:,} ambiguous)",
        ),
        ("tags", f"{s.tags:,} distinct"),
        ("tasks", f"{s.open_tasks:,} open, {s.done_tasks:,} done"),
        ("skipped files", f"{s.skipped:,}" + (" (`vaultmem doctor` says why)" * bool(s.skipped))),
        ("notes with warnings", f"{s.notes_with_warnings:,}"),
        ("index", f"{s.index_path} ({human_bytes(s.index_bytes)}, schema {s.schema_version})"),
        ("last reindex", last),
    ]


def upgrade_line(u: Status, background: bool = True) -> str:
    """Where the upgrade to all-MiniLM-L6-v2 stands, in one line."""
    if u.state == "unavailable":
        return u.reason
    share = u.covered / u.sections if u.sections else 1.0
    left = f"~{u.minutes_left} min of one core left" if u.left else "ready to swap"
    who = " (the MCP server and the TUI do, in the background)" if background else ""
    return (
        f"all-MiniLM-L6-v2 has embedded {u.covered:,} of {u.sections:,} sections "
        f"({share:.0%}; {left}); `vaultmem upgrade-model` goes on with it{who}"
    )


def ago(seconds: float) -> str:
    """How long ago, in the largest whole unit: "just now", "5 minutes ago", "3 days ago"."""
    if seconds < 60:
        return "just now"
    unit, size = next(
        u for u in (("day", 86400), ("hour", 3600), ("minute", 60)) if seconds >= u[1]
    )
    return f"{plural(int(seconds // size), unit)} ago"


@click.command()
@json_option("the report")
@click.option(
    "--limit", type=click.IntRange(min=0), default=20, show_default=True, help="Rows per section."
)
@click.pass_obj
def doctor(obj: Ctx, as_json: bool, limit: int) -> None:
    """Parse warnings, skipped files, ambiguous and alias-fixable links, index health."""
    report = obj.vault.doctor()
    if as_json:
        emit_json(dialect.doctor(report))
    else:
        sections: list[tuple[str, list[str]]] = [
            ("parse warnings", [f"{p}: {w}" for p, w in report.warnings]),
            ("skipped files", [f"{p}: {r}" for p, r in report.skipped]),
            (
                "ambiguous links",
                [f"{x.src_path}:{x.line} {x.written}: {x.detail}" for x in report.ambiguous],
            ),
            (
                "alias-fixable links",
                [
                    f"{x.src_path}:{x.line} {x.written} -> {x.fix} ({x.detail})"
                    for x in report.alias_fixable
                ],
            ),
            (
                "links to a missing heading or block",
                [f"{x.src_path}:{x.line} {x.written}: {x.detail}" for x in report.missing_anchors],
            ),
            ("index", list(report.index_problems)),
        ]
        for title, rows in sections:
            click.echo(click.style(f"{title} ({len(rows)})", bold=True))
            for row in rows[:limit]:
                click.echo("  " + row)
            if len(rows) > limit:
                click.echo(f"  … {len(rows) - limit} more (--limit)")
            if title == "index" and not rows:
                click.echo("  ok")
    if not report.healthy:
        sys.exit(1)
