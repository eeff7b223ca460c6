"""The TUI tests' waiting helper: a worker cancelled on purpose is done, a failed one fails."""

from __future__ import annotations

import threading

import pytest
from textual import work
from textual.app import App
from textual.worker import WorkerFailed

from tests.tui.conftest import workers_done

pytestmark = pytest.mark.asyncio


class Exclusive(App[None]):
    """Starts an exclusive worker twice: the second cancels the first, as the index state does."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.finished: list[int] = []

    @work(thread=True, exclusive=True, group="state")
    def slow(self, n: int) -> None:
        self.release.wait(60)
        self.finished.append(n)

    @work(thread=True)
    def broken(self) -> None:
        raise RuntimeError("boom")


async def test_a_worker_replaced_by_an_exclusive_one_counts_as_done() -> None:
    app = Exclusive()
    async with app.run_test() as pilot:
        first = app.slow(1)
        await pilot.pause()
        app.slow(2)  # cancels the first: Textual's wait_for_complete raises WorkerCancelled here
        app.release.set()
        await workers_done(app)
        assert first.is_cancelled
        assert 2 in app.finished
        assert not [w for w in app.workers if w.is_running]


async def test_a_failed_worker_still_fails() -> None:
    app = Exclusive()
    with pytest.raises(WorkerFailed):
        async with app.run_test():
            app.broken()
            await workers_done(app)
