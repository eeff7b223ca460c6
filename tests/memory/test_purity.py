"""The memory package is pure: no index, no SQL, no file writes, no clock of its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vaultmem" / "memory"
MODULES = sorted(f"vaultmem.memory.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_importing_it_loads_no_index_or_sqlite() -> None:
    code = (
        f"import sys, {', '.join(MODULES)}; "
        "print(sorted(m for m in ('vaultmem.store', 'vaultmem.vault', 'vaultmem.edits', "
        "'vaultmem.search', 'sqlean', 'sqlite3', 'textual', 'mcp', 'httpx') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


FORBIDDEN_CALLS = {
    "open",
    "now",
    "today",
    "utcnow",
    "Path",
    "write_text",
    "write_bytes",
    "unlink",
    "rename",
    "mkdir",
    "rmtree",
    "remove",
    "system",
}
FORBIDDEN_MODULES = {
    "os",
    "shutil",
    "subprocess",
    "tempfile",
    "sqlite3",
    "sqlean",
    "vaultmem.store",
    "vaultmem.edits",
    "vaultmem.vault",
    "vaultmem.indexer",
}


@pytest.mark.parametrize("module", MODULES)
def test_no_file_access_or_clock(module: str) -> None:
    tree = ast.parse((PACKAGE / f"{module.rsplit('.', 1)[1]}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in FORBIDDEN_CALLS:
                found.append(f"line {node.lineno}: {name}()")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [getattr(node, "module", None) or a.name for a in node.names]
            found += [f"line {node.lineno}: import {n}" for n in names if n in FORBIDDEN_MODULES]
    assert found == []
