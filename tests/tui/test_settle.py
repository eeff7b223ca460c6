"""The TUI tests' waiting helper: a worker cancelled on purpose is done, a failed one fails."""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual import work
from textual.app import App
from textual.worker import WorkerFailed, WorkerState

from tests.tui.conftest import wait_until, workers_done

pytestmark = pytest.mark.asyncio


class Exclusive(App[None]):
    """Starts an exclusive worker twice: the second cancels the first, as the index state does."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.finished: list[int] = []
        self.fail = threading.Event()

    @work(thread=True, exclusive=True, group="state")
    def slow(self, n: int) -> None:
        self.release.wait(60)
        self.finished.append(n)

    @work(thread=True, exit_on_error=False)  # only workers_done can report it
    def broken(self) -> None:
        self.fail.wait(60)
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
    async with app.run_test() as pilot:
        worker = app.broken()
        await wait_until(pilot, lambda: worker.state == WorkerState.RUNNING, "the worker runs")
        # it fails once workers_done waits for it (a failed worker leaves app.workers, so one
        # that failed before would not be seen: Textual's exit_on_error reports those)
        asyncio.get_running_loop().call_soon(app.fail.set)
        with pytest.raises(WorkerFailed):
            await workers_done(app)
