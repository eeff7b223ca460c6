"""Shared fixtures: small vaults written into tmp_path, and the committed sample vault."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultmem.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = ROOT / "sample-vault"
SHARED_DATA = ROOT.parent / "shared" / "data"

MakeVault = Callable[[dict[str, str | bytes]], Vault]


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


@pytest.fixture
def make_vault(tmp_path: Path) -> MakeVault:
    """Write files into a fresh vault folder and return an (unindexed) Vault for it."""

    def make(files: dict[str, str | bytes]) -> Vault:
        root = tmp_path / "vault"
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        write_files(root, files)
        return Vault(root)

    return make


@pytest.fixture
def sample_vault(tmp_path: Path) -> Vault:
    """The committed sample vault, indexed into tmp_path (the repo copy is never written)."""
    vault = Vault(SAMPLE_VAULT, tmp_path / "sample-index.db")
    vault.reindex()
    return vault


@pytest.fixture(autouse=True)
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests embed with the deterministic fake unless they ask for a real model."""
    monkeypatch.setenv("VAULTMEM_EMBEDDER", "fake")
    # and without re-ranking, whatever a developer's environment says (tests/test_rerank.py
    # turns it on)
    monkeypatch.setenv("VAULTMEM_RERANK", "off")


def bind_socket(path: Path) -> None:
    """A real AF_UNIX socket file at `path` (bound through its folder's descriptor: socket paths
    are limited to 108 bytes, tmp paths can be longer)."""
    sock = socket.socket(socket.AF_UNIX)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock.bind(f"/proc/self/fd/{fd}/{path.name}")
    finally:
        os.close(fd)
        sock.close()
