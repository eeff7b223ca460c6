"""The gaps screen through Pilot: the sample vault's gaps per tab, Enter opens, the alias fix."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Label, TabbedContent

from tests.tui.conftest import settle, wait_until
from vaultmem.tui import app as app_module
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.gaps import TABS, GapsScreen, totals_line
from vaultmem.tui.screens.note import NoteScreen
from vaultmem.tui.widgets.diff_view import DiffView, diff_text
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)  # "today" in the sample vault
MEETING = "work/Meeting notes.md"


class RecordingApp(VaultmemApp):
    """The real app, except that opening a note is recorded instead of shown."""

    # A relative CSS_PATH is read beside the module defining the class: point at the app's.
    CSS_PATH = str(Path(app_module.__file__).with_name("vaultmem.tcss"))

    def __init__(self, vault: Vault) -> None:
        super().__init__(vault, live=False)
        self.opened: list[str] = []

    def open_note(self, path: str) -> None:
        self.opened.append(path)


@pytest.fixture
def recording(vault_dir: Path) -> RecordingApp:
    return RecordingApp(Vault(vault_dir))


async def settled(pilot: Pilot[None]) -> None:
    """Until no worker runs: a fix starts a reindex, whose end starts the report again."""
    for _ in range(10):
        await settle(pilot)
        if not any(w.is_running for w in pilot.app.workers):
            return
    raise AssertionError("workers kept running")


async def open_gaps(pilot: Pilot[None]) -> GapsScreen:
    screen = GapsScreen(now=NOW)
    await pilot.app.push_screen(screen)
    await settled(pilot)
    return screen


def rows(screen: GapsScreen, tab: str) -> list[list[Any]]:
    table = screen.query_one(f"#gaps-table-{tab}", DataTable)
    return [list(table.get_row_at(i)) for i in range(table.row_count)]


def tab_label(screen: GapsScreen, tab: str) -> str:
    return screen.query_one(TabbedContent).get_tab(f"gaps-{tab}").label.plain


async def go_to_tab(pilot: Pilot[None], screen: GapsScreen, tab: str) -> None:
    """Press `]` until the tab shows, waiting for each press to move on one tab."""
    tabs = screen.query_one(TabbedContent)
    for _ in TABS:
        if tabs.active == f"gaps-{tab}":
            return
        before = tabs.active
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda b=before: tabs.active != b, f"the tab after {before} shows")
    assert tabs.active == f"gaps-{tab}"


def priya_line(root: Path) -> int:
    lines = (root / MEETING).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if "[[Priya]]" in line)


@pytest.mark.asyncio
async def test_each_tab_lists_the_sample_vaults_gaps(recording: RecordingApp) -> None:
    async with recording.run_test(size=(100, 30)) as pilot:
        screen = await open_gaps(pilot)
        assert rows(screen, "orphans") == [["personal/Gift Ideas.md"]]
        assert rows(screen, "dead_ends") == [["work/people/Jonas Berg.md"]]
        wanted = rows(screen, "wanted")
        assert [r[0] for r in wanted] == [
            "Load Forecasting",
            "Marathon Training",
            "firmware-rollback v1",
            "Priya",
        ]
        assert wanted[0][1].startswith("4 notes: daily/2026-11-29.md, ")
        line = priya_line(recording.vault.root)
        assert rows(screen, "alias_fixable") == [
            [f"{MEETING}:{line}", "[[Priya]]", "[[Priya Raman|Priya]]"]
        ]
        assert ["personal/recipes/Shakshuka.md"] in rows(screen, "weakly_linked")
        assert ["Maya Chen.md", "2"] in rows(screen, "articulation_points")
        assert rows(screen, "isolated_clusters") == [
            ["2", "hobbies/Darkroom Chemistry.md, hobbies/Film Photography.md"]
        ]
        assert rows(screen, "expired") == [
            ["work/Scratch - tariff sync debugging.md", "session", "2026-11-27"]
        ]
        assert any(
            r[0] == "personal/recipes/Shakshuka.md" and "#recipe" in r[2]
            for r in rows(screen, "suggestions")
        )
        # every tab is titled with its count, and the totals give shares of all 43 notes
        assert screen.report is not None
        for tab_id, title in TABS:
            count = screen.report.totals()[tab_id]
            assert tab_label(screen, tab_id) == f"{title} {count}"
        totals = str(screen.query_one("#gaps-totals", Label).content)
        assert totals == totals_line(screen.report)
        assert totals.startswith("43 notes · orphans 1 (2.3%) · dead ends 1 (2.3%)")
        assert screen.query_one("#gaps-totals", Label).loading is False


@pytest.mark.asyncio
async def test_enter_on_a_row_opens_its_note(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        await pilot.press("enter")  # the first tab (orphans) has the focus
        assert recording.opened == ["personal/Gift Ideas.md"]
        await go_to_tab(pilot, screen, "wanted")
        await pilot.press("enter")  # Load Forecasting: to the first note that wants it
        assert recording.opened[-1] == "daily/2026-11-29.md"
        await go_to_tab(pilot, screen, "alias_fixable")
        await pilot.press("enter")
        assert recording.opened[-1] == MEETING
        await go_to_tab(pilot, screen, "isolated_clusters")
        await pilot.press("enter")
        assert recording.opened[-1] == "hobbies/Darkroom Chemistry.md"
        await go_to_tab(pilot, screen, "suggestions")
        table = screen.query_one("#gaps-table-suggestions", DataTable)
        await pilot.press("down")
        await pilot.press("enter")
        assert recording.opened[-1] == table.get_row_at(1)[0]  # a suggestion opens its source


@pytest.mark.asyncio
async def test_enter_opens_the_note_screen_in_the_real_app(app: VaultmemApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await open_gaps(pilot)
        await pilot.press("right_square_bracket", "enter")  # dead ends: Jonas Berg
        await settled(pilot)
        assert isinstance(app.screen, NoteScreen)
        assert app.screen.path == "work/people/Jonas Berg.md"


@pytest.mark.asyncio
async def test_tab_keys_wrap_around(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        tabs = screen.query_one(TabbedContent)
        await pilot.press("left_square_bracket")
        assert tabs.active == "gaps-expired"
        await pilot.press("right_square_bracket")
        assert tabs.active == "gaps-orphans"
        assert recording.focused is screen.query_one("#gaps-table-orphans", DataTable)


@pytest.mark.asyncio
async def test_the_alias_fix_shows_the_diff_then_rewrites_and_the_gap_goes(
    recording: RecordingApp,
) -> None:
    root = recording.vault.root
    before = (root / MEETING).read_text(encoding="utf-8")
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        await pilot.press("f")  # from the orphans tab: it goes to the alias links first
        await settled(pilot)
        assert screen.query_one(TabbedContent).active == "gaps-alias_fixable"
        modal = recording.screen
        assert isinstance(modal, DiffView)
        assert modal.heading == "Rewrite 1 alias link in 1 note?"
        assert f"--- a/{MEETING}" in modal.diff
        assert "\n-Short one. [[Priya]] walked" in modal.diff
        assert "\n+Short one. [[Priya Raman|Priya]] walked" in modal.diff
        assert (root / MEETING).read_text(encoding="utf-8") == before  # nothing yet
        await pilot.press("y")
        await settled(pilot)
        assert recording.screen is screen
        after = (root / MEETING).read_text(encoding="utf-8")
        assert after == before.replace("[[Priya]]", "[[Priya Raman|Priya]]", 1)
        # the app reindexed and the screen reloaded: the gap is gone
        assert tab_label(screen, "alias_fixable") == "Alias links 0"
        (empty,) = rows(screen, "alias_fixable")
        assert empty == ["No alias-fixable links: nothing to fix.", "", ""]
        assert "Priya" not in [r[0] for r in rows(screen, "wanted")]
        messages = [n.message for n in recording._notifications]
        assert "Fixed 1 link in 1 note." in messages
        await pilot.press("f")  # again: nothing left to fix
        await settled(pilot)
        assert recording.screen is screen
        assert "No alias-fixable links: nothing to fix." in [
            n.message for n in recording._notifications
        ]


@pytest.mark.asyncio
async def test_cancelling_the_alias_fix_writes_nothing(recording: RecordingApp) -> None:
    root = recording.vault.root
    before = (root / MEETING).read_bytes()
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        await go_to_tab(pilot, screen, "alias_fixable")
        await pilot.press("f")
        await settled(pilot)
        assert isinstance(recording.screen, DiffView)
        await pilot.press("escape")
        await settled(pilot)
        assert recording.screen is screen
        assert (root / MEETING).read_bytes() == before
        assert tab_label(screen, "alias_fixable") == "Alias links 1"
        assert "Nothing was written." in [n.message for n in recording._notifications]


@pytest.mark.asyncio
async def test_a_note_changed_since_the_reindex_is_refused(recording: RecordingApp) -> None:
    root = recording.vault.root
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        await go_to_tab(pilot, screen, "alias_fixable")
        edited = (root / MEETING).read_text(encoding="utf-8") + "\nA line typed in Obsidian.\n"
        (root / MEETING).write_text(edited, encoding="utf-8")
        await pilot.press("f")
        await settled(pilot)
        assert recording.screen is screen  # no diff offered
        (note,) = [n for n in recording._notifications if n.severity == "error"]
        assert note.message == (
            f"{MEETING} changed since the last reindex; run `vaultmem reindex` and try again"
        )
        assert (root / MEETING).read_text(encoding="utf-8") == edited


@pytest.mark.asyncio
async def test_a_note_changed_while_the_diff_is_shown_is_not_overwritten(
    recording: RecordingApp,
) -> None:
    root = recording.vault.root
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_gaps(pilot)
        await go_to_tab(pilot, screen, "alias_fixable")
        await pilot.press("f")
        await settled(pilot)
        assert isinstance(recording.screen, DiffView)
        edited = (root / MEETING).read_text(encoding="utf-8") + "\nEdited meanwhile.\n"
        (root / MEETING).write_text(edited, encoding="utf-8")
        await pilot.press("enter")
        await settled(pilot)
        assert (root / MEETING).read_text(encoding="utf-8") == edited
        errors = [n.message for n in recording._notifications if n.severity == "error"]
        assert len(errors) == 1
        assert "changed on disk since it was read; nothing was written" in errors[0]
        # nothing written, nothing reindexed: the alias link is still there to fix
        assert tab_label(screen, "alias_fixable") == "Alias links 1"


@pytest.mark.asyncio
async def test_a_latin_1_note_the_fix_cannot_be_written_in_is_a_message(
    vault_dir: Path,
) -> None:
    """Issue 15 defect 10: the TUI exited dumping the note's text. Now one message names the
    note and why, and the notes that can be fixed are offered."""
    (vault_dir / "latin.md").write_bytes("na\xefve [[Zed]]\n".encode("cp1252"))
    (vault_dir / "Ζήτα.md").write_text("---\naliases: [Zed]\n---\n", encoding="utf-8")
    app = RecordingApp(Vault(vault_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.vault.reindex(embed=False)
        screen = await open_gaps(pilot)
        await go_to_tab(pilot, screen, "alias_fixable")
        await pilot.press("f")
        await settled(pilot)
        errors = [n for n in app._notifications if n.severity == "error"]
        assert [n.title for n in errors] == ["not fixed: latin.md"]
        assert "Windows-1252" in errors[0].message and "na\xefve" not in errors[0].message
        assert isinstance(app.screen, DiffView)  # the sample's own alias link still offered
        assert "latin.md" not in app.screen.diff
    assert (vault_dir / "latin.md").read_bytes() == "na\xefve [[Zed]]\n".encode("cp1252")


@pytest.mark.asyncio
async def test_a_core_error_is_a_message_not_a_traceback(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        recording.vault.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(recording.vault.index_path) + suffix).unlink(missing_ok=True)
        screen = await open_gaps(pilot)
        assert screen.report is None
        errors = [n.message for n in recording._notifications if n.severity == "error"]
        assert errors and "vaultmem reindex" in errors[0]
        assert str(screen.query_one("#gaps-totals", Label).content) == errors[0]
        assert screen.query_one("#gaps-totals", Label).loading is False


@pytest.mark.asyncio
async def test_works_without_colour(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = RecordingApp(Vault(vault_dir))
    async with app.run_test(size=(40, 12)) as pilot:
        assert app.no_color
        screen = await open_gaps(pilot)
        await go_to_tab(pilot, screen, "alias_fixable")
        await pilot.press("f")
        await settled(pilot)
        assert isinstance(app.screen, DiffView)
        await pilot.press("n")
        await settled(pilot)
        assert app.screen is screen
        await pilot.press("enter")
        assert app.opened == [MEETING]


def test_the_diff_keeps_its_signs_so_it_reads_without_colour() -> None:
    text = diff_text("--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-old\n+new\n same\n")
    assert text.plain.splitlines() == [
        "--- a/x.md",
        "+++ b/x.md",
        "@@ -1 +1 @@",
        "-old",
        "+new",
        " same",
    ]
    styles = {text.plain[span.start : span.end].strip(): str(span.style) for span in text.spans}
    assert styles["-old"] == "red" and styles["+new"] == "green" and styles["@@ -1 +1 @@"] == "cyan"


class TestGapsScreenLooks:
    """Snapshots: the orphans tab, the alias tab at 40x12, and the diff modal."""

    @staticmethod
    def app(vault_dir: Path) -> RecordingApp:
        return RecordingApp(Vault(vault_dir))

    def test_orphans_tab(self, vault_dir: Path, snap_compare: Any) -> None:
        assert snap_compare(self.app(vault_dir), terminal_size=(80, 24), run_before=open_gaps)

    def test_alias_tab_narrow(self, vault_dir: Path, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[None]) -> None:
            screen = await open_gaps(pilot)
            await go_to_tab(pilot, screen, "alias_fixable")

        assert snap_compare(self.app(vault_dir), terminal_size=(40, 12), run_before=run_before)

    def test_diff_modal(self, vault_dir: Path, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[None]) -> None:
            screen = await open_gaps(pilot)
            await go_to_tab(pilot, screen, "alias_fixable")
            await pilot.press("f")
            await settled(pilot)

        assert snap_compare(self.app(vault_dir), terminal_size=(80, 24), run_before=run_before)
