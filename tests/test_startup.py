"""A CLI process starts light: heavy libraries load only on the code paths that need them.

Each case runs a fresh interpreter (what a person's `vaultmem ...` costs) and lists which heavy
modules ended up in `sys.modules`. Someone adding an eager `import numpy` (or networkx, httpx,
wordllama, ...) at the top of a module on these paths makes these fail; bench/cli_startup.py
measures what it costs (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.conftest import MakeVault
from vaultmem.vault import Vault

HEAVY = (
    "numpy",
    "networkx",
    "httpx",
    "wordllama",
    "tokenizers",
    "safetensors",
    "sqlite_vec",
    "markdown_it",
    "yaml",
    "textual",
    "mcp",
    "multiprocessing",
    "pydantic",
)


def _loaded_after(code: str) -> list[str]:
    """The heavy top-level modules loaded once `code` ran in a fresh interpreter."""
    probe = (
        f"{code}\n"
        "import json, sys\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


def _run_cli(*args: str) -> str:
    """Code that runs `vaultmem ARGS` in-process, as the console script does."""
    return (
        "import sys\n"
        "from vaultmem.cli import main\n"
        f"sys.argv = ['vaultmem', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
    )


# What no one-shot command but those that need it (graph, gaps, a model server, the apps) loads.
NEVER_ON_READ_PATHS = ("networkx", "httpx", "wordllama", "textual", "mcp", "pydantic")


def test_version_loads_no_heavy_library() -> None:
    assert _loaded_after(_run_cli("--version")) == []


@pytest.mark.parametrize("args", [("search", "--help"), ("recall", "--help"), ("gate", "--help")])
def test_a_commands_help_loads_no_graph_model_or_app(args: tuple[str, ...]) -> None:
    loaded = _loaded_after(_run_cli(*args))
    assert [m for m in NEVER_ON_READ_PATHS if m in loaded] == []


def test_the_list_of_commands_loads_no_command_module() -> None:
    """`vaultmem --help` (and `vaultmem` alone outside a vault) lists every command with its
    help line from root.SUMMARIES: no command module, so none of the core they bring."""
    for args in (["--help"], ["-h"], []):
        code = (
            _run_cli(*args) + "modules = [m for m in sys.modules if m.startswith('vaultmem.')]\n"
            "assert sorted(modules) == "
            "['vaultmem.cli', 'vaultmem.cli.root', 'vaultmem.errors'], modules\n"
        )
        assert _loaded_after(code) == [], args


_HELP_BOTH_WAYS = """
import contextlib, io, sys
from click.testing import CliRunner
from vaultmem.cli import root
lazy = CliRunner().invoke(root.cli, ["--help"], terminal_width=int(sys.argv[1])).output
root.cli.commands.load_all()
print(repr(lazy))
print(repr(CliRunner().invoke(root.cli, ["--help"], terminal_width=int(sys.argv[1])).output))
"""


@pytest.mark.parametrize("width", [50, 80, 200])
def test_the_list_of_commands_reads_as_the_commands_themselves_say(width: int) -> None:
    """The help lines root.SUMMARIES gives before any module loads are, at any terminal
    width, the lines the commands give once loaded (a docstring edited without its summary
    fails here)."""
    done = subprocess.run(
        [sys.executable, "-c", _HELP_BOTH_WAYS, str(width)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": str(width)},
    )
    lazy, loaded = done.stdout.splitlines()
    assert "search" in lazy and "  trash  " in lazy
    assert lazy == loaded


def test_every_command_has_a_summary_for_the_list() -> None:
    from vaultmem.cli import root

    assert set(root.SUMMARIES) == set(root.COMMANDS)


def test_importing_the_cli_loads_no_command_module() -> None:
    code = (
        "import sys, vaultmem.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('vaultmem.')), file=sys.stderr)\n"
        "assert sorted(m for m in sys.modules if m.startswith('vaultmem.')) == "
        "['vaultmem.cli', 'vaultmem.cli.root', 'vaultmem.errors']\n"
    )
    assert _loaded_after(code) == []


def _on(vault: Vault, *args: str) -> tuple[str, ...]:
    return ("--vault", str(vault.root), "--index", str(vault.index_path), *args)


def test_keyword_search_loads_no_model_no_graph(sample_vault: Vault) -> None:
    loaded = _loaded_after(_run_cli(*_on(sample_vault, "search", "--mode", "keyword", "tariff")))
    assert [m for m in (*NEVER_ON_READ_PATHS, "tokenizers", "numpy") if m in loaded] == []


def test_gate_spared_a_search_loads_no_model(sample_vault: Vault) -> None:
    loaded = _loaded_after(_run_cli(*_on(sample_vault, "gate", "thanks!")))
    assert [m for m in (*NEVER_ON_READ_PATHS, "tokenizers", "numpy") if m in loaded] == []


def test_hybrid_search_loads_no_graph_and_no_http(sample_vault: Vault) -> None:
    loaded = _loaded_after(_run_cli(*_on(sample_vault, "search", "tariff")))
    assert [m for m in NEVER_ON_READ_PATHS if m in loaded] == []
    assert "numpy" in loaded  # the query was embedded: the check above ran the meaning path


def test_command_map_names_what_each_module_registers() -> None:
    """root.COMMANDS must name every command's module, or `vaultmem CMD` loads them all."""
    import importlib

    from vaultmem.cli import root

    registered: dict[str, str] = {}
    for module in root.COMMAND_MODULES:
        group = click.Group()
        importlib.import_module(f"vaultmem.cli.{module}").register_commands(group)
        registered.update(dict.fromkeys(group.commands, module))
    assert registered == root.COMMANDS


