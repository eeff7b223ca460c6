"""The root `vaultmem` group and `main`; each command module registers itself on the group.

Exit codes: 0 success; 1 not found, or `doctor` found index problems; 2 bad usage, missing vault
or bad config; 3 no index yet or an index from another schema; 4 another reindex holds the lock;
5 a model server is down where nothing can stand in for it; 6 a note changed on disk since it was
read, so nothing was written.
"""

from __future__ import annotations

import sys

import click

from vaultmem import __version__
from vaultmem.cli import apps, capture, gaps, graph, index, memory, notes, persona, related, trash
from vaultmem.cli.context import Ctx
from vaultmem.errors import VaultmemError
from vaultmem.vault import locate_vault

# Each module's `register_commands(cli)` adds its commands; none of them imports this module.
COMMAND_MODULES = (index, notes, related, graph, gaps, persona, memory, capture, trash, apps)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault",
    metavar="PATH",
    envvar="VAULTMEM_VAULT",
    show_envvar=True,
    help="The vault folder (default: the current folder when it holds .obsidian or .vaultmem).",
)
@click.option(
    "--index",
    "index",
    metavar="PATH",
    envvar="VAULTMEM_INDEX",
    show_envvar=True,
    help="Where the index lives (default: the config's `index`, else VAULT/.vaultmem/index.db); "
    "for a read-only vault, or one in a sync service.",
)
@click.option(
    "--embedder",
    metavar="SPEC",
    envvar="VAULTMEM_EMBEDDER",
    show_envvar=True,
    help="Embedding model: wordllama (bundled, default), minilm (the 'minilm' extra), "
    "ollama[:MODEL], openai:MODEL, sentence-transformers:NAME.",
)
@click.option(
    "--llm",
    metavar="SPEC",
    envvar="VAULTMEM_LLM",
    show_envvar=True,
    help="Text model for --hyde: ollama:MODEL or openai:MODEL.",
)
@click.version_option(__version__, prog_name="vaultmem")
@click.pass_context
def cli(
    ctx: click.Context,
    vault: str | None,
    index: str | None,
    embedder: str | None,
    llm: str | None,
) -> None:
    """vaultmem: your markdown notes as fast, searchable, graph-aware memory.

    \b
    Start inside the folder that holds your notes (any folder of .md files):
      vaultmem init             settings and the index (once; `reindex` after edits)
      vaultmem search WORDS     search by words and meaning
      vaultmem                  the terminal app
      vaultmem mcp              serve the notes to AI agents (MCP)
    Elsewhere, name the folder: `vaultmem --vault PATH COMMAND`.
    """
    ctx.obj = Ctx(vault, index, embedder, llm)
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty() and _finds_vault(vault):
            ctx.invoke(cli.commands["tui"])  # `vaultmem` alone in a terminal, in a vault: the app
            return
        click.echo(ctx.get_help())


def _finds_vault(given: str | None) -> bool:
    """Whether a vault was given or the current folder is one (else `vaultmem` prints help)."""
    if given:
        return True  # a bad --vault gets its error from the app's command, not silence
    try:
        locate_vault(None)
    except VaultmemError:
        return False
    return True


for _module in COMMAND_MODULES:
    _module.register_commands(cli)


def main() -> None:
    """The console script: click's own errors, then VaultmemError, each with its exit code."""
    try:
        cli.main(prog_name="vaultmem", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except VaultmemError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
