"""The index at a glance, for the status line: how many notes, when it was last brought up to
date, how many files were skipped or indexed with warnings, and whether changes on disk are
waiting for (or in) a reindex."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from textual.widgets import Label


@dataclass(frozen=True)
class IndexState:
    """What the status line says about the index (the app keeps it current)."""

    notes: int | None = None  # None: not read yet
    last_reindex: float | None = None  # epoch seconds
    pending: bool = False  # files changed on disk since the last reindex
    reindexing: bool = False
    skipped: int = 0  # files the last reindex could not read
    warned: int = 0  # notes indexed with a warning (broken front matter, another encoding)
    upgrade: str | None = None  # the background move to MiniLM: "meaning upgrade 42%"

    def describe(self, now: dt.datetime | None = None, times: bool = True) -> str:
        """ "index: 43 notes · updated 10:41", "… · reindexing…", "… · changes pending",
        "… · 2 skipped, 1 with warnings (vaultmem doctor)", "… · meaning upgrade 42%"."""
        if self.notes is None:
            return "index: reading…"
        parts = [f"index: {self.notes:,} note{'s' * (self.notes != 1)}"]
        if self.last_reindex is not None and times:
            when = dt.datetime.fromtimestamp(self.last_reindex)
            today = (now or dt.datetime.now()).date()
            shown = when.strftime("%H:%M") if when.date() == today else when.strftime("%b %d")
            parts.append(f"updated {shown}")
        problems = [f"{self.skipped:,} skipped"] * bool(self.skipped)
        problems += [f"{self.warned:,} with warnings"] * bool(self.warned)
        if problems:  # notes that are not (wholly) in the index: doctor says which and why
            parts.append(", ".join(problems) + " (vaultmem doctor)")
        if self.reindexing:
            parts.append("reindexing…")
        elif self.pending:
            parts.append("changes pending")
        if self.upgrade:
            parts.append(self.upgrade)
        return " · ".join(parts)


class IndexStatus(Label):
    """Follows the app's `index_state`; the search screen puts it at the end of its status."""

    DEFAULT_CSS = """
    IndexStatus { width: auto; height: 1; padding: 0 1; }
    """

    show_times = True  # snapshot tests turn the time of the last reindex off

    def on_mount(self) -> None:
        self.watch(self.app, "index_state", self.follow)

    def follow(self, state: IndexState) -> None:
        self.update(state.describe(times=self.show_times))
