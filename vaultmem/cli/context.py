"""What every command shares: the context object (the vault, opened on first use) and output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from vaultmem.indexer import Progress
from vaultmem.vault import HIGHLIGHT_END, HIGHLIGHT_START, Vault, locate_vault

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
            root = locate_vault(self.vault_arg)
            index = Path(self.index_arg).expanduser().resolve() if self.index_arg else None
            self._vault = Vault(root, index)
            self._vault.embedder_spec = self.embedder
            self._vault.llm_spec = self.llm
        return self._vault


def json_option(what: str) -> Callable[[F], F]:
    """The `--json` flag every read command has (its help names what is printed)."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help=f"Print {what} as JSON (one object; see docs/json.md).",
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
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            bars[phase] = bar
        bar.update(done - bar.pos)

    try:
        yield report
    finally:
        for bar in bars.values():
            bar.__exit__(None, None, None)
