"""What every command shares: the context object (the vault, opened on first use) and output."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vaultmem.config import unknown_key_warnings
from vaultmem.errors import UsageError
from vaultmem.indexer import Progress
from vaultmem.vault import HIGHLIGHT_END, HIGHLIGHT_START, Vault, locate_vault

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

F = TypeVar("F", bound=Callable[..., Any])


class Ctx:
    """The root group's options, and the vault they name (opened when a command first asks)."""

    def __init__(
        self, vault: str | None, index: str | None, embedder: str | None, llm: str | None
    ) -> None:
        self.vault_arg = vault
        self.index_arg = index
        self.embedder = embedder
        self.llm = llm
        self._vault: Vault | None = None

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            self._vault = self._open(locate_vault(self.vault_arg))
        return self._vault

    def vault_to_be(self) -> Vault:
        """The vault `init` makes: the one given, else the current folder (which needs no
        .obsidian: any folder of markdown notes will do), but never a whole home or disk."""
        if self.vault_arg:
            return self.vault
        here = Path.cwd().resolve()
        if here in (Path.home().resolve(), Path(here.anchor)):
            raise UsageError(
                f"{here} is your whole {'home folder' if here != Path(here.anchor) else 'disk'}: "
                "run `vaultmem init` inside the folder that holds your notes, or pass "
                f"--vault {here} if you really mean all of it"
            )
        self._vault = self._open(here)
        return self._vault

    def _open(self, root: Path) -> Vault:
        index = Path(self.index_arg).expanduser().resolve() if self.index_arg else None
        vault = Vault(root, index)
        vault.embedder_spec = self.embedder
        vault.llm_spec = self.llm
        for warning in unknown_key_warnings(vault.config):
            click.echo(f"warning: {warning}", err=True)
        return vault


def vault_path_of(root: Path, ref: str, cwd: Path) -> str:
    """NOTE as the shell completes it, a file path (`./work/Plan.md` in the vault, `Plan.md`
    from its folder `work/`, `~/Notes/work/Plan.md` from anywhere), as the vault path it
    names: the core knows notes by vault path, title or alias only. A vault path, a title, an
    alias, anything not naming a file inside the vault comes back as given (and `#Heading`
    stays on)."""
    note, sep, heading = ref.partition("#")
    if not note or not ("/" in note or note.startswith("~") or (cwd / note).is_file()):
        return ref  # a title or an alias
    as_given = Path(note)
    if not as_given.is_absolute() and ".." not in as_given.parts and (root / note).is_file():
        return as_given.as_posix() + sep + heading  # a vault path (`./` dropped) comes first
    full = Path(os.path.abspath(cwd / as_given.expanduser()))
    for candidate in (full, full.resolve()):  # the vault's root is resolved; a path may not be
        if candidate.is_relative_to(root) and candidate != root and candidate.is_file():
            return candidate.relative_to(root).as_posix() + sep + heading
    return ref


def note_path(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """The callback of a NOTE argument or option (one, or several): each a vault path, title
    or alias, or a file path the shell completed (see `vault_path_of`)."""
    obj = ctx.find_object(Ctx)
    if obj is None or value is None:
        return value
    if isinstance(value, tuple):
        return tuple(vault_path_of(obj.vault.root, v, Path.cwd()) for v in value)
    return vault_path_of(obj.vault.root, value, Path.cwd())


def json_option(what: str, per_line: bool = False) -> Callable[[F], F]:
    """The `--json` flag every read command has (its help names what is printed; `per_line`
    for a command that prints one object per line as it goes)."""
    shape = "one object per line" if per_line else "one object"
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help=f"Print {what} as JSON ({shape}; see docs/json.md).",
    )


MAX_WAIT = 86_400.0  # a day; FloatRange refuses inf with it (and not nan: see _finite_seconds)


def _finite_seconds(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if math.isnan(value):  # no comparison holds for nan, so FloatRange lets it through
        raise click.BadParameter(f"{value} is not a number of seconds (0 to {MAX_WAIT:g})")
    return value


def entities_option(help: str) -> Callable[[F], F]:
    """`--entity NOTE`, repeatable: a note named as a path, title or alias (see note_path)."""
    return click.option(
        "--entity", "entities", callback=note_path, multiple=True, metavar="NOTE", help=help
    )


def wait_option(help: str) -> Callable[[F], F]:
    """The `--wait SECONDS` of every command that takes the index's lock: how long to wait for
    a reindex or a write holding it (exit code 4 after); `help` says what waits."""
    return click.option(
        "--wait",
        type=click.FloatRange(min=0, max=MAX_WAIT),
        callback=_finite_seconds,
        default=60.0,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )


def emit_json(data: object) -> None:
    """One JSON object on one line of stdout (built by `vaultmem.dialect`)."""
    click.echo(json.dumps(data, ensure_ascii=False))


def highlight(snippet: str) -> str:
    """A search snippet for a terminal: the matched words bold, whitespace collapsed."""
    out = []
    for i, part in enumerate(
        snippet.replace(HIGHLIGHT_END, HIGHLIGHT_START).split(HIGHLIGHT_START)
    ):
        out.append(click.style(part, bold=True, fg="yellow") if i % 2 else part)
    return " ".join("".join(out).split())


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def human_bytes(size: int) -> str:
    """A size as a person reads it: 812 bytes, 4.2 KB, 17.3 MB (powers of 1024)."""
    if size < 1024:
        return plural(size, "byte")
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


WIDE_ENOUGH_FOR_ETA = 60  # columns; a narrower terminal gets the bar without the time left


def fitting_bar(length: int, label: str) -> ProgressBar[int]:
    """A progress bar on stderr as wide as the terminal, never wider: click's fixed 36-column
    bar plus its label and time left wrapped on a narrow terminal, and each redraw then left
    another line behind."""
    columns = shutil.get_terminal_size().columns
    return click.progressbar(
        length=length,
        label=label,
        file=sys.stderr,
        width=0,  # what the label and figures leave of the terminal's width
        show_eta=columns >= WIDE_ENOUGH_FOR_ETA,
    )


@contextmanager
def progress_bar() -> Iterator[Progress | None]:
    """A progress bar on stderr when it is a terminal; nothing when piped or in CI."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: dict[str, Any] = {}

    def report(phase: str, done: int, total: int) -> None:
        if total < 200:
            return
        bar = bars.get(phase)
        if bar is None:
            label = {
                "parse": "indexing notes",
                "links": "resolving links",
                "embed": "embedding sections",
            }.get(phase, phase)
            bar = fitting_bar(total, label)
            bar.__enter__()
            bars[phase] = bar
        bar.update(done - bar.pos)

    try:
        yield report
    finally:
        for bar in bars.values():
            bar.__exit__(None, None, None)
