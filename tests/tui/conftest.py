"""TUI fixtures: sample-vault indexed once per session (fake embedder), copied for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.conftest import SAMPLE_VAULT
from vaultmem.tui.app import VaultmemApp
from vaultmem.vault import Vault


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample-vault with its index, built once; tests get copies, never this folder."""
    root = tmp_path_factory.mktemp("template") / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VAULTMEM_EMBEDDER", "fake")
        vault = Vault(root)
        vault.reindex()
        vault.close()
    return root


@pytest.fixture
def vault_dir(indexed_template: Path, tmp_path: Path) -> Path:
    """A private copy of the indexed sample vault (copy2 keeps mtimes: the index stays current)."""
    dst = tmp_path / "sample-vault"
    shutil.copytree(indexed_template, dst, ignore=shutil.ignore_patterns("*.lock"))
    return dst


@pytest.fixture
def unindexed_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".vaultmem"))
    return dst


@pytest.fixture
def app(vault_dir: Path) -> VaultmemApp:
    """The app on the indexed copy, without the file watcher (tests reindex by hand)."""
    return VaultmemApp(Vault(vault_dir), live=False)


async def settle(pilot: Pilot[None]) -> None:
    """Let messages, then every worker, then the repaint they cause run to the end."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])
