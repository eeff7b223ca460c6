"""The review's undo journal: the last decisions, each as the notes it wrote (their bytes
before, a digest after), in one JSON file beside the index, so that undo outlasts a process.

Callers hold the review lock (`Captures._lock`) around every call: the file is read, changed
and replaced whole. When it cannot be written (a read-only index folder), the journal lives
in this process's memory alone.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from pathlib import Path

KEPT = 20  # decisions undo can take back, across sessions
MAX_BYTES = 8 * 1024 * 1024  # the notes' bytes the journal keeps at most
Step = tuple[str, bytes | None, str | None]  # a note, its bytes before, its sha256 after
Decisions = dict[str, tuple[Step, ...]]  # item id -> its steps, oldest decision first


class UndoJournal:
    """The decisions undo can take back, kept in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._decisions: Decisions = {}
        self._on_disk = True  # until writing the file fails: then this process's copy counts

    def load(self) -> Decisions:
        """The journal as on disk; this process's copy when the file is missing or unreadable."""
        if not self._on_disk:
            return self._decisions
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            decisions = {
                str(entry["id"]): tuple(
                    (
                        str(path),
                        None if before is None else base64.b64decode(before),
                        None if after is None else str(after),
                    )
                    for path, before, after in entry["steps"]
                )
                for entry in data["decisions"]
            }
        except (OSError, ValueError, KeyError, TypeError):
            return self._decisions
        self._decisions = decisions
        return decisions

    def remember(self, item_id: str, steps: tuple[Step, ...]) -> None:
        decisions = dict(self.load())
        decisions.pop(item_id, None)
        decisions[item_id] = steps
        self._save(decisions)

    def forget(self, item_id: str) -> None:
        decisions = dict(self.load())
        decisions.pop(item_id, None)
        self._save(decisions)

    def _save(self, decisions: Decisions) -> None:
        """Keep the last KEPT decisions (fewer when their notes weigh more than MAX_BYTES),
        written atomically; in memory alone when the file cannot be."""
        kept: list[tuple[str, tuple[Step, ...]]] = []
        weight = 0
        for item_id, steps in reversed(decisions.items()):
            weight += sum(len(before or b"") for _, before, _ in steps)
            if len(kept) == KEPT or (kept and weight > MAX_BYTES):
                break
            kept.append((item_id, steps))
        self._decisions = dict(reversed(kept))
        data = {
            "version": 1,
            "decisions": [
                {
                    "id": item_id,
                    "steps": [
                        [path, None if b is None else base64.b64encode(b).decode("ascii"), a]
                        for path, b, a in steps
                    ],
                }
                for item_id, steps in self._decisions.items()
            ],
        }
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            temporary.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError:  # undo then lasts as long as this process
            self._on_disk = False
            with contextlib.suppress(OSError):
                temporary.unlink()
