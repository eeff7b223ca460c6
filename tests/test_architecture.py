"""The core and the CLI run headless: importing them never pulls in Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
    "vaultmem.cli",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# The MCP SDK (and the web stack under it) loads only when `vaultmem mcp` runs.
WITHOUT_MCP = [*HEADLESS, "vaultmem.cli_mcp", "vaultmem.live", "vaultmem.gaps"]


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
    import ast
    from pathlib import Path

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
