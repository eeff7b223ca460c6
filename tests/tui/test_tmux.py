"""The real `vaultmem tui` in a real terminal (tmux), driven as a person would drive it.

tmux runs the installed command on a copy of sample-vault; `send-keys` types, `capture-pane`
reads the screen. Every tmux call must succeed (a pane that cannot be read fails the test, it
never reads as an empty screen), and every check waits for what it expects to see. Skipped where
tmux is missing.
"""

from __future__ import annotations

import itertools
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
EXITED = "vaultmem exited with status"  # printed by the pane's shell once the app has quit


_TERMINALS = itertools.count()


class Terminal:
    """One tmux server of our own (its own socket), one session running one command."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        # a socket of its own per terminal: with one per process, a test's `new-session` could
        # reach the server the previous test's `kill-server` was still taking down, and the
        # new session went with it ("no server running" mid-test, seen twice under load)
        self.socket = f"vaultmem-test-{os.getpid()}-{next(_TERMINALS)}"
        self.session = "tui"
        line = " ".join(shlex.quote(part) for part in command)
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.tmux(
            "new-session", "-d", "-s", self.session, "-x", SIZE[0], "-y", SIZE[1],
            # env -i: no inherited COLUMNS/LINES (Textual would believe them over the pane)
            # sleep: the pane stays readable after the app exits
            f"env -i {exports} {line}; echo \"{EXITED} $?\"; sleep 30",
        )  # fmt: skip

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=60
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"tmux {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}"
            )
        return done.stdout

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, *texts: str, timeout: float = 120.0) -> str:
        """The screen once it shows every one of `texts` at the same time."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if all(text in shown for text in texts):
                return shown
            if time.monotonic() > deadline:
                missing = [text for text in texts if text not in shown]
                raise AssertionError(
                    f"{missing!r} not shown within {timeout:g} s; the screen shows:\n{shown}"
                )
            time.sleep(0.2)

    def close(self) -> None:
        self.tmux("kill-server", check=False)  # the server may have gone with its last pane
        folder = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (folder / self.socket).unlink(missing_ok=True)  # one socket file per terminal: tidy


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
    # the note screen's title line, and its panels (drawn a moment after the title)
    terminal.wait_for("Shakshuka  ·", "Links (", "Backlinks (")
    terminal.send("Escape")
    terminal.wait_for("shakshuka", "^f Filters")  # back on the search screen, query kept
    terminal.send("C-q")
    shown = terminal.wait_for(EXITED)  # the app quit, and its exit status is on the screen
    assert f"{EXITED} 0" in shown
    assert "^f Filters" not in shown and "Shakshuka" not in shown


@pytest.mark.parametrize("words", ["templates", "zebra crossing", "quick switcher"])
def test_typing_after_escape_from_a_note_lands_in_the_search_box_in_tmux(
    terminal: Terminal, words: str
) -> None:
    """As in the report: open a note from the hits, escape, type a new query at once."""
    terminal.wait_for("Search the vault")
    terminal.send("shakshuka")
    terminal.wait_for("personal/recipes/Shakshuka.md")
    terminal.send("Down")  # into the hits: the list has the focus
    terminal.send("Enter")
    terminal.wait_for("Shakshuka  ·", "Links (", "Backlinks (")
    terminal.send("Escape")
    terminal.wait_for("^f Filters")
    terminal.send("-l", words)  # literally, as typed
    shown = terminal.wait_for(words, "^f Filters")
    first_line = next(line for line in shown.splitlines() if line.strip())
    assert words in first_line  # the search box, top of the screen, holds the words
    assert "shakshuka" not in first_line  # the selected query was typed over
    assert "Folders" not in shown and "Orphans" not in shown and "from" not in first_line
    terminal.send("C-q")
    assert f"{EXITED} 0" in terminal.wait_for(EXITED)


def test_review_a_capture_in_tmux(vault_dir: Path) -> None:
    """Capture a chat with the installed command, then review it in the app: a contradiction's
    diff, accept, undo, reject; the notes on disk follow."""
    chat = vault_dir.parent / "chat.txt"
    chat.write_text(
        "Date: 2026-11-30\nMaya Chen: My employer is Tidepool now.\nTom: Congrats!\n"
        "Maya Chen: I love hiking in the Alps.\n",
        encoding="utf-8",
    )
    env = {"VAULTMEM_EMBEDDER": "fake", "PATH": os.environ["PATH"]}
    vaultmem = [sys.executable, "-m", "vaultmem", "--vault", str(vault_dir)]
    done = subprocess.run(
        [*vaultmem, "capture", str(chat), "--source", "call with Maya"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    maya = (vault_dir / "Maya Chen.md").read_text(encoding="utf-8")
    term = Terminal(
        [*vaultmem, "tui"],
        {**env, "TERM": "xterm-256color", "HOME": os.environ.get("HOME", "/tmp")},
    )
    try:
        term.wait_for("Search the vault")
        term.send("F6")
        term.wait_for("6 items to review in 2 captures", "employer:: Tidepool", "fact≠")
        # the sample vault's own capture (3 items) comes first, then this one's contradiction
        term.send("Down", "Down", "Down")
        term.wait_for("“My employer is Tidepool now.”")
        term.send("a")  # the contradiction, so its diff comes first
        term.wait_for("It changes a fact", "+- employer:: Tidepool ^f-0c32")
        term.send("y")
        shown = term.wait_for("5 items to review")
        assert "employer:: Tidepool" not in shown
        assert "- employer:: Tidepool ^f-0c32" in (vault_dir / "Maya Chen.md").read_text()
        term.send("u")
        term.wait_for("6 items to review", "employer:: Tidepool")
        assert (vault_dir / "Maya Chen.md").read_text(encoding="utf-8") == maya
        term.send("Down", "r")  # reject the row after it: hiking
        shown = term.wait_for("5 items to review")
        assert "hiking" not in shown.split("items to review")[1].split("“")[0]
        term.send("C-q")
        assert f"{EXITED} 0" in term.wait_for(EXITED)
    finally:
        term.close()
