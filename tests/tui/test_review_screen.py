"""The review screen through Pilot: captured items listed, accepted, rejected, edited, undone."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Label

from tests.tui.conftest import settle, type_text, wait_until
from vaultmem.tui.app import VaultmemApp
from vaultmem.tui.screens.review import Ask, ReviewScreen
from vaultmem.tui.widgets.diff_view import DiffView
from vaultmem.tui.widgets.row_table import RowTable
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
SAMPLE_CAPTURE = "inbox/2026-11-29 claude-code.md"  # the sample vault's, 3 items without ids
CHAT = (
    "Date: 2026-11-30\n"
    "Maya Chen: My employer is Tidepool now.\n"
    "Tom: Congrats!\n"
    "Maya Chen: I'll send the contract to Ana on Friday.\n"
    "Maya Chen: I love hiking in the Alps.\n"
)


def captured(vault_dir: Path, text: str = CHAT) -> Vault:
    vault = Vault(vault_dir)
    t = vault.captures.read_transcript(io.BytesIO(text.encode()), "chat")
    result = vault.captures.capture(t, source="call with Maya", now=NOW)
    assert result.status == "written"
    return vault


async def open_review(pilot: Pilot[None]) -> ReviewScreen:
    await pilot.press("f6")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen), "review screen")
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    await wait_until(pilot, lambda: screen.loaded, "the inbox read")
    return screen


def table_ids(screen: ReviewScreen) -> list[str]:
    table = screen.query_one("#review-table", RowTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def select(screen: ReviewScreen, item_id: str) -> None:
    table = screen.query_one("#review-table", RowTable)
    table.move_cursor(row=[r.item.id for r in screen.rows].index(item_id))


def item_id(screen: ReviewScreen, kind: str, key: str | None = None) -> str:
    return next(
        r.item.id
        for r in screen.rows
        if r.item.candidate.kind == kind and key in (None, r.item.candidate.key)
    )


@pytest.mark.asyncio
async def test_lists_pending_items_with_a_count_at_80x24_and_40x12(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    for size in ((80, 24), (40, 12)):
        app = VaultmemApp(vault, live=False)
        async with app.run_test(size=size) as pilot:
            screen = await open_review(pilot)
            status = str(screen.query_one("#review-status", Label).render())
            # the sample vault's own capture (3 items written by hand, without ids) and this one
            assert status.startswith(f"{len(screen.rows)} items to review in 2 captures")
            assert len(table_ids(screen)) == len(screen.rows) == 3 + 4
            assert [r.note.path for r in screen.rows[:3]] == [SAMPLE_CAPTURE] * 3
            select(screen, item_id(screen, "fact", "employer"))
            await settle(pilot)
            detail = str(screen.query_one("#review-detail").render())
            assert "turn" in detail and "inbox/2026-12-01 call with Maya.md" in detail


@pytest.mark.asyncio
async def test_accept_a_contradiction_after_its_diff_then_undo(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    maya = (vault_dir / "Maya Chen.md").read_text()
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        employer = item_id(screen, "fact", "employer")
        select(screen, employer)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffView), "the diff preview")
        diff = app.screen.diff  # type: ignore[attr-defined]
        assert "-- employer:: Heatwise GmbH ^f-0c32" in diff
        assert "+- employer:: Tidepool ^f-0c32" in diff and "+    - was:: Heatwise GmbH" in diff
        assert "+    - source:: capture 2026-12-01 call with Maya" in diff  # as it will write
        await pilot.press("y")
        await wait_until(pilot, lambda: employer not in table_ids(screen), "the row gone")
        text = (vault_dir / "Maya Chen.md").read_text()
        assert "- employer:: Tidepool ^f-0c32" in text and "was:: Heatwise GmbH" in text
        await pilot.press("u")
        await wait_until(pilot, lambda: employer in table_ids(screen), "the row back")
        assert (vault_dir / "Maya Chen.md").read_text() == maya


@pytest.mark.asyncio
async def test_declining_the_diff_writes_nothing(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    maya = (vault_dir / "Maya Chen.md").read_text()
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        select(screen, item_id(screen, "fact", "employer"))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffView), "the diff preview")
        await pilot.press("n")
        await settle(pilot)
        assert (vault_dir / "Maya Chen.md").read_text() == maya
        assert len(table_ids(screen)) == 3 + 4


@pytest.mark.asyncio
async def test_reject_and_edit_in_place(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        likes = item_id(screen, "fact", "likes")
        select(screen, likes)
        await pilot.press("r")
        await wait_until(pilot, lambda: likes not in table_ids(screen), "the rejected row gone")
        loop = item_id(screen, "loop")
        select(screen, loop)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, Ask), "the edit box")
        await pilot.press("ctrl+a", "ctrl+k")  # clear the line, then type the new value
        await type_text(pilot, "send the slides")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(r.item.candidate.value == "send the slides" for r in screen.rows),
            "the edited value",
        )
        note = (vault_dir / "inbox/2026-12-01 call with Maya.md").read_text()
        assert "loop:: send the slides" in note and "~~[[Maya Chen]] likes:: hiking" in note


@pytest.mark.asyncio
async def test_accept_all_above_a_confidence(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        above = {r.item.id for r in screen.rows if r.item.candidate.confidence >= 0.7}
        assert above and len(above) < len(screen.rows)
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, Ask), "the threshold box")
        await pilot.press("enter")  # the default, 0.7
        await wait_until(pilot, lambda: not (above & set(table_ids(screen))), "rows accepted")
        assert len(table_ids(screen)) == 3 + 4 - len(above)


@pytest.mark.asyncio
async def test_a_capture_note_deleted_while_shown(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        select(screen, item_id(screen, "fact", "likes"))
        (vault_dir / "inbox/2026-12-01 call with Maya.md").unlink()
        await pilot.press("r")
        await wait_until(
            pilot, lambda: {r.note.path for r in screen.rows} == {SAMPLE_CAPTURE}, "rows gone"
        )
        assert "- employer:: Heatwise GmbH ^f-0c32" in (vault_dir / "Maya Chen.md").read_text()


@pytest.mark.asyncio
async def test_an_empty_inbox_says_how_to_fill_it(vault_dir: Path) -> None:
    (vault_dir / SAMPLE_CAPTURE).unlink()
    app = VaultmemApp(Vault(vault_dir), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot)
        assert "nothing to review" in str(screen.query_one("#review-status", Label).render())
        await pilot.press("a", "r", "u")  # nothing highlighted: nothing happens
        await settle(pilot)


@pytest.mark.asyncio
async def test_an_item_edited_on_disk_while_shown_is_not_accepted_unseen(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    note = vault_dir / "inbox/2026-12-01 call with Maya.md"
    app = VaultmemApp(vault, live=False)  # no watcher: the screen still shows the old value
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        likes = item_id(screen, "fact", "likes")
        select(screen, likes)
        # half-edited in Obsidian meanwhile: the value changed, the next item cut off
        text = note.read_text().replace("hiking in the Alps", "skiing")
        note.write_text(text[: text.index("## Open loops")] + "## Open loops\n\n- [ ] [[Ma")
        await pilot.press("a")
        await wait_until(
            pilot,
            lambda: any(r.item.candidate.value == "skiing" for r in screen.rows),
            "the queue read again",
        )
        assert "likes" not in (vault_dir / "Maya Chen.md").read_text()  # nothing written
        assert "- [ ] [[Maya Chen]] likes:: skiing" in note.read_text()
        assert screen.last is None  # nothing to undo
        select(screen, likes)
        await pilot.press("a")  # now the person has seen it
        await wait_until(pilot, lambda: likes not in table_ids(screen), "accepted")
        assert "- likes:: skiing" in (vault_dir / "Maya Chen.md").read_text()


@pytest.mark.asyncio
async def test_coming_back_shows_what_changed_on_disk_meanwhile(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    note = vault_dir / "inbox/2026-12-01 call with Maya.md"
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        before = list(screen.rows)
        await pilot.press("f2")
        await settle(pilot)
        await open_review(pilot)
        await settle(pilot)
        assert screen.rows == before  # nothing changed: the same rows
        await pilot.press("f2")
        await settle(pilot)
        note.write_text(note.read_text().replace("hiking in the Alps", "skiing"))
        await open_review(pilot)
        await wait_until(
            pilot,
            lambda: "likes:: skiing" in " ".join(" ".join(r) for r in
                    screen.query_one("#review-table", RowTable).rows),
            "the new value in the table",
        )  # fmt: skip


@pytest.mark.asyncio
async def test_undo_after_the_app_started_again(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    note = vault_dir / "inbox/2026-12-01 call with Maya.md"
    before = note.read_text()
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        likes = item_id(screen, "fact", "likes")
        select(screen, likes)
        await pilot.press("r")
        await wait_until(pilot, lambda: likes not in table_ids(screen), "rejected")
    vault.close()
    app = VaultmemApp(Vault(vault_dir), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_review(pilot)
        assert likes not in table_ids(screen)
        await pilot.press("u")
        await wait_until(pilot, lambda: likes in table_ids(screen), "the row back")
        assert note.read_text() == before
        await pilot.press("u")  # nothing left to undo: said, nothing changes
        await settle(pilot)
        assert note.read_text() == before


@pytest.mark.asyncio
async def test_the_detail_line_says_the_whole_item_in_a_narrow_terminal(vault_dir: Path) -> None:
    vault = captured(vault_dir)
    app = VaultmemApp(vault, live=False)
    async with app.run_test(size=(40, 12)) as pilot:
        screen = await open_review(pilot)
        select(screen, item_id(screen, "loop"))
        await settle(pilot)
        detail = str(screen.query_one("#review-detail").render())
        assert detail.startswith("Maya Chen: send the contract to Ana (due 2026-12-04) · “")
