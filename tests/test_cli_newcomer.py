"""The CLI as a demanding newcomer meets it: the hostile inputs and the rough edges found by
using every command from a clean clone (the shared `--wait`, the options' help, colour and
NO_COLOR, unreadable vaults and index files, a file at the index path that is not an index,
Ctrl+C in a reindex)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import click
import pytest

from tests.conftest import ROOT, write_files
from tests.test_cli import run
from vaultmem.cli import context
from vaultmem.cli.root import cli


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every command and subcommand by its full name (`graph path`), modules all loaded."""
    found: dict[str, click.Command] = {}
    for name, command in sorted(group.commands.items()):
        found[f"{prefix}{name}"] = command
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
    return found


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "Robert Smith.md": "---\naliases: [Bob]\n---\n# Robert Smith\nEngineer.\n",
            "Meeting.md": "# Meeting\nMet [[Bob]] about the heat pump.\n",
        },
    )
    return root


def test_every_wait_option_is_the_one_shared_declaration() -> None:
    """`reindex`, `upgrade-model`, the trash and `gaps fix-aliases` declared `--wait` four
    times, with two ranges (a day, an hour) and only two refusing nan."""
    waits = {
        name: param
        for name, command in _commands(cli).items()
        for param in command.params
        if param.name == "wait"
    }
    assert set(waits) >= {"reindex", "upgrade-model", "trash move", "restore", "gaps fix-aliases"}
    for name, param in waits.items():
        assert isinstance(param.type, click.FloatRange), name
        assert (param.type.min, param.type.max) == (0, context.MAX_WAIT), name
        assert param.callback is context._finite_seconds, name
        assert param.metavar == "SECONDS" and param.default == 60.0, name
        assert param.help and "exit 4" in param.help, name


def test_no_command_module_borrows_another_ones_private_names() -> None:
    """upgrade.py imported cli/index.py's `_finite_seconds`: what two commands share lives
    in cli/context.py, under a public name."""
    borrowed = []
    for module in sorted((ROOT / "vaultmem" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vaultmem.cli"):
                borrowed += [f"{module.name}: {a.name}" for a in node.names if a.name[0] == "_"]
    assert borrowed == []


@pytest.mark.parametrize(
    "args",
    [
        ("gaps", "fix-aliases", "--dry-run"),
        ("trash", "Meeting"),
        ("restore", "Meeting.md"),
        ("reindex",),
    ],
)
def test_wait_nan_is_refused_as_bad_usage_before_anything_runs(
    notes: Path, args: tuple[str, ...]
) -> None:
    done = run("--vault", str(notes), *args, "--wait", "nan", env={"VAULTMEM_EMBEDDER": "fake"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a number of seconds (0 to 86400)" in done.stderr
    assert "[[Robert Smith|Bob]]" not in done.stdout  # fix-aliases did not even plan
    assert (notes / "Meeting.md").exists()


def test_a_wait_of_more_than_an_hour_is_taken_by_every_command() -> None:
    """The trash and the alias fix refused `--wait 7200` that reindex took."""
    for name, command in _commands(cli).items():
        for param in command.params:
            if param.name == "wait":
                assert param.type_cast_value(click.Context(command), "7200") == 7200.0, name
    assert not math.isnan(context.MAX_WAIT)