def test_one_command_loads_only_its_module() -> None:
    code = (
        "import sys\n"
        "from vaultmem.cli import root\n"
        "assert root.cli.commands.get('recall') is not None\n"
        "assert 'vaultmem.cli.memory' in sys.modules\n"
        "others = [m for m in root.COMMAND_MODULES if m != 'memory']\n"
        "assert not [m for m in others if f'vaultmem.cli.{m}' in sys.modules], sys.modules\n"
    )
    _loaded_after(code)


def test_an_unknown_command_still_gets_its_suggestion() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vaultmem", "serch", "x"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Did you mean 'search'?" in result.stderr


# --------------------------------------------------------------------------- the names cache


def _names_file(vault: Vault) -> Path:
    return vault.index_path.with_name(vault.index_path.name + ".names.json")


def test_note_names_are_read_back_from_the_cache_as_built(sample_vault: Vault) -> None:
    built = sample_vault.memory.names()
    assert _names_file(sample_vault).is_file()
    again = Vault(sample_vault.root, sample_vault.index_path).memory.names()
    assert again is not built
    assert again.to_json() == built.to_json()
    for message in ("what's next for the tariff optimizer?", "Maya Chen's heat pump", "hi"):
        assert again.find(message) == built.find(message)


@pytest.mark.parametrize(
    "damage", [b"", b"{not json", b"[]", b'{"key": 1}', b'{"key": "%s", "value": {"x": 1}}']
)
def test_a_damaged_or_stale_names_cache_is_rebuilt(sample_vault: Vault, damage: bytes) -> None:
    built = sample_vault.memory.names().to_json()
    key = sample_vault.index.cache_key()
    _names_file(sample_vault).write_bytes(damage.replace(b"%s", key.encode()))
    again = Vault(sample_vault.root, sample_vault.index_path).memory.names()
    assert again.to_json() == built
    assert json.loads(_names_file(sample_vault).read_bytes())["key"] == key  # written anew


def test_names_cache_follows_the_index(make_vault: MakeVault) -> None:
    vault = make_vault({"Heat Pump.md": "# Heat Pump\n\nText.\n"})
    vault.reindex()
    assert vault.memory.names().find("the Zanzibar Quokka") == []
    (vault.root / "Zanzibar Quokka.md").write_text("# Zanzibar Quokka\n\nNew.\n", "utf-8")
    vault.reindex()
    fresh = Vault(vault.root, vault.index_path).memory.names()
    assert [m.path for m in fresh.find("the Zanzibar Quokka")] == ["Zanzibar Quokka.md"]
