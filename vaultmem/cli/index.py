"""`vaultmem init`, `reindex`, `stats` and `doctor`: making the index and checking on it."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, human_bytes, json_option, progress_bar
from vaultmem.config import config_path
from vaultmem.indexer import ReindexReport


def register_commands(cli: click.Group) -> None:
    for command in (init, reindex_cmd, stats, doctor):
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
    with progress_bar() as progress:
        report = vault.reindex(progress=progress)
    if report.embeddings.notice:
        click.echo(f"note: {report.embeddings.notice}", err=True)
    size = vault.index_path.stat().st_size if vault.index_path.exists() else 0
    click.echo(f"indexed {report.summary()}")
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
@click.option(
    "--wait",
    type=float,
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another running reindex before giving up.",
)
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

    with progress_bar() as progress:
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


@click.command()
@json_option("the figures")
@click.pass_obj
def stats(obj: Ctx, as_json: bool) -> None:
    """Counts of notes, links, tags and tasks in the index."""
    figures = obj.vault.stats()
    if as_json:
        emit_json(dialect.stats(figures))
        return
    for key, value in dataclasses.asdict(figures).items():
        click.echo(f"{key.replace('_', ' '):22} {value}")


@click.command()
@json_option("the report")
@click.option("--limit", type=int, default=20, show_default=True, help="Rows per section.")
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
            ("index", list(report.index_problems) or ["ok"]),
        ]
        for title, rows in sections:
            click.echo(click.style(f"{title} ({len(rows) if rows != ['ok'] else 0})", bold=True))
            for row in rows[:limit]:
                click.echo("  " + row)
            if len(rows) > limit:
                click.echo(f"  … {len(rows) - limit} more (--limit)")
    if not report.healthy:
        sys.exit(1)
