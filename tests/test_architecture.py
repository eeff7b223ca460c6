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
