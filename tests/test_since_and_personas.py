"""`--since` goes by the notes' own dates (file times only with `--mtime`), and persona notes
stay out of ordinary search and of the gaps that ask for links unless asked for: the core, the
CLI (real processes, on a copy of the sample vault whose files are all new, as a fresh clone's
are) and the MCP search tool."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import SAMPLE_VAULT, MakeVault
from tests.test_cli import run
from vaultmem import persona
from vaultmem.dates import note_day, since_day
from vaultmem.gaps import gaps_report
from vaultmem.server import build_server
from vaultmem.vault import Vault

DAY = 86400
NOW = time.time()


def paths(result: Any) -> list[str]:
    return sorted(h.path for h in result.hits)


def test_note_day_is_the_date_property_else_a_date_in_the_path() -> None:
    assert note_day("notes/x.md", "2026-11-20T10:00:00+02:00") == dt.date(2026, 11, 20)
    assert note_day("daily/2026-11-29.md", None) == dt.date(2026, 11, 29)
    assert note_day("daily/2026-11-29.md", "2026-01-02") == dt.date(2026, 1, 2)  # property first
    assert note_day("journal/2026/11/notes.md", None) is None  # no whole date: undated
    assert note_day("x.md", "2026") is None
    assert note_day("x 2026-02-30.md", None) is None  # not a day


@pytest.fixture
def dated(make_vault: MakeVault) -> Vault:
    vault = make_vault(
        {
            "Old.md": "---\ndate: 2026-10-01\n---\n# Old\nthe boiler service\n",
            "New.md": "---\ncreated: 2026-11-26\n---\n# New\nthe boiler service\n",
            "daily/2026-11-27.md": "# Friday\nthe boiler service\n",
            "daily/2026-10-02.md": "# Old Friday\nthe boiler service\n",
            "Undated.md": "# Undated\nthe boiler service\n",
        }
    )
    for rel in ("Old.md", "New.md", "daily/2026-10-02.md"):
        os.utime(vault.root / rel, (NOW - 90 * DAY,) * 2)  # Undated and one daily note: fresh
    vault.reindex()
    return vault


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_since_keeps_notes_dated_on_or_after_the_day(dated: Vault, mode: str) -> None:
    since = dated.search("boiler service", mode=mode, since=dt.date(2026, 11, 26))  # type: ignore[arg-type]
    assert paths(since) == ["New.md", "daily/2026-11-27.md"]  # Undated is fresh, yet not dated
    assert "Undated.md" in paths(dated.search("boiler service", mode=mode))  # type: ignore[arg-type]


def test_mtime_compares_file_times_instead(dated: Vault) -> None:
    week_ago = (dt.datetime.fromtimestamp(NOW) - dt.timedelta(days=7)).date()
    result = dated.search("boiler service", since=week_ago, mtime=True)
    assert paths(result) == ["Undated.md", "daily/2026-11-27.md"]


# --------------------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample vault copied with new file times (as `git clone` or a sync makes them)."""
    root = tmp_path_factory.mktemp("fresh") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    for path in root.rglob("*"):
        os.utime(path)
    result = run("--vault", str(root), "reindex", env={"VAULTMEM_EMBEDDER": "fake"})
    assert result.returncode == 0, result.stderr
    return root


def cli_paths(root: Path, *args: str) -> list[str]:
    result = run("--vault", str(root), "search", *args, "--limit", "50", "--json")
    assert result.returncode == 0, result.stderr
    return sorted(r["path"] for r in json.loads(result.stdout)["results"])


def test_on_a_fresh_copy_undated_notes_do_not_pass_since(fresh_copy: Path) -> None:
    found = cli_paths(fresh_copy, "the", "--mode", "keyword", "--since", "2026-11-26")
    assert found and set(found) <= {
        "daily/2026-11-28.md",
        "daily/2026-11-29.md",
        "episodes/2026-11-26 Tariff sync outage.md",
        "inbox/2026-11-29 claude-code.md",
        "work/Scratch - tariff sync debugging.md",
    }
    assert "personal/Café Lumière.md" not in found  # no date at all, a new file time
    every = cli_paths(fresh_copy, "the", "--mode", "keyword", "--since", "2026-11-26", "--mtime")
    assert "personal/Café Lumière.md" in every and len(every) > len(found)


def test_mtime_without_since_is_a_usage_error(fresh_copy: Path) -> None:
    result = run("--vault", str(fresh_copy), "search", "tariff", "--mtime")
    assert result.returncode == 2
    assert "give --since DAY too" in result.stderr


def test_the_cli_leaves_personas_out_unless_asked(fresh_copy: Path) -> None:
    for mode in ("keyword", "hybrid"):
        plain = cli_paths(fresh_copy, "calm practical coach", "--mode", mode)
        assert not any(p.startswith("personas/") for p in plain), mode
        asked = cli_paths(fresh_copy, "calm practical coach", "--mode", mode, "--personas")
        assert "personas/health-coach.md" in asked, mode


