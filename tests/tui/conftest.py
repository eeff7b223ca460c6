"""TUI fixtures: sample-vault indexed once per session (fake embedder), copied for each test."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from tests.conftest import SAMPLE_VAULT
from vaultmem.tui.app import VaultmemApp
from vaultmem.vault import Vault


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample-vault with its index, built once; tests get copies, never this folder."""
    root = tmp_path_factory.mktemp("template") / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VAULTMEM_EMBEDDER", "fake")
        vault = Vault(root)
        vault.reindex()
        vault.close()
    return root


@pytest.fixture
def vault_dir(indexed_template: Path, tmp_path: Path) -> Path:
    """A private copy of the indexed sample vault (copy2 keeps mtimes: the index stays current)."""
    dst = tmp_path / "sample-vault"
    shutil.copytree(indexed_template, dst, ignore=shutil.ignore_patterns("*.lock"))
    return dst


@pytest.fixture
def unindexed_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".vaultmem"))
    return dst


@pytest.fixture
def app(vault_dir: Path) -> VaultmemApp:
    """The app on the indexed copy, without the file watcher (tests reindex by hand)."""
    return VaultmemApp(Vault(vault_dir), live=False)


# generous: a loaded CI machine; a worker stuck this long is a failure, not a slow machine
WORKERS_DEADLINE_S = 300.0


async def workers_done(app: App[None]) -> None:
    """Wait until no worker of the app is pending or running.

    A worker cancelled on purpose counts as done: an exclusive worker (the index state, the
    palette's search) is cancelled when a newer one of its group starts, which a loaded machine
    makes likely, and Textual's `wait_for_complete` raises `WorkerCancelled` for it. A worker
    that fails while this waits still fails the test (one that failed before is gone from
    `app.workers`: Textual's `exit_on_error`, on by default, reports it when the app exits).
    """
    end = time.monotonic() + WORKERS_DEADLINE_S
    while busy := [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]:
        assert time.monotonic() < end, f"workers still busy after {WORKERS_DEADLINE_S} s: {busy}"
        running = [w for w in busy if w.state == WorkerState.RUNNING]
        if not running:  # started, its task not yet begun: `wait` refuses a pending worker
            await asyncio.sleep(0.01)
            continue
        outcomes = await asyncio.wait_for(  # a TimeoutError past the deadline fails the test
            asyncio.gather(*(w.wait() for w in running), return_exceptions=True),
            max(0.1, end - time.monotonic()),
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(outcome, WorkerCancelled):
                raise outcome


async def settle(pilot: Pilot[None]) -> None:
    """Let messages, then every worker, then the repaint they cause run to the end."""
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


async def wait_until(
    pilot: Pilot[None],
    condition: Callable[[], object],
    what: str | Callable[[], str],
    timeout: float = 120.0,
) -> None:
    """Let the app run until `condition()` holds; fail saying `what` did not happen in time
    (a callable `what` describes the state at that moment).

    Generous by default: these machines are often loaded, and a passing test waits no longer
    than the condition takes.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"{said}: not within {timeout:g} s")
        await pilot.pause(0.05)


def palette_choice(pilot: Pilot[None]) -> str | None:
    """The command palette's highlighted item, when the palette is open and lists some."""
    screen = pilot.app.screen
    if not isinstance(screen, CommandPalette):
        return None
    option = screen.query_one(CommandList).highlighted_option
    return None if option is None else str(getattr(option.prompt, "plain", option.prompt))


async def run_command(pilot: Pilot[None], typed: str, choice: str) -> None:
    """Open the command palette, type `typed`, wait until it offers `choice` first, pick it."""
    await pilot.press("ctrl+p")
    await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, CommandPalette), "the command palette opens"
    )
    await type_text(pilot, typed)
    await wait_until(
        pilot,
        lambda: choice in (palette_choice(pilot) or ""),
        lambda: f"the palette offers {choice!r} for {typed!r} (not {palette_choice(pilot)!r})",
    )
    await workers_done(pilot.app)  # every provider has answered: no re-sort left
    assert choice in (palette_choice(pilot) or ""), palette_choice(pilot)
    await pilot.press("enter")
    await wait_until(
        pilot, lambda: not isinstance(pilot.app.screen, CommandPalette), "the palette closes"
    )
