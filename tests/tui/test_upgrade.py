"""The background upgrade to all-MiniLM-L6-v2 as the app shows it: its progress in the status
line, a notice when it starts and when the swap lands, and each problem said once with what to
run (MiniLM not installed, the index's lock held long, an exception in the upgrade's thread).

MiniLM is played by the stand-in of tests/test_embed_choice.py (hashed words, 384 numbers)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from textual.notifications import SeverityLevel

from tests import test_embed_choice as choice_tests
from tests.conftest import MakeVault
from tests.test_embed_choice import StandInMiniLM, notes
from tests.tui.conftest import settle, type_text, wait_until
from vaultmem import embed_upgrade, encoder, indexer
from vaultmem.embed import MiniLMEmbedder, WordLlamaEmbedder
from vaultmem.embed_upgrade import Background, Report, Status, Upgrade
from vaultmem.tui import app as app_module
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.search import SearchScreen
from vaultmem.tui.widgets.index_status import IndexStatus
from vaultmem.tui.widgets.upgrade_status import BUSY_SAY, DONE, UpgradeView
from vaultmem.vault import Vault

minilm = choice_tests.minilm  # auto, a stand-in MiniLM installed, limit 6
DEADLINE = 120.0


class Recording(VaultmemApp):
    """The app, keeping every notification it was asked to show (they expire on screen)."""

    # A relative CSS_PATH is read beside the module defining the class: point at the app's.
    CSS_PATH = str(Path(app_module.__file__).with_name("vaultmem.tcss"))

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault, live=False)
        self.said: list[tuple[str, str, SeverityLevel]] = []

    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", **kw: Any
    ) -> None:
        self.said.append((message, title, severity))
        super().notify(message, title=title, severity=severity, **kw)

    def about_upgrade(self) -> list[tuple[str, str, SeverityLevel]]:
        return [s for s in self.said if "MiniLM" in s[0]]


def big(make_vault: MakeVault, count: int = 9) -> Vault:
    vault = make_vault(notes(count))
    assert vault.reindex().embeddings.model == WordLlamaEmbedder.name
    return vault


def pending(covered: int, sections: int = 2_000) -> Report:
    return Report(Status("pending", "…", sections, covered))


def shown(app: VaultmemApp) -> str:
    return str(app.screen.query_one(IndexStatus).render())


# --------------------------------------------------------------------------- what is said


def test_progress_is_a_share_of_the_sections_and_never_100_before_the_swap() -> None:
    view = UpgradeView()
    first = view.follow(pending(840))
    assert view.line == "meaning upgrade 42%"
    assert [n.key for n in first] == ["start"]
    assert "840 of 2,000 sections" in first[0].message and "wordllama" in first[0].message
    assert view.follow(pending(1_000)) == []  # the start is said once
    assert view.line == "meaning upgrade 50%"
    view.follow(pending(2_000))
    assert view.line == "meaning upgrade 99%"  # every section embedded: the swap is next
    done = view.follow(Report(Status("upgraded", "…", 2_000, 2_000), swapped=True))
    assert view.line is None
    assert [(n.message, n.severity) for n in done] == [(DONE, "information")]


def test_nothing_is_shown_when_there_is_nothing_to_upgrade() -> None:
    view = UpgradeView()
    assert view.follow(Report(Status("none", "nothing to upgrade"))) == []
    assert view.line is None
    assert view.follow(Report(Status("upgraded", "done before", 10, 10))) == []  # no swap now
    assert view.line is None


def test_a_lock_held_long_is_said_once_after_a_minute() -> None:
    view = UpgradeView()
    view.follow(pending(840))
    since = time.monotonic()
    assert view.follow(Report(pending(840).status, busy_since=since), now=since + 5) == []
    assert view.line == "meaning upgrade 42% · index busy"
    (said,) = view.follow(Report(pending(840).status, busy_since=since), now=since + BUSY_SAY)
    assert said.severity == "warning"
    assert "lock" in said.message and "vaultmem upgrade-model" in said.message
    later = Report(pending(840).status, busy_since=since)
    assert view.follow(later, now=since + 10 * BUSY_SAY) == []
    view.follow(pending(900))
    assert view.line == "meaning upgrade 45%"  # it went on


def test_each_problem_is_said_once() -> None:
    view = UpgradeView()
    missing = Report(Status("unavailable", "wordllama stays: run pip"), problem="waits: run pip")
    (said,) = view.follow(missing)
    assert (said.message, said.severity) == ("waits: run pip", "warning")
    assert view.line == "meaning upgrade waits"
    assert view.follow(missing) == []
    failed = Report(None, problem="failed (boom)", failed=True)
    (said,) = view.follow(failed)
    assert said.severity == "error" and view.line == "meaning upgrade failed"
    assert view.follow(failed) == []


# --------------------------------------------------------------------------- the thread


def test_the_background_thread_reports_each_step_and_the_swap(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    reports: list[Report] = []
    background = Background(vault, idle_check=0.05, listener=reports.append)
    background.start()
    try:
        assert background.swapped.wait(DEADLINE)
    finally:
        background.stop()
    seen = [(r.status.state, r.status.covered, r.swapped) for r in reports if r.status]
    # where it stands at once, before the first batch; after the batch; the swap
    assert seen[:3] == [("pending", 0, False), ("pending", 9, False), ("upgraded", 9, True)]


def test_an_exception_in_the_thread_is_reported_and_the_upgrade_goes_on_later(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_upgrade, "FAILED_RETRY", 0.05)
    real = Upgrade.step
    calls: list[int] = []

    def step(self: Upgrade, *args: Any, **kwargs: Any) -> embed_upgrade.Step:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in a step")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Upgrade, "step", step)
    vault = big(make_vault, 9)
    reports: list[Report] = []
    background = Background(vault, idle_check=0.05, listener=reports.append)
    background.start()
    try:
        assert background.swapped.wait(DEADLINE), reports  # the thread lived on
    finally:
        background.stop()
    failed = [r for r in reports if r.failed]
    assert len(failed) == 1 and failed[0].problem is not None
    assert "RuntimeError: a bug in a step" in failed[0].problem
    assert "`vaultmem upgrade-model`" in failed[0].problem


def test_a_listener_that_fails_never_stops_the_upgrade(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    def broken(report: Report) -> None:
        raise ValueError("a front-end's bug")

    vault = big(make_vault, 9)
    background = Background(vault, idle_check=0.05, listener=broken)
    background.start()
    try:
        assert background.swapped.wait(DEADLINE)
    finally:
        background.stop()


# --------------------------------------------------------------------------- in the app


@pytest.mark.asyncio
async def test_the_status_line_follows_the_upgrade_and_the_swap_is_announced(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 12)
    gate = threading.Event()  # the swap waits until the test has looked
    real = Upgrade.step
    calls: list[int] = []

    def step(self: Upgrade, *args: Any, **kwargs: Any) -> embed_upgrade.Step:
        calls.append(1)
        if len(calls) == 2:  # the first embedded every section: this one swaps
            gate.wait(DEADLINE)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Upgrade, "step", step)
    app = Recording(Vault(vault.root))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await type_text(pilot, "heat pumps")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen) and screen.last_result is not None
        before = app.index_generation
        app.start_upgrade()
        await wait_until(pilot, lambda: "meaning upgrade" in shown(app), lambda: shown(app))
        assert shown(app).endswith("· meaning upgrade 99%")  # 12 of 12 embedded: swap next
        assert any("moving to all-MiniLM-L6-v2" in m for m, _, _ in app.about_upgrade())
        gate.set()
        await wait_until(
            pilot, lambda: any(m == DONE for m, _, _ in app.said), lambda: str(app.said)
        )
        await settle(pilot)
        assert "meaning upgrade" not in shown(app)
        assert app.index_generation > before  # the search ran again, with MiniLM now
        assert app.vault.embedder().name == MiniLMEmbedder.name
        assert [m for m, _, _ in app.said].count(DONE) == 1


@pytest.mark.asyncio
async def test_minilm_missing_is_said_once_with_what_to_run(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 9)
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    app = Recording(Vault(vault.root))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.start_upgrade()
        await wait_until(pilot, lambda: app.about_upgrade(), lambda: str(app.said))
        assert app.upgrading is not None and app.upgrading.last is not None
        app.follow_upgrade(  # the thread looks again later: the same problem, not said again
            Report(app.upgrading.last, problem=app.about_upgrade()[0][0])
        )
        await settle(pilot)
        ((message, _, severity),) = app.about_upgrade()
        assert severity == "warning"
        assert "pip install" in message and "`vaultmem upgrade-model`" in message
        assert shown(app).endswith("· meaning upgrade waits")


@pytest.mark.asyncio
async def test_a_lock_held_long_is_said_in_the_app(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.tui.widgets import upgrade_status

    monkeypatch.setattr(embed_upgrade, "BUSY_RETRY", 0.05)
    monkeypatch.setattr(upgrade_status, "BUSY_SAY", 0.2)
    vault = big(make_vault, 9)
    app = Recording(Vault(vault.root))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        with indexer.lock(vault.index_path, 0.0, None):
            app.start_upgrade()
            await wait_until(pilot, lambda: "index busy" in shown(app), lambda: shown(app))
            await wait_until(
                pilot,
                lambda: any("lock" in m for m, _, _ in app.about_upgrade()),
                lambda: str(app.said),
            )
        await wait_until(
            pilot, lambda: any(m == DONE for m, _, _ in app.said), lambda: str(app.said)
        )
        assert sum("lock" in m for m, _, _ in app.about_upgrade()) == 1


@pytest.mark.asyncio
async def test_an_exception_in_the_upgrade_is_said_in_the_app(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    def step(self: Upgrade, *args: Any, **kwargs: Any) -> embed_upgrade.Step:
        raise MemoryError("out of memory while embedding") from None

    monkeypatch.setattr(Upgrade, "step", step)
    vault = big(make_vault, 9)
    app = Recording(Vault(vault.root))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.start_upgrade()
        errors = lambda: [s for s in app.about_upgrade() if s[2] == "error"]  # noqa: E731
        await wait_until(pilot, errors, lambda: str(app.said))
        ((message, _, _),) = errors()
        assert "MemoryError: out of memory while embedding" in message
        assert "`vaultmem upgrade-model`" in message
        assert shown(app).endswith("· meaning upgrade failed")


def test_upgrade_view_is_imported_without_textual(tmp_path: Path) -> None:
    """The status's wording lives beside the widgets but needs none of Textual."""
    import subprocess
    import sys

    code = (
        "import sys, vaultmem.tui.widgets.upgrade_status as u; "
        "print(u.share(1, 3), 'textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["33", "False"]


# --------------------------------------------------------------------------- typing comes first


def test_a_hold_keeps_the_upgrade_waiting_until_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = embed_upgrade.Calls()
    assert calls.wait_idle(0.0)
    calls.hold(60.0)
    assert not calls.wait_idle(0.05)  # held: the upgrade's next call to the model waits
    monkeypatch.setattr(embed_upgrade, "HOLD_MAX", 0.1)
    started = time.monotonic()
    assert not calls.wait_idle(0.0)  # but not for ever: HOLD_MAX at most
    assert time.monotonic() - started >= 0.1
    calls = embed_upgrade.Calls()
    started = time.monotonic()
    calls.hold(0.2)
    assert calls.wait_idle(DEADLINE)  # wakes when the hold ends, without a notify
    assert time.monotonic() - started >= 0.2
    with calls:
        calls.hold(0.0)
        assert not calls.wait_idle(0.01)  # a call under way still counts


@pytest.mark.asyncio
async def test_keys_typed_keep_the_upgrade_waiting(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.tui import app as tui_app

    monkeypatch.setattr(tui_app, "TYPING_QUIET", 60.0)
    vault = big(make_vault, 9)
    app = Recording(Vault(vault.root))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await type_text(pilot, "heat")
        await settle(pilot)
        assert app.vault.calls.wait_idle(0.0)  # no upgrade running: typing holds nothing
        monkeypatch.setattr(
            Upgrade, "step", lambda self, *a, **k: embed_upgrade.Step(0, Status("none", ""))
        )
        app.start_upgrade()
        await type_text(pilot, " pump")
        await settle(pilot)
        assert not app.vault.calls.wait_idle(0.0)  # the search is done; the hold lasts
