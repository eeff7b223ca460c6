"""Opening a link outside the app (an `obsidian://` note, a web page) with the system's handler,
and saying so when nothing opened it.

Textual's `App.open_url` hands the URL to Python's `webbrowser`, which reports nothing when no
program takes it (a server without a desktop, Obsidian not installed): the app said "opening in
Obsidian" and nothing happened. The system's opener (`xdg-open`, `open`) exits non-zero when
it finds no handler, so its exit status is the answer.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

WAIT = 15.0  # seconds an opener may take to hand the link over (a cold desktop can be slow)


def opener_command(url: str, platform: str = sys.platform) -> list[str] | None:
    """The command that opens `url` with the system's handler here, or None when there is none."""
    if platform == "darwin":
        program = shutil.which("open")
    elif platform.startswith("win"):
        return ["cmd", "/c", "start", "", url]
    else:
        program = shutil.which("xdg-open")
    return None if program is None else [program, url]


def open_outside(url: str) -> str | None:
    """Open `url` with the system's handler; None when it was handed over, else why not.

    Blocks until the opener exits (at most `WAIT` seconds): call it from a worker thread.
    """
    command = opener_command(url)
    if command is None:
        return "no program opens links here (no xdg-open or open on PATH)"
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=WAIT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None  # still handing it over: the handler is there, only slow
    except OSError as exc:
        return f"cannot run {command[0]}: {exc}"
    if done.returncode != 0:
        scheme = url.split(":", 1)[0]
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = f": {said[-1]}" if said else ""
        return f"nothing here opens {scheme}: links ({command[0]} exited {done.returncode}{why})"
    return None
