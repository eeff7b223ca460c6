"""The core and the CLI run headless: importing them never pulls in Textual."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[1] / "vaultmem" / "cli"
CLI_MODULES = sorted(p.stem for p in CLI.glob("*.py") if p.stem != "__init__")

HEADLESS = [
    "vaultmem.parser",
    "vaultmem.resolver",
    "vaultmem.store",
    "vaultmem.indexer",
    "vaultmem.vault",
    "vaultmem.vectors",
    "vaultmem.live",
    "vaultmem.persona",
    "vaultmem.gaps",
    "vaultmem.dialect",
    "vaultmem.cli",
    *(f"vaultmem.cli.{name}" for name in CLI_MODULES),
]


@pytest.mark.parametrize("module", HEADLESS)
def test_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# The MCP SDK (and the web stack under it) loads only when `vaultmem mcp` runs.
WITHOUT_MCP = [*HEADLESS, "vaultmem.live", "vaultmem.gaps"]


@pytest.mark.parametrize("module", WITHOUT_MCP)
def test_module_does_not_import_the_mcp_sdk(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_tui_package_import_stays_headless() -> None:
    """`vaultmem tui` imports the package first: Textual must load only when the app starts."""
    code = "import sys, vaultmem.tui; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# Below the core API: the TUI presents what `Vault` (and the pure analysis modules) answer.
BELOW_THE_CORE = (
    "vaultmem.store",
    "vaultmem.parser",
    "vaultmem.resolver",
    "vaultmem.scan",
    "vaultmem.embed",
    "vaultmem.llm",
    "sqlean",
    "sqlite3",
    "sqlite_vec",
)


def test_tui_calls_only_the_core_api() -> None:
    tui = Path(__file__).resolve().parents[1] / "vaultmem" / "tui"
    found = []
    for file in sorted(tui.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found += [
                f"{file.name}: {name}"
                for name in names
                if any(name == b or name.startswith(b + ".") for b in BELOW_THE_CORE)
            ]
    assert found == []


def _imports(file: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_command_modules_never_import_the_root() -> None:
    """llm's `register_commands` shape: the root imports its command modules and they register
    themselves on its group; none imports the root (or the package that re-exports it) back."""
    assert {"root", "context", "notes"} <= set(CLI_MODULES)
    cycles = [
        f"{name}.py imports {imported}"
        for name in CLI_MODULES
        if name != "root"
        for imported in _imports(CLI / f"{name}.py")
        if imported in ("vaultmem.cli", "vaultmem.cli.root", "vaultmem.cli.cli")
        or imported.startswith("vaultmem.cli.root.")
    ]
    assert cycles == []


def test_every_command_module_registers_its_commands() -> None:
    from vaultmem.cli import root

    registered = {m.__name__.rsplit(".", 1)[-1] for m in root.COMMAND_MODULES}
    assert registered == set(CLI_MODULES) - {"root", "context"}
    owners = {cmd.callback.__module__ for cmd in root.cli.commands.values() if cmd.callback}
    assert owners == {m.__name__ for m in root.COMMAND_MODULES}


def test_only_the_server_package_imports_the_mcp_sdk() -> None:
    package = Path(__file__).resolve().parents[1] / "vaultmem"
    found = [
        f"{file.relative_to(package)}: {name}"
        for file in sorted(package.rglob("*.py"))
        if "server" not in file.relative_to(package).parts
        for name in _imports(file)
        if name.split(".")[0] in ("mcp", "mcp_types")
    ]
    assert found == []


def test_the_console_script_and_python_m_reach_the_cli_package() -> None:
    from importlib.metadata import entry_points

    import vaultmem.__main__
    from vaultmem.cli import main

    (script,) = entry_points(group="console_scripts", name="vaultmem")
    assert script.value == "vaultmem.cli:main" and script.load() is main
    assert vaultmem.__main__.main is main
