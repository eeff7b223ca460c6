"""The editor is core: no front-end, no index, no network below it."""

from __future__ import annotations

import subprocess
import sys


def test_the_editor_imports_no_front_end_and_no_index() -> None:
    code = (
        "import sys, vaultmem.edit; "
        "print(sorted(m for m in ('textual', 'mcp', 'click', 'sqlean', 'sqlite3', 'httpx',"
        " 'vaultmem.store', 'vaultmem.vault', 'vaultmem.indexer') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