def test_the_cli_leaves_expired_notes_out_unless_asked(fresh_copy: Path) -> None:
    """Issue 11 §6: the scratch note (`decay: session`, dated 2026-11-26) has expired."""
    scratch = "work/Scratch - tariff sync debugging.md"
    for mode in ("keyword", "hybrid"):
        plain = cli_paths(fresh_copy, "tariff sync debugging", "--mode", mode)
        assert plain and scratch not in plain, mode
        asked = cli_paths(fresh_copy, "tariff sync debugging", "--mode", mode, "--include-expired")
        assert scratch in asked, mode


def test_the_cli_says_how_many_expired_notes_it_left_out(fresh_copy: Path) -> None:
    """A person is told that notes were hidden and how to see them; `--json` has the count."""
    plain = run("--vault", str(fresh_copy), "search", "tariff sync debugging", "--mode", "keyword")
    assert plain.returncode == 0, plain.stderr
    assert (
        "note: 1 expired note hidden (past its decay tier's lifetime); --include-expired shows it"
    ) in plain.stderr.splitlines()
    data = json.loads(
        run("--vault", str(fresh_copy), "search", "tariff sync debugging", "--json").stdout
    )
    assert data["expired_hidden"] == 1
    asked = run(
        "--vault", str(fresh_copy), "search", "tariff sync debugging", "--include-expired", "--json"
    )
    assert json.loads(asked.stdout)["expired_hidden"] == 0
    assert "expired" not in asked.stderr
    none = run("--vault", str(fresh_copy), "search", "calm practical coach", "--json")
    assert json.loads(none.stdout)["expired_hidden"] == 0 and "expired" not in none.stderr


# --------------------------------------------------------------------------- personas


@pytest.fixture
def with_persona(make_vault: MakeVault) -> Vault:
    vault = make_vault(
        {
            "Boiler.md": "# Boiler\nThe boiler needs a service every autumn. See [[Radiators]].\n",
            "Radiators.md": "# Radiators\nBleed the radiators before winter.\n",
            "Lonely.md": "# Lonely\nA note nothing links to, about the boiler.\n",
        }
    )
    vault.reindex()
    persona.new_persona(vault, "home-helper", "helps with the boiler and the house")
    vault.reindex()
    return vault


def test_persona_notes_are_left_out_of_search_unless_asked(with_persona: Vault) -> None:
    for mode in ("keyword", "hybrid", "semantic"):
        plain = with_persona.search("boiler house helper", mode=mode)  # type: ignore[arg-type]
        assert "personas/home-helper.md" not in paths(plain), mode
        asked = with_persona.search("boiler house helper", mode=mode, personas=True)  # type: ignore[arg-type]
        assert "personas/home-helper.md" in paths(asked), mode


def test_a_new_persona_is_no_orphan_and_no_link_to_suggest(with_persona: Vault) -> None:
    report = gaps_report(with_persona)
    assert report.orphans == ("Lonely.md",)
    everywhere = {*report.weakly_linked, *report.dead_ends}
    everywhere |= {s.source for s in report.suggestions} | {s.target for s in report.suggestions}
    assert "personas/home-helper.md" not in everywhere
    assert report.notes == 4  # still counted as a note of the vault


# --------------------------------------------------------------------------- MCP


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(fresh_copy: Path) -> AsyncIterator[Client]:
    vault = Vault(fresh_copy)
    vault.embedder_spec = "fake"
    async with Client(build_server(vault)) as connected:
        yield connected


async def call(client: Client, **arguments: Any) -> list[str]:
    result = await client.call_tool("search", {"mode": "keyword", "limit": 50, **arguments})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return sorted(r["path"] for r in result.structured_content["results"])


@pytest.mark.anyio
async def test_mcp_search_takes_since_in_words_mtime_and_personas(client: Client) -> None:
    by_date = await call(client, query="the", since="2026-11-26")
    assert by_date and "personal/Café Lumière.md" not in by_date
    by_file = await call(client, query="the", since="2026-11-26", mtime=True)
    assert "personal/Café Lumière.md" in by_file
    words = await call(client, query="the", since="last week")
    last_week = since_day("last week", dt.date.today())
    assert words == await call(client, query="the", since=str(last_week))
    assert "personas/health-coach.md" not in await call(client, query="calm practical coach")
    assert "personas/health-coach.md" in await call(
        client, query="calm practical coach", personas=True
    )
    bad = await client.call_tool("search", {"query": "x", "since": "someday"})
    assert bad.is_error and "give a day as YYYY-MM-DD" in str(bad.content)
