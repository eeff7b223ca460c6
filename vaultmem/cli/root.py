"""The root `vaultmem` group and `main`; each command module registers itself on the group.

Exit codes: 0 success; 1 not found, or `doctor` found index problems; 2 bad usage, missing vault
or bad config; 3 no index yet or an index from another schema; 4 another reindex holds the lock;
5 a model server is down where nothing can stand in for it; 6 a note changed on disk since it was
read, so nothing was written.
"""

from __future__ import annotations

import importlib
import os
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
    "upgrade",
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
    "upgrade-model": "upgrade",
}


# Each command's help line in `vaultmem --help` (its docstring's first sentence), so that
# listing the commands imports none of their modules, which bring the whole core (~1 s of CPU
# on 2 cores; docs/BENCHMARKS.md). tests/test_startup.py checks that the list reads the same
# as the commands' own help, at every width.
SUMMARIES = {
    "backlinks": "List the notes that link to NOTE, with the line around each link.",
    "capture": (
        "Propose memories from a chat transcript, as one capture note in the inbox to review."
    ),
    "doctor": "Parse warnings, skipped files, ambiguous and alias-fixable links, index health.",
    "episode": "Episodes: notes of what happened, with an outcome (`episodes` lists them).",
    "episodes": (
        'Episodes, newest first ("7 days ago", "last week", "yesterday", ISO dates...), '
        "none after the clock (--now sets it back: what had not happened then stays out)."
    ),
    "fact": "Facts: `key:: value` lines in entity notes, with their `was::` history.",
    "gaps": "Where the knowledge is thin: orphans, dead ends, wanted notes, fragile links…",
    "gate": (
        "Does MESSAGE need memory? Exit 0 with the context (it does), 2 (no memory "
        "needed), 3 (it would, but nothing relevant is stored), 1 on error."
    ),
    "get": "Print a note as written, or one section of it: NOTE#Heading.",
    "graph": "How notes connect: paths, neighbourhoods, clusters, cycles, fragile links.",
    "init": "Make a folder of markdown notes a vault: settings, then the index.",
    "loop": "Add an open loop to a note, or resolve one (check it in place).",
    "loops": "Open loops (every unchecked task), most pressing first: due date, priority, age.",
    "mcp": "Serve the vault to AI agents (Claude Code, Codex, Gemini CLI, Cursor…) over MCP.",
    "persona": (
        "Personas agents load: a persona note, its facts and its working set, within a budget."
    ),
    "prune": (
        "Notes past their decay tier's lifetime (`decay:` in front matter), longest "
        "expired first; with --yes, moved to .trash/ (restorable, purged after 30 days)."
    ),
    "recall": (
        "The context for MESSAGE: when it continues earlier work, the entity's open "
        "loops, recent episodes and facts in one block within --budget characters; else "
        "the best search hits."
    ),
    "reindex": "Bring the index in line with the vault (only changed files are parsed).",
    "related": "The notes most like NOTE (a path, title or alias), best first, each with why.",
    "restore": (
        "Move ENTRY (its path in .trash/, as `vaultmem trash list` shows it) back where "
        "it came from, or to --to PATH, and index it again."
    ),
    "review": "Captured memories waiting for you: list them, then accept, edit or reject each.",
    "salience": (
        "Notes and facts that deserve a look: importance (links in, centrality, open "
        "loops, facts) × staleness (how long since they changed)."
    ),
    "search": "Find notes by words and by meaning (best section per note).",
    "show": "Show a note's metadata, headings, outgoing links and backlinks.",
    "stats": "Counts of notes, links, tags and tasks in the index.",
    "trash": "Move notes to .trash/, list the trash, delete from it for good.",
    "trends": "ENTITY's episode outcomes per period: counts, success and failure rates.",
    "tui": "Open the terminal app: search as you type, notes with their links, browse.",
    "upgrade-model": (
        "Move a vault past auto's limit to all-MiniLM-L6-v2, which finds better answers."
    ),
    "watch": "Keep the index fresh while you edit, and say what changed.",
}


class _Commands(dict[str, click.Command]):
    """The root group's commands, registered by their module on first use: looking one up
    imports its module; listing them all (`commands.items()`, shell completion) imports every
    one (`--help` does not: see `_LazyGroup.format_commands`)."""

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

    def loaded(self) -> dict[str, click.Command]:
        """The commands registered so far, loading nothing."""
        return dict(dict.items(self))

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
        self.commands = self._lazy = commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, with the help line of each command not loaded yet from
        SUMMARIES: `vaultmem --help` imports no command module."""
        loaded = self._lazy.loaded()
        rows: list[tuple[str, click.Command]] = []
        for name in sorted(COMMANDS.keys() | loaded.keys()):
            cmd = loaded.get(name)
            if cmd is None:
                summary = SUMMARIES.get(name)
                # a stand-in command: its short help is cut exactly as the real one's
                cmd = click.Command(name, help=summary) if summary else self.commands.get(name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


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
    alone = ctx.invoked_subcommand is None
    if alone and not (sys.stdin.isatty() and sys.stdout.isatty() and _finds_vault(vault)):
        click.echo(ctx.get_help())  # before the context's imports: help loads no core module
        return
    from vaultmem.cli.context import Ctx

    ctx.obj = Ctx(vault, index, embedder, llm)
    if alone:
        ctx.invoke(cli.commands["tui"])  # `vaultmem` alone in a terminal, in a vault: the app


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
        # NO_COLOR (https://no-color.org): set and not empty, no colour even in a terminal
        # (click alone strips it only from pipes); None lets click decide as before
        cli.main(prog_name="vaultmem", standalone_mode=False, color=_color())
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except VaultmemError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except SystemExit as exc:
        # click's answer to EPIPE (`vaultmem search x | head -1`: the reader stopped reading,
        # which is no error of ours) is exit code 1, "not found" here; it wraps stdout then
        if exc.code == 1 and type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            sys.exit(0)
        raise
    except BrokenPipeError:
        sys.exit(0)


def _color() -> bool | None:
    return False if os.environ.get("NO_COLOR") else None
