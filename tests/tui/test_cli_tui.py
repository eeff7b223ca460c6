"""`vaultmem tui` as a person runs it with bad input: clear errors, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,  # a deadline, not a wait: generous for a loaded machine
    )


def test_cli_tui_with_a_missing_vault(tmp_path: Path) -> None:
    result = run_cli("--vault", str(tmp_path / "nowhere"), "tui")
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_cli_tui_with_a_vault_without_notes(tmp_path: Path) -> None:
    (tmp_path / "empty" / ".obsidian").mkdir(parents=True)
    (tmp_path / "empty" / "picture.png").write_bytes(b"\x89PNG")
    result = run_cli("--vault", str(tmp_path / "empty"), "tui")
    assert result.returncode == 2
    assert "holds no notes" in result.stderr


def test_vaultmem_alone_when_not_in_a_terminal_prints_help(tmp_path: Path) -> None:
    result = run_cli("--vault", str(tmp_path))
    assert result.returncode == 0 and "Usage:" in result.stdout
