"""The root `vaultmem` group and `main`; each command module registers itself on the group.

Exit codes: 0 success; 1 not found, or `doctor` found index problems; 2 bad usage, missing vault
or bad config; 3 no index yet or an index from another schema; 4 another reindex holds the lock;
5 a model server is down where nothing can stand in for it; 6 a note changed on disk since it was
read, so nothing was written.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from vaultmem import __version__
from vaultmem.errors import VaultmemError

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

# Each module's `register_commands(cli)` adds its commands; none of them imports this module.
# A module is imported when one of its commands is first asked for (`vaultmem search` loads
# vaultmem.cli.notes and what it needs, nothing else; `--version` loads none), so COMMANDS
# names the module of each command (tests/test_startup.py checks it against what they register;
# a command missing there still works: asking for an unknown name loads every module).
COMMAND_MODULES = (
    "index",
    "notes",
    "related",
    "graph",
    "gaps",
    "persona",
    "memory",
    "capture",
    "trash",
    "apps",
)
COMMANDS = {
    **dict.fromkeys(("doctor", "init", "reindex", "stats", "watch"), "index"),
    **dict.fromkeys(("backlinks", "get", "search", "show"), "notes"),
    "related": "related",
    "graph": "graph",
    "gaps": "gaps",
    "persona": "persona",
    **dict.fromkeys(
        ("episode", "episodes", "fact", "gate", "loop", "loops", "prune", "recall"), "memory"
    ),
    **dict.fromkeys(("salience", "trends"), "memory"),
    **dict.fromkeys(("capture", "review"), "capture"),
    **dict.fromkeys(("restore", "trash"), "trash"),
    **dict.fromkeys(("mcp", "tui"), "apps"),
}


class _Commands(dict[str, click.Command]):
    """The root group's commands, registered by their module on first use: looking one up
    imports its module; listing them all (`--help`, `commands.items()`) imports every one."""

    def __init__(self) -> None:
        super().__init__()
        self.group: click.Group | None = None
        self._loaded: set[str] = set()

    def _load(self, module: str) -> None:
        if module not in self._loaded and self.group is not None:
            self._loaded.add(module)
            importlib.import_module(f"vaultmem.cli.{module}").register_commands(self.group)

    def load_all(self) -> None:
        for module in COMMAND_MODULES:
            self._load(module)

    def _load_for(self, name: object) -> None:
        if isinstance(name, str) and not super().__contains__(name):
            module = COMMANDS.get(name)
            if module is None:
                self.load_all()
            else:
                self._load(module)

    def get(self, name: str, default: click.Command | None = None) -> click.Command | None:  # type: ignore[override]
        self._load_for(name)
        return super().get(name, default)

    def __getitem__(self, name: str) -> click.Command:
        self._load_for(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self._load_for(name)
        return super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return super().__iter__()

    def __len__(self) -> int:
        self.load_all()
        return super().__len__()

    def keys(self) -> dict_keys[str, click.Command]:
        self.load_all()
        return super().keys()

    def values(self) -> dict_values[str, click.Command]:
        self.load_all()
        return super().values()

    def items(self) -> dict_items[str, click.Command]:
        self.load_all()
        return super().items()


class _LazyGroup(click.Group):
    """A group whose commands' modules load on first use (see `_Commands`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        commands = _Commands()
        commands.group = self
        self.commands = commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands)


@click.group(
    cls=_LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
    help="Embedding model: auto (default: minilm for vaults up to 2,000 sections when it is "
    "installed, wordllama beyond; the choice is kept in the index), wordllama (bundled), "
    "minilm (the 'minilm' extra), ollama[:MODEL], openai:MODEL, sentence-transformers:NAME.",
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
    from vaultmem.cli.context import Ctx

    ctx.obj = Ctx(vault, index, embedder, llm)
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty() and _finds_vault(vault):
            ctx.invoke(cli.commands["tui"])  # `vaultmem` alone in a terminal, in a vault: the app
            return
        click.echo(ctx.get_help())


def _finds_vault(given: str | None) -> bool:
    """Whether a vault was given or the current folder is one (else `vaultmem` prints help)."""
    from vaultmem.vault import locate_vault

    if given:
        return True  # a bad --vault gets its error from the app's command, not silence
    try:
        locate_vault(None)
    except VaultmemError:
        return False
    return True


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
