"""The Textual front-end: `vaultmem tui`. Presentation only; every answer comes from `Vault`.

Importing this package does not import Textual (the CLI imports it lazily), so the check that
a vault holds notes runs, and fails with a clear message, before any terminal set-up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.errors import UsageError

if TYPE_CHECKING:
    from vaultmem.vault import Vault


def holds_notes(root: Path) -> bool:
    """True as soon as one `.md` file is found outside dot-folders (stops at the first)."""
    for _folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if any(name.lower().endswith(".md") for name in files):
            return True
    return False


def run(vault: Vault) -> None:
    """Open the app on `vault` until the person quits."""
    if not holds_notes(vault.root):
        raise UsageError(
            f"the vault {vault.root} holds no notes (.md files): add some, or pass "
            "--vault PATH to the folder that holds them"
        )
    from vaultmem.tui.app import VaultmemApp

    VaultmemApp(vault).run()
