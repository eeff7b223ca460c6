"""The docs' promises, checked against the code: MCP client configurations a desktop app can
start, every command in the README, the decay tiers as `decay.py` reads them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from tests.conftest import ROOT
from vaultmem import decay
from vaultmem.cli import cli
from vaultmem.gaps import GAP_CLASSES
from vaultmem.ranking import Weights

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _commands_in_configs(text: str) -> list[str]:
    """The program each MCP client configuration starts: JSON `"command"`, TOML `command =`,
    and the program after `--` in `claude mcp add` / `codex mcp add`."""
    found = re.findall(r'"command":\s*"([^"]+)"', text)
    found += re.findall(r'^command\s*=\s*"([^"]+)"', text, flags=re.MULTILINE)
    found += re.findall(r"mcp add [^`]*?-- ([^\s`]+)", text)
    return [c for c in found if c != "…"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_client_configuration_starts_vaultmem_by_its_absolute_path(doc: Path) -> None:
    """Desktop apps do not see the shell's PATH: a bare `vaultmem` would not start there."""
    for command in _commands_in_configs(_text(doc)):
        assert command.startswith("/"), f"{doc.name}: `{command}` is not an absolute path"


def test_the_readme_configurations_are_found_and_parse() -> None:
    readme = _text(ROOT / "README.md")
    assert len(_commands_in_configs(readme)) >= 8  # the scan sees the stdio table and more
    snippets = re.findall(r'`(\{"mcpServers".*?\})`', readme)
    snippets += re.findall(r"```json\n(.*?)```", readme, flags=re.DOTALL)
    assert len(snippets) >= 6
    for snippet in snippets:
        assert "mcpServers" in json.loads(snippet), snippet


def _all_commands(group: click.Group, prefix: str = "") -> list[str]:
    out = []
    for name, command in sorted(group.commands.items()):
        out.append(f"{prefix}{name}")
        if isinstance(command, click.Group):
            out += _all_commands(command, f"{prefix}{name} ")
    return out


def test_every_command_is_in_the_readme() -> None:
    table = _text(ROOT / "README.md").split("## Commands", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = {re.match(r" `([a-z -]+?)(?= [A-Z\[\-]|`)", row).group(1) for row in rows}  # type: ignore[union-attr]
    groups = ("graph", "persona", "fact", "episode", "loop")  # their subcommands are listed
    missing = [c for c in _all_commands(cli) if c not in listed and c not in groups]
    assert missing == []


def test_the_decay_tiers_are_documented_as_read() -> None:
    contract = _text(ROOT / "docs" / "vault-contract.md")
    section = contract.split("## Decay tiers", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|$", section, flags=re.MULTILINE))
    assert set(rows) == set(decay.TIERS)
    for tier, lifetime in decay.LIFETIME.items():
        if lifetime is None:
            assert rows[tier] == "never expires"
            continue
        number, unit = rows[tier].split()
        seconds = {"days": 86400, "day": 86400, "hours": 3600}[unit] * int(number)
        assert lifetime.total_seconds() == seconds, tier
    assert f"`expired` signal, {Weights().expired}" in section.replace("\n  ", " ")
    assert "expired" in {gap.key for gap in GAP_CLASSES}
    assert (
        "Not read yet" not in section
        and "decay tiers" not in contract.split("## Not read yet", 1)[1]
    )
