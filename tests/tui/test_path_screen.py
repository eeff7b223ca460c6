"""The path screen through Pilot: fuzzy pickers, the path hop by hop, no path, swap, opening."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, OptionList, Static

from tests.tui.conftest import settle, type_text
from tests.tui.test_gaps_screen import RecordingApp
from vaultmem.tui.screens.path import PathScreen
from vaultmem.tui.widgets.note_picker import NotePicker
from vaultmem.vault import Vault

SHAKSHUKA = "personal/recipes/Shakshuka.md"
JONAS = "work/people/Jonas Berg.md"


@pytest.fixture
def recording(vault_dir: Path) -> RecordingApp:
    return RecordingApp(Vault(vault_dir))


async def open_path(pilot: Pilot[None]) -> PathScreen:
    screen = PathScreen()
    await pilot.app.push_screen(screen)
    await settle(pilot)
    for field in screen.query(Input):
        field.cursor_blink = False  # snapshots must not catch the cursor half-way
    return screen


async def pick(pilot: Pilot[None], text: str) -> None:
    """Type into the focused picker, let the ranking arrive, and press Enter."""
    await type_text(pilot, text)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)


def picker(screen: PathScreen, which: str) -> NotePicker:
    return screen.query_one(f"#{which}", NotePicker)


def dropdown(screen: PathScreen, which: str) -> list[str]:
    options = picker(screen, which).query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def hop_lines(screen: PathScreen) -> list[str]:
    hops = screen.query_one("#path-hops", OptionList)
    return [str(hops.get_option_at_index(i).prompt) for i in range(hops.option_count)]


def status(screen: PathScreen) -> str:
    return str(screen.query_one("#status", Label).content)


@pytest.mark.asyncio
async def test_the_path_between_two_notes_hop_by_hop(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "shaksuka")  # a letter short
        assert picker(screen, "from").key == SHAKSHUKA
        assert recording.focused is picker(screen, "to").input  # on to the other end
        await pick(pilot, "jonas")
        assert screen.ends() == (SHAKSHUKA, JONAS)
        assert hop_lines(screen) == [
            "Shakshuka  personal/recipes/Shakshuka.md",
            "  -->links_to  Weekly Meal Plan  personal/recipes/Weekly Meal Plan.md",
            "  <--links_to  Maya Chen",
            "  -->links_to  Heatwise  work/Heatwise.md",
            "  -->links_to  Jonas Berg  work/people/Jonas Berg.md",
        ]
        assert status(screen) == "4 hops · enter opens a note"
        assert recording.focused is screen.query_one("#path-hops", OptionList)


@pytest.mark.asyncio
async def test_typed_relations_show_their_name_and_direction(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "tariff optimizer")
        await pick(pilot, "installer portal")
        assert hop_lines(screen) == [
            "Tariff Optimizer  work/projects/Tariff Optimizer.md",
            "  <--depends_on  Installer Portal  work/projects/Installer Portal.md",
        ]
        assert status(screen) == "1 hop · enter opens a note"


@pytest.mark.asyncio
async def test_fuzzy_completion_from_an_abbreviation_or_a_typo(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await type_text(pilot, "hg")
        await settle(pilot)
        assert picker(screen, "from").has_class("-open")
        assert dropdown(screen, "from")[:2] == [
            "Heatwise GmbH  work/Heatwise.md",  # an alias of work/Heatwise.md
            "Heatwise Gateway  work/projects/Heatwise Gateway.md",
        ]
        await type_text(pilot, "w")
        await settle(pilot)
        assert dropdown(screen, "from")[0] == "Heatwise Gateway  work/projects/Heatwise Gateway.md"
        await pilot.press("backspace", "backspace", "backspace")
        await type_text(pilot, "Shakshuak")  # two letters swapped
        await settle(pilot)
        assert dropdown(screen, "from") == ["Shakshuka  personal/recipes/Shakshuka.md"]
        await pilot.press("enter")
        assert picker(screen, "from").key == SHAKSHUKA
        assert picker(screen, "from").value == "Shakshuka"
        assert not picker(screen, "from").has_class("-open")


@pytest.mark.asyncio
async def test_arrows_choose_among_the_matches(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await type_text(pilot, "meeting notes")
        await settle(pilot)
        matches = picker(screen, "from").matches
        assert {m.key for m in matches[:2]} == {
            "work/Meeting notes.md",
            "personal/home/Meeting notes.md",
        }
        await pilot.press("down", "down", "up")
        await pilot.press("enter")
        assert picker(screen, "from").key == matches[1].key


@pytest.mark.asyncio
async def test_an_alias_picks_its_note(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "Maya")
        await pick(pilot, "M. Chen")
        assert screen.ends() == ("Maya Chen.md", "Maya Chen.md")
        assert hop_lines(screen) == ["Maya Chen"]
        assert status(screen) == "the same note"


@pytest.mark.asyncio
async def test_enter_on_a_hop_opens_that_note(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        await open_path(pilot)
        await pick(pilot, "shakshuka")
        await pick(pilot, "jonas berg")
        await pilot.press("down", "down", "enter")
        assert recording.opened == ["Maya Chen.md"]
        await pilot.press("end", "enter")
        assert recording.opened[-1] == JONAS


@pytest.mark.asyncio
async def test_swap_reverses_the_path(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "shakshuka")
        await pick(pilot, "jonas berg")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.ends() == (JONAS, SHAKSHUKA)
        assert (picker(screen, "from").value, picker(screen, "to").value) == (
            "Jonas Berg",
            "Shakshuka",
        )
        assert hop_lines(screen) == [
            "Jonas Berg  work/people/Jonas Berg.md",  # as `vaultmem graph path` finds it
            "  <--links_to  Heatwise  work/Heatwise.md",
            "  -->links_to  Maya Chen",
            "  -->links_to  Weekly Meal Plan  personal/recipes/Weekly Meal Plan.md",
            "  -->links_to  Shakshuka  personal/recipes/Shakshuka.md",
        ]


@pytest.mark.asyncio
async def test_no_path_says_how_connected_each_end_is(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "gift ideas")
        await pick(pilot, "maya chen")
        assert hop_lines(screen) == []
        assert not screen.query_one("#path-hops", OptionList).display
        assert str(screen.query_one("#path-why", Static).content).splitlines() == [
            "No path from Gift Ideas to Maya Chen within 5 hops.",
            "Gift Ideas: 0 linked notes, in a group of 1.",
            "Maya Chen: 14 linked notes, in a group of 46.",
            "They are in separate groups: no chain of links joins them.",
        ]
        assert status(screen) == "no path"


@pytest.mark.asyncio
async def test_text_that_names_no_note_is_explained(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "qqqq")
        assert picker(screen, "from").key is None
        (note,) = recording._notifications
        assert note.message.startswith("no note named 'qqqq'")
        assert recording.focused is picker(screen, "from").input


@pytest.mark.asyncio
async def test_editing_a_picked_name_unpicks_it_and_escape_closes_the_list(
    recording: RecordingApp,
) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "shakshuka")
        await pilot.press("shift+tab")  # back to "from": its text is selected
        await type_text(pilot, "miso")  # and typing replaces it
        await settle(pilot)
        assert picker(screen, "from").value == "miso"
        assert picker(screen, "from").key is None
        assert picker(screen, "from").has_class("-open")
        assert picker(screen, "from").matches[0].key == "personal/recipes/Miso Soup.md"
        await pilot.press("escape")
        assert not picker(screen, "from").has_class("-open")
        assert recording.screen is screen


@pytest.mark.asyncio
async def test_clear_starts_again(recording: RecordingApp) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "shakshuka")
        await pick(pilot, "jonas")
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert screen.ends() == (None, None)
        assert hop_lines(screen) == []
        assert recording.focused is picker(screen, "from").input


class TestPathScreenLooks:
    """Snapshots: a path at 80x24, the dropdown open, and no path at 40x12."""

    @staticmethod
    def app(vault_dir: Path) -> RecordingApp:
        return RecordingApp(Vault(vault_dir))

    def test_path_found(self, vault_dir: Path, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[None]) -> None:
            await open_path(pilot)
            await pick(pilot, "shakshuka")
            await pick(pilot, "jonas")

        assert snap_compare(self.app(vault_dir), terminal_size=(80, 24), run_before=run_before)

    def test_dropdown_open(self, vault_dir: Path, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[None]) -> None:
            await open_path(pilot)
            await type_text(pilot, "tso")
            await settle(pilot)

        assert snap_compare(self.app(vault_dir), terminal_size=(80, 24), run_before=run_before)

    def test_no_path_narrow(self, vault_dir: Path, snap_compare: Any) -> None:
        async def run_before(pilot: Pilot[None]) -> None:
            await open_path(pilot)
            await pick(pilot, "film")
            await pick(pilot, "shakshuka")

        assert snap_compare(self.app(vault_dir), terminal_size=(40, 12), run_before=run_before)


@pytest.mark.asyncio
async def test_a_wanted_note_is_an_end_too_but_has_no_file_to_open(
    recording: RecordingApp,
) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "tariff optimizer")
        await pick(pilot, "Load Forecasting")  # no note has that name: the core resolves it
        assert screen.ends() == ("work/projects/Tariff Optimizer.md", "wanted:load forecasting")
        assert hop_lines(screen) == [
            "Tariff Optimizer  work/projects/Tariff Optimizer.md",
            "  -->links_to  Load Forecasting (wanted: not written yet)",
        ]
        await pilot.press("down", "enter")
        assert recording.opened == []
        assert [n.message for n in recording._notifications] == [
            "Load Forecasting is a wanted note: no file yet"
        ]


@pytest.mark.asyncio
async def test_a_picked_note_deleted_on_disk_is_reported_after_the_reindex(
    recording: RecordingApp,
) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await pick(pilot, "shakshuka")
        await pick(pilot, "jonas")
        (recording.vault.root / SHAKSHUKA).unlink()
        recording.reindex()
        await settle(pilot)
        await settle(pilot)
        assert recording.screen is screen
        errors = [n.message for n in recording._notifications if n.severity == "error"]
        assert errors == ["a picked note is gone from the index: pick it again"]
        await pilot.press("ctrl+l")
        await pick(pilot, "weekly meal plan")
        await pick(pilot, "jonas")
        assert len(hop_lines(screen)) == 4  # the rest of the vault still answers


@pytest.mark.asyncio
async def test_enter_before_the_matches_arrive_picks_from_what_was_typed(
    recording: RecordingApp,
) -> None:
    async with recording.run_test(size=(80, 24)) as pilot:
        screen = await open_path(pilot)
        await type_text(pilot, "Maya")  # an alias, so the pick shows the text as typed
        await pilot.press("enter")  # no wait: the ranking threads may still be running
        await settle(pilot)
        assert picker(screen, "from").key == "Maya Chen.md"
        assert picker(screen, "from").value == "Maya"
        # a ranking that finished after the pick must not reopen the list
        assert not picker(screen, "from").has_class("-open")
