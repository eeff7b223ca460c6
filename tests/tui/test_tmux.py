"""The real `vaultmem tui` in a real terminal (tmux), driven as a person would drive it.

tmux runs the installed command on a copy of sample-vault; `send-keys` types, `capture-pane`
reads the screen. Skipped where tmux is missing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SIZE = ("100", "30")


class Terminal:
    """One tmux server of our own (its own socket), one session running one command."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"vaultmem-test-{os.getpid()}"
        self.session = "tui"
        line = " ".join(shlex.quote(part) for part in command)
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.tmux(
            "new-session", "-d", "-s", self.session, "-x", SIZE[0], "-y", SIZE[1],
            # env -i: no inherited COLUMNS/LINES (Textual would believe them over the pane)
            f"env -i {exports} {line}; sleep 30",  # sleep: the pane stays readable after exit
        )  # fmt: skip

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return done.stdout

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture
def terminal(vault_dir: Path) -> Iterator[Terminal]:
    env = {
        "VAULTMEM_EMBEDDER": "fake",
        "TERM": "xterm-256color",
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    term = Terminal([sys.executable, "-m", "vaultmem", "--vault", str(vault_dir), "tui"], env)
    try:
        yield term
    finally:
        term.close()


def test_search_open_a_note_and_quit_in_tmux(terminal: Terminal) -> None:
    terminal.wait_for("Search the vault")
    terminal.send("shakshuka")
    shown = terminal.wait_for("personal/recipes/Shakshuka.md")
    assert "Shakshuka" in shown.split("personal/recipes/Shakshuka.md")[0]  # the hit's title
    terminal.send("Enter")
    shown = terminal.wait_for("Shakshuka  ·")  # the note screen's title line
    assert "Links (" in shown and "Backlinks (" in shown
    terminal.send("Escape")
    terminal.wait_for("shakshuka")
    terminal.send("C-q")
    deadline = time.monotonic() + 15
    while "Search the vault" in terminal.screen() or "Shakshuka" in terminal.screen():
        assert time.monotonic() < deadline, "the app did not quit"
        time.sleep(0.2)
