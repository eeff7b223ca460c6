"""docs/walkthrough.md replayed: a newcomer's first hour, step by step, as the README tells it.

The installed `vaultmem` command (the test environment's console script) runs in subprocesses,
inside the folders as a person would (no --vault), on a copy of sample-vault (an Obsidian vault)
and on a plain folder of markdown with no .obsidian. The default embedder (`auto`: MiniLM when
its package is installed, else the bundled model) is used: no VAULTMEM_* variable is set. The
terminal app runs in tmux when tmux is there; the MCP step starts the server with the README's
configuration through the MCP SDK's stdio client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import ROOT, SAMPLE_VAULT, write_files
from tests.test_server import TOOLS
from vaultmem.encoder import find_minilm

VAULTMEM = Path(sys.executable).parent / "vaultmem"  # what `which vaultmem` prints
pytestmark = pytest.mark.skipif(
    not VAULTMEM.exists(), reason=f"no installed vaultmem command at {VAULTMEM}"
)

PLAIN_NOTES = {
    "Heat pump.md": "# Heat pump\n\nThe heat pump runs at night on the cheap tariff.\n\n"
    "## Sizing\n\n8 kW for the whole house, see [[Insulation]].\n",
    "Insulation.md": "# Insulation\n\nThe loft got 300 mm of wool last week.\n",
    "meetings/2026-11-20 Team.md": "# Team meeting\n\nWe talked about the heat pump.\n",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, home: Path) -> dict[str, Path]:
    """Two folders of notes, as a newcomer has them: an Obsidian vault and plain markdown."""
    base = home / "Notes"
    obsidian = base / "obsidian"
    shutil.copytree(SAMPLE_VAULT, obsidian, ignore=shutil.ignore_patterns(".vaultmem"))
    plain = base / "plain"
    write_files(plain, PLAIN_NOTES)
    assert not (plain / ".obsidian").exists()
    return {"obsidian": obsidian, "plain": plain}


def env(home: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    return clean | {"HOME": str(home)}


def vaultmem(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VAULTMEM), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env(home),
        timeout=600,
    )


def test_1_install(home: Path) -> None:
    version = vaultmem("--version", cwd=home, home=home)
    assert version.returncode == 0 and version.stdout.startswith("vaultmem, version ")
    start = vaultmem("--help", cwd=home, home=home).stdout
    assert "Start inside the folder that holds your notes" in start
    assert start.index("vaultmem init") < start.index("vaultmem search")


def test_1_the_help_tells_what_the_readme_tells(home: Path) -> None:
    """`mcp --help` named 8 tools, "All read-only", while the server has 19 and four write;
    `--help` left out the `minilm` embedder the README recommends for small vaults."""
    mcp = vaultmem("mcp", "--help", cwd=home, home=home).stdout
    assert "All read-only" not in mcp
    assert all(tool in mcp for tool in TOOLS), sorted(t for t in TOOLS if t not in mcp)
    assert "minilm" in vaultmem("--help", cwd=home, home=home).stdout


@pytest.mark.parametrize("kind", ["obsidian", "plain"])
def test_2_index_your_own_folder(folders: dict[str, Path], home: Path, kind: str) -> None:
    folder = folders[kind]
    done = vaultmem("init", cwd=folder, home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"created {folder}/.vaultmem/config.toml")
    # the default, `auto`: all-MiniLM-L6-v2 for a vault this small when its package is
    # installed, else the bundled wordllama with a note saying what to install
    model = "minilm" if find_minilm() is not None else "wordllama"
    assert lines[1].startswith("indexed ") and f"({model}:" in lines[1]
    assert (model == "minilm") == ("vaultmem[minilm]" not in done.stderr)
    assert lines[2].startswith(f"index: {folder}/.vaultmem/index.db (")
    assert lines[3].startswith("next: `vaultmem search WORDS`")
    assert (folder / ".vaultmem" / ".gitignore").is_file()
    # a misspelt key is named, with the closest one
    config = folder / ".vaultmem" / "config.toml"
    config.write_text(config.read_text() + '\npersona_folder = "agents"\n')
    warned = vaultmem("stats", cwd=folder, home=home)
    assert "did you mean `personas_folder`?" in warned.stderr
    config.write_text(config.read_text().replace('persona_folder = "agents"\n', ""))


def test_3_search_it(folders: dict[str, Path], home: Path) -> None:
    plain = folders["plain"]
    found = vaultmem("search", "heat pump", cwd=plain, home=home)
    assert found.returncode == 0, found.stderr
    assert "Heat pump.md:" in found.stdout
    data = json.loads(vaultmem("search", "heat pump", "--json", cwd=plain, home=home).stdout)
    assert data["mode"] == "hybrid" and data["notices"] == []
    assert {r["path"] for r in data["results"]} >= {"Heat pump.md", "meetings/2026-11-20 Team.md"}
    empty = vaultmem("search", "", cwd=plain, home=home)
    assert empty.returncode == 2 and "empty query" in empty.stderr
    since = vaultmem("search", "loft", "--since", "last week", "--json", cwd=plain, home=home)
    assert since.returncode == 0, since.stderr
    section = vaultmem("get", "heat pump#sizing", cwd=plain, home=home)
    assert section.stdout == "## Sizing\n\n8 kW for the whole house, see [[Insulation]].\n"
    obsidian = folders["obsidian"]
    note = vaultmem("get", "Heat pump COP math", cwd=obsidian, home=home)
    assert note.stdout == (obsidian / "work/Heat pump COP math.md").read_text(encoding="utf-8")
    # an edit, then a reindex that takes no time, then the edit is found
    write_files(plain, {"Solar.md": "# Solar\n\nPanels on the garage roof.\n"})
    again = vaultmem("reindex", cwd=plain, home=home)
    assert again.returncode == 0 and "1 changed" in again.stdout
    assert "Solar.md" in vaultmem("search", "garage roof panels", cwd=plain, home=home).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_4_the_terminal_app_without_a_surprise(folders: dict[str, Path], home: Path) -> None:
    from tests.tui.test_tmux import EXITED, Terminal

    plain = folders["plain"]
    term = Terminal(
        ["sh", "-c", f"cd {plain} && exec {VAULTMEM}"],  # `vaultmem` alone, in the folder
        {"TERM": "xterm-256color", "PATH": os.environ["PATH"], "HOME": str(home)},
    )
    try:
        term.wait_for("Search the vault", "index: ")
        term.send("-l", "heat pump")
        term.wait_for("Heat pump.md")
        term.send("Down")
        term.send("Enter")
        term.wait_for("Heat pump  ·", "Links (")
        term.send("Escape")
        term.wait_for("^f Filters")
        term.send("-l", "templates")
        shown = term.wait_for("templates", "^f Filters")
        first = next(line for line in shown.splitlines() if line.strip())
        assert "templates" in first and "heat pump" not in first
        term.send("F1")
        term.wait_for("On the search screen", "Everywhere")
        term.send("Escape")
        term.wait_for("^f Filters")
        term.send("C-q")
        assert f"{EXITED} 0" in term.wait_for(EXITED)
    finally:
        term.close()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_5_connect_an_mcp_client(folders: dict[str, Path], home: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '"args": ["--vault", "/home/me/Notes", "mcp"]' in readme  # the configuration used
    plain = folders["plain"]
    params = StdioServerParameters(
        command=str(VAULTMEM), args=["--vault", str(plain), "mcp"], env=env(home), cwd=str(home)
    )
    with open(home / "mcp-stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == TOOLS  # as the README lists them
            assert all(f"`{tool}`" in readme for tool in TOOLS)
            answer = await client.call_tool("search", {"query": "heat pump"})
            assert not answer.is_error and answer.structured_content is not None
            by_cli = json.loads(
                vaultmem("search", "heat pump", "--json", cwd=plain, home=home).stdout
            )
            assert [r["path"] for r in answer.structured_content["results"]] == [
                r["path"] for r in by_cli["results"]
            ]
            section = await client.call_tool("read_note", {"ref": "Heat pump", "heading": "Sizing"})
            assert not section.is_error
            assert (
                section.content[1].text
                == "## Sizing\n\n8 kW for the whole house, see [[Insulation]]."
            )  # type: ignore[union-attr]
            # an agent remembers: a fact stored with the revision it read, refused on a stale
            # one, then recalled when the conversation comes back to the note
            digest = section.structured_content["digest"]  # type: ignore[index]
            stored = await client.call_tool(
                "store_fact",
                {"entity": "Heat pump", "key": "installer", "value": "Nordwärme", "digest": digest},
            )
            assert not stored.is_error and stored.structured_content is not None
            assert stored.structured_content["status"] == "added"
            assert stored.structured_content["path"] == "Heat pump.md"
            assert "installer:: Nordwärme" in (plain / "Heat pump.md").read_text(encoding="utf-8")
            stale = await client.call_tool(
                "store_fact",
                {"entity": "Heat pump", "key": "installer", "value": "other", "digest": digest},
            )
            assert stale.is_error and "changed since you read it" in stale.content[0].text  # type: ignore[union-attr]
            recalled = await client.call_tool(
                "recall", {"message": "where did we leave off with the heat pump?"}
            )
            assert not recalled.is_error and recalled.structured_content is not None
            assert recalled.structured_content["continuation"] is True
            assert "installer = Nordwärme" in recalled.content[0].text  # type: ignore[union-attr]
