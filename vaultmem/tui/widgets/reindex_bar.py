"""The reindex progress bar: shown while the app reindexes, hidden otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

PHASES = {
    "parse": "indexing notes",
    "links": "resolving links",
    "embed": "embedding sections",
}


@dataclass(frozen=True)
class ReindexProgress:
    """Where a running reindex is: its phase and how far into it."""

    phase: str
    done: int
    total: int

    @property
    def label(self) -> str:
        return PHASES.get(self.phase, self.phase)


class ReindexBar(Horizontal):
    """Follows the app's `reindex_progress`; every screen that wants it composes one."""

    DEFAULT_CSS = """
    ReindexBar { height: 1; display: none; }
    ReindexBar.-running { display: block; }
    ReindexBar > Label { width: auto; margin-right: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label("reindexing", id="reindex-label")
        yield ProgressBar(show_eta=False, id="reindex-progress")

    def on_mount(self) -> None:
        self.watch(self.app, "reindex_progress", self.follow)

    def follow(self, progress: ReindexProgress | None) -> None:
        self.set_class(progress is not None, "-running")
        if progress is None:
            return
        self.query_one("#reindex-label", Label).update(f"reindexing: {progress.label}")
        bar = self.query_one("#reindex-progress", ProgressBar)
        bar.update(total=max(progress.total, 1), progress=progress.done)
